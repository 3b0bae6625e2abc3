"""Where in the user's code we are: the innermost frame outside the omnistage package.

Every staged statement and every error message carries one of these, so generated code
and errors point at the user's file and line, not at omnistage internals.
"""
import linecache
import os
import sys

from .thread_local import ThreadLocalStack

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class SourceLoc:
    """A user file, line and function name; `text` is the source line."""

    __slots__ = ("file", "line", "function", "frame_id")

    def __init__(self, file, line, function, frame_id=0):
        self.file, self.line, self.function, self.frame_id = file, line, function, frame_id

    @property
    def text(self):
        return linecache.getline(self.file, self.line).strip()

    @property
    def site(self):
        """`file:line` as provenance comments show it (`In[3]:2` for a notebook cell)."""
        return f"{file_label(self.file)}:{self.line}"

    @property
    def short(self):
        return self.site

    def describe(self):
        text = self.text
        cell = cell_name(self.file)
        if cell is not None:  # named as IPython's tracebacks name it
            where = f"  Cell {cell}, line {self.line}, in {self.function}"
        else:
            where = f'  File "{self.file}", line {self.line}, in {self.function}'
        return where + (f"\n    {text}" if text else "")

    def __eq__(self, other):
        return isinstance(other, SourceLoc) and (self.file, self.line) == (other.file, other.line)

    def __hash__(self):
        return hash((self.file, self.line))

    def __repr__(self):
        return f"SourceLoc({self.short}, in {self.function})"


def cell_name(filename):
    """`In[7]` when `filename` is Jupyter's cell 7, else None. ipykernel compiles each cell
    from a temporary file named like `1071896056.py`, meaningless to the reader; IPython keeps
    the map, and is asked only if already loaded."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    compiler = getattr(shell, "compile", None)
    if compiler is None or not hasattr(compiler, "format_code_name"):
        return None
    named = compiler.format_code_name(filename)
    return None if named is None else named[1]


def file_label(filename):
    """How provenance comments name `filename`: its base name, or `In[7]` for a notebook cell."""
    return cell_name(filename) or os.path.basename(filename)


def file_path(filename):
    """How messages name `filename`: the whole path, or `In[7]` for a notebook cell."""
    return cell_name(filename) or filename


# Files inside the package that are user-level code (the guided tour), not library code.
_USER_FILES_IN_PKG = {_PKG_DIR + "__main__.py"}


def is_internal_file(filename):
    return filename.startswith(_PKG_DIR) and filename not in _USER_FILES_IN_PKG


class DerivedLoc(SourceLoc):
    """The location of a statement a pass derived from a user statement: the primal
    statement's file and line plus the pass (`role`: 'jvp', 'vjp', 'vmap', ...)."""

    __slots__ = ("role",)

    def __init__(self, base, role):
        super().__init__(base.file, base.line, base.function, base.frame_id)
        inner = getattr(base, "role", None)
        self.role = role if inner is None else f"{role} of {inner}"

    @property
    def short(self):
        return f"{self.site} ({self.role})"

    def __repr__(self):
        return f"DerivedLoc({self.short}, in {self.function})"


# While a pass replays a statement, the statements it stages take that statement's
# location (not the pass's caller's), so derived programs point at the user's lines.
# Per thread: a pass in one thread must not relocate another thread's statements.
_override = ThreadLocalStack()


class located:
    """`with located(loc, role):` stages everything inside at `loc` (derived with `role` when
    given); None: no change. A class, not a generator context manager: passes enter one per
    statement they replay (two per eagerly vmapped statement), and a generator's setup was
    most of the cost."""

    __slots__ = ("_loc",)

    def __init__(self, loc, role=None):
        self._loc = None if loc is None else DerivedLoc(loc, role) if role else loc

    def __enter__(self):
        if self._loc is not None:
            _override.items.append(self._loc)

    def __exit__(self, *exc):
        if self._loc is not None:
            _override.items.pop()
        return False


def user_loc(skip_internal=True):
    """The SourceLoc of the innermost frame that is user code, or None."""
    override = _override.items
    if override:
        return override[-1]
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        # is_internal_file inlined: every staged statement walks ~8 frames of ours
        internal = skip_internal and filename.startswith(_PKG_DIR) and filename not in _USER_FILES_IN_PKG
        if not internal and not filename.startswith("<frozen"):
            return SourceLoc(filename, frame.f_lineno, frame.f_code.co_name, id(frame))
        frame = frame.f_back
    return None


def describe_here(prefix="The error occurred at this line of your code:"):
    loc = user_loc()
    return None if loc is None else f"{prefix}\n{loc.describe()}"


def describe_traceback(tb, prefix="The error occurred at this line of your code:"):
    """Where in user code an exception was raised: the innermost user frame of `tb`."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not is_internal_file(code.co_filename) and not code.co_filename.startswith("<frozen"):
            found = SourceLoc(code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return None if found is None else f"{prefix}\n{found.describe()}"
