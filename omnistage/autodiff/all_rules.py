"""Imports every rule module, filling `rules.JVP`/`rules.VJP` (one line per module)."""
from . import elementwise_rules  # noqa: F401
from . import structural_rules  # noqa: F401
from . import control_flow_rules  # noqa: F401
from . import reduction_rules  # noqa: F401
from . import shape_rules  # noqa: F401
from . import custom  # noqa: F401
from . import indexing_rules  # noqa: F401
from . import sorting_rules  # noqa: F401
from . import linalg_rules  # noqa: F401
from . import convolution_rules  # noqa: F401
from . import parallel_rules  # noqa: F401
from . import fft_rules  # noqa: F401
from . import window_chooser_rules  # noqa: F401
from . import callback_rules  # noqa: F401
