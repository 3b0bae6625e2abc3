"""Imports every batching rule module, filling `rules.BATCH` (one line per module)."""
from . import elementwise_rules  # noqa: F401
from . import structural_rules  # noqa: F401
from . import indexing_rules  # noqa: F401
from . import linalg_rules  # noqa: F401
from . import control_flow_rules  # noqa: F401
from . import collective_rules  # noqa: F401
from . import ppermute_rules  # noqa: F401
from . import custom_rules  # noqa: F401
from . import debug_rules  # noqa: F401
from . import fft_rules  # noqa: F401
from . import callback_rules  # noqa: F401
from . import window_chooser_rules  # noqa: F401
