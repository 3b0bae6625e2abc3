"""Errors of the differentiation passes, located at the user's line."""
import ast

from ..core.errors import add_location


def missing_rule(kind, e):
    """A NotImplementedError naming the primitive and the user's statement that bound it."""
    loc = getattr(e.stmt, "loc", None)
    where = None if loc is None else f"The primitive was staged at this line of your code:\n{loc.describe()}"
    err = NotImplementedError(
        f"Differentiation rule for '{e.prim}' not implemented ({kind}): "
        f"`{ast.unparse(e.stmt)}` cannot be differentiated"
    )
    return add_location(err, where) if where else err
