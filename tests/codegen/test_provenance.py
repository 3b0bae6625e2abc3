"""Provenance comments (omnistage/codegen/provenance.py) are for reading, not identity."""
import numpy as np

import omnistage
from omnistage.codegen import aot, provenance
from omnistage.core.source_info import SourceLoc


def test_strip_removes_exactly_the_file_line_comments():
    text = ("    y = _rt.empty((3,), np.float32)  # user file.py:12\n"
            "    z = _rt.empty((3,), np.float32)  # model.py:7  # one row\n"
            "    np.dot(a, b, c)  # BLAS\n"
            "    s = 'ratio  # 1:2'\n")
    assert provenance.strip(text) == ("    y = _rt.empty((3,), np.float32)\n"
                                      "    z = _rt.empty((3,), np.float32)  # one row\n"
                                      "    np.dot(a, b, c)  # BLAS\n"
                                      "    s = 'ratio  # 1:2'\n")


def test_loc_comment_names_the_file_and_line():
    class Stmt:
        loc = SourceLoc("/home/me/project/model.py", 41, "loss")

    assert provenance.loc_comment(Stmt()) == "  # model.py:41"
    assert provenance.loc_comment(object()) == ""


def moved(program, file, shift):
    """`program` with every statement's location in `file`, `shift` lines further down."""
    import ast

    for node in ast.walk(program.fn):
        loc = getattr(node, "loc", None)
        if loc is not None:
            node.loc = SourceLoc(file, loc.line + shift, loc.function)
    return program


def test_library_key_does_not_depend_on_file_names_or_line_numbers():
    def f(x):
        return omnistage.numpy.sin(x) * 2.0

    x = np.ones(3, np.float32)
    program = omnistage.jit(f).lower(x).program
    key = aot.program_key(program)
    other = moved(omnistage.jit(f).lower(x).program, "/elsewhere/renamed.py", 3)
    assert str(other) != str(program) and aot.program_key(other) == key
    assert aot.program_key(omnistage.jit(lambda x: omnistage.numpy.cos(x) * 2.0).lower(x).program) != key
