"""Provenance comments in generated source: the user's `file:line` each statement came from.

They are for the person reading generated code (`Compiled.as_text()`), never part of a compiled
program's identity: the disk cache names, stores and runs a module's text with them stripped,
so adding a comment line above a function (which moves every line number) or renaming its file
reuses the compiled module. Emitters write them with `loc_comment` and nothing else, so
`strip` can recognise them exactly: two spaces, `# `, a file's base name (`In[3]` for a
notebook cell), `:`, a line number, then the end of the line or another comment.

Imports only the standard library (the disk cache imports it before Numba).
"""
import re

# `  # name.py:12` ending a line or followed by another comment (`  # one row`)
_LOC = re.compile(r"  # [^#\n]*?:\d+(?=  #|$)", re.M)


def loc_comment(stmt):
    """The trailing comment pointing at the user's line of `stmt` ('' when it has none)."""
    loc = getattr(stmt, "loc", None)
    return f"  # {loc.site}" if loc is not None else ""  # SourceLoc.site: In[3]:2 in a notebook


def strip(source):
    """`source` without its provenance comments: the text that identifies a module."""
    return _LOC.sub("", source)
