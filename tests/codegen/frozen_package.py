"""A copy of the omnistage package, taken once per test module, for the fresh processes the
cache tests start. Children import it (PYTHONPATH) and run in its directory (`python -c` puts
the working directory first on sys.path, so the repository root would shadow it): an edit of
a runtime module while the tests run would otherwise rename generated modules and restamp
cache entries between one child and the next."""
import os
import shutil

import omnistage


def freeze(tmp_path_factory):
    """The directory holding the copy (use it as the children's PYTHONPATH and cwd)."""
    root = tmp_path_factory.mktemp("frozen")
    shutil.copytree(os.path.dirname(omnistage.__file__), root / "omnistage",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(root)
