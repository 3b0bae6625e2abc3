"""`make_jaxpr` and the `Program`: printed source is runnable Python that computes what the
function computes, statements point at the user's lines, `check()` catches ill-typed
programs, omnistaging stages every jnp/lax call, and names come from the user's variables."""
import ast
import copy
import inspect
import os
import re

import numpy as np
import pytest

import omnistage
import omnistage.numpy as jnp
from omnistage import lax
from omnistage.staging import Program
from omnistage.staging.program import HEADER, ProgramCheckError
from tests.helpers import assert_same, check_staged, run_printed_program

THIS_FILE = os.path.basename(__file__)
rng = np.random.default_rng(0)
F = rng.standard_normal((3, 4)).astype(np.float32)
G = rng.standard_normal((4, 5)).astype(np.float32)
V = rng.standard_normal(4).astype(np.float32)
POS = (np.abs(F) + 0.5).astype(np.float32)
I = np.arange(12, dtype=np.int32).reshape(3, 4)


def _statement_lines(source):
    """Lines of the printed function body that are statements (not def/return/header)."""
    out = []
    for line in source.splitlines():
        s = line.strip()
        if not s or s.startswith(("from ", "def ", "return", "_c")) or "=" not in s:
            continue
        out.append(s)
    return out


# --- make_jaxpr returns a Program whose source is runnable -----------------------------------


def test_make_jaxpr_returns_a_program():
    program = omnistage.make_jaxpr(lambda x, y: jnp.dot(x + 1, y + 1))(F, V)
    assert isinstance(program, Program)
    assert program.in_names == ["x", "y"]
    assert [a.shape for a in program.in_avals] == [(3, 4), (4,)]
    assert [(a.shape, a.dtype) for a in program.out_avals] == [((3,), np.dtype("float32"))]
    assert "dot_general" in [e.prim for e in program.eqns()]


def test_printed_program_starts_with_one_import_line_and_compiles():
    source = str(omnistage.make_jaxpr(lambda x: jnp.sin(x) * 2)(F))
    assert source.splitlines()[0] == HEADER
    assert sum(1 for l in source.splitlines() if l.startswith(("import ", "from "))) == 1
    ast.parse(source)
    compile(source, "<test>", "exec")


def test_str_equals_source():
    program = omnistage.make_jaxpr(lambda x: x + 1)(F)
    assert str(program) == program.source()


def _sum_of_squares(x):
    return jnp.sum(x * x)


def _norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def _selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def _log2(x):
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


def _mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.sum(h, axis=-1), h.T


def _select_tril(x):
    mask = jnp.arange(x.shape[0])[:, None] > jnp.arange(x.shape[1])
    return lax.select(mask, x, jnp.zeros_like(x))


def _int_ops(a, b):
    return a + b * 2, a * b - 1, jnp.maximum(a, b), a > b, jnp.where(a > 5, a, -b)


def _shapes(x):
    y = x.reshape(2, 6)
    z = jnp.transpose(y)
    w = jnp.concatenate([z, z], axis=1)
    return jnp.expand_dims(w, 0), jnp.stack([x, x]), jnp.broadcast_to(x[0], (5, 4))


def _mixed_dtypes(x, i):
    return x * i, i / 2, (x > 0).astype(jnp.float32) + i, jnp.abs(i) ** 2


def _reductions(x):
    return x.sum(), x.mean(axis=1), x.var(0), jnp.prod(x, axis=0), x.argmax(axis=1), jnp.all(x > -10)


def _constants_only(x):
    return jnp.add(1, 1) * x, jnp.ones((2, 2)), jnp.arange(3.0)


def _python_scalars(x):
    return 2 * x + 1.5, x ** 2, 1 / (x + 3)


def _indexing(x):
    return x[0], x[:, 1], x[1:, ::2], x[-1, -1], x[None, 0]


def _complex(z):
    return z * jnp.conj(z), jnp.real(z) + jnp.imag(z), jnp.exp(z), jnp.abs(z)


def _trig(x):
    return jnp.sin(x) ** 2 + jnp.cos(x) ** 2, jnp.tanh(x), jnp.arctan2(x, 1.0 + x * x), jnp.sqrt(x * x)


def _matmuls(x, y, v):
    return x @ y, jnp.matmul(x, y), jnp.dot(x, v), v @ v, jnp.dot(v, v)


def _static_python(x):
    n = x.shape[0] * 2  # plain Python on a static value
    acc = x
    for _ in range(3):  # unrolled at trace time
        acc = acc + 1.0
    return acc * n


def _identity_and_tuple(x, y):
    return x, (y, x)


FUNCTIONS = [
    ("sum_of_squares", _sum_of_squares, (F,)),
    ("norm", _norm, (F,)),
    ("selu", _selu, (F,)),
    ("log2", _log2, (POS,)),
    ("log2_scalar", _log2, (3.0,)),
    ("mlp", _mlp, ({"w1": G, "b1": np.ones(5, np.float32)}, F)),
    ("select_tril", _select_tril, (I,)),
    ("int_ops", _int_ops, (I, I[::-1])),
    ("shapes", _shapes, (F,)),
    ("mixed_dtypes", _mixed_dtypes, (F, I)),
    ("reductions", _reductions, (F,)),
    ("constants_only", _constants_only, (F[0, 0],)),
    ("python_scalars", _python_scalars, (F,)),
    ("indexing", _indexing, (F,)),
    ("complex", _complex, (F.astype(np.complex64) * (1 + 0.5j),)),
    ("trig", _trig, (F,)),
    ("matmuls", _matmuls, (F, G, V)),
    ("static_python", _static_python, (F,)),
    ("identity_and_tuple", _identity_and_tuple, (F, I)),
]


def _as_arrays(args):
    """NumPy test data as omnistage Arrays, so the eager run is omnistage's, not NumPy's."""
    return omnistage.tree_util.tree_map(
        lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, args)


@pytest.mark.parametrize("name,fun,args", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_printed_program_computes_what_the_function_computes(name, fun, args):
    """eager == jit == exec(str(program)) == checked interpreter, values and dtypes."""
    check_staged(fun, *_as_arrays(args), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name,fun,args", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_program_check_passes(name, fun, args):
    program = omnistage.make_jaxpr(fun)(*args)
    assert program.check() is program


def test_printed_program_run_in_a_fresh_namespace_returns_arrays():
    program = omnistage.make_jaxpr(_norm)(F)
    ns = {}
    exec(compile(str(program), "<fresh>", "exec"), ns)  # noqa: S102
    out = ns[program.name](jnp.asarray(F))
    assert isinstance(out, tuple) and isinstance(out[0], omnistage.Array)
    assert_same(out[0], _norm(jnp.asarray(F)), rtol=1e-5, atol=1e-5)


def test_printed_program_can_be_staged_again():
    """Running the printed source under make_jaxpr stages it like user code."""
    program = omnistage.make_jaxpr(_selu)(F)
    ns = {}
    exec(compile(str(program), "<again>", "exec"), ns)  # noqa: S102
    again = omnistage.make_jaxpr(ns[program.name])(F)
    again.check()
    assert [e.prim for e in again.eqns()] == [e.prim for e in program.eqns()]
    assert_same(run_printed_program(again, jnp.asarray(F)), run_printed_program(program, jnp.asarray(F)))


def test_make_jaxpr_static_argnums():
    def f(x, n):
        return x * n if n > 2 else x

    p3 = omnistage.make_jaxpr(f, static_argnums=1)(F, 3)
    p1 = omnistage.make_jaxpr(f, static_argnums=(1,))(F, 1)
    assert p3.in_names == ["x"] and [e.prim for e in p3.eqns()] == ["mul"]
    assert p1.eqns() == []


def test_make_jaxpr_of_pytree_arguments_names_leaves_by_path():
    program = omnistage.make_jaxpr(_mlp)({"w1": G, "b1": np.ones(5, np.float32)}, F)
    assert program.in_names == ["params_b1", "params_w1", "x"]


def test_program_only_knows_the_branch_taken_at_trace_time():
    """The seed's log2_if_rank_2: a rank-1 input takes the else branch; no equations."""
    def log2_if_rank_2(x):
        if x.ndim == 2:
            ln_x = jnp.log(x)
            ln_2 = jnp.log(2.0)
            return ln_x / ln_2
        else:
            return x

    program = omnistage.make_jaxpr(log2_if_rank_2)(jnp.array([1, 2, 3]))
    assert program.eqns() == []
    assert [(a.shape, a.dtype) for a in program.out_avals] == [((3,), np.dtype("int32"))]
    assert "log" in [e.prim for e in omnistage.make_jaxpr(log2_if_rank_2)(POS).eqns()]


# --- source locations ------------------------------------------------------------------------


def _located(x):
    a = jnp.sin(x)
    b = a * 2.0
    c = jnp.sum(b, axis=0)
    return c


def test_each_statement_has_a_comment_with_the_users_file_and_line():
    first = inspect.getsourcelines(_located)[1]
    program = omnistage.make_jaxpr(_located)(F)
    lines = _statement_lines(str(program))
    assert lines, str(program)
    expected = {"a": first + 1, "b": first + 2, "c": first + 3}
    for line in lines:
        m = re.search(r"#\s*(\S+):(\d+)\s*$", line)
        assert m, f"no file:line comment on {line!r}"
        assert m.group(1) == THIS_FILE
        target = line.split("=")[0].strip()
        if target in expected:
            assert int(m.group(2)) == expected[target], line
    commented = {int(re.search(r":(\d+)\s*$", l).group(1)) for l in lines}
    assert commented <= set(expected.values())


def test_statement_locations_point_into_user_helper_functions():
    def helper(v):
        return jnp.exp(v)  # the exp statement points here

    def outer(x):
        return helper(x) + 1.0

    helper_line = inspect.getsourcelines(helper)[1] + 1
    source = str(omnistage.make_jaxpr(outer)(F))
    exp_line = next(l for l in source.splitlines() if "exp(" in l)
    assert exp_line.rstrip().endswith(f"# {THIS_FILE}:{helper_line}")


def test_source_without_locations():
    program = omnistage.make_jaxpr(_located)(F)
    assert "#" not in "\n".join(program.source(with_header=False, with_locs=False).splitlines())
    assert program.source(with_locs=False).splitlines()[0] == HEADER


# --- names ---------------------------------------------------------------------------------


def test_names_come_from_the_users_variables():
    source = str(omnistage.make_jaxpr(_log2)(3.0))
    assert re.search(r"^\s*ln_x = log\(x\)", source, re.M), source
    assert re.search(r"^\s*ln_2 = log\(np\.float32\(2\.0\)\)", source, re.M), source
    assert re.search(r"= div\(ln_x, ln_2\)", source), source
    assert "def _log2(x: 'f32[]'):" in source or "def log2(x: 'f32[]'):" in source


def test_parameters_are_annotated_with_their_avals_and_the_text_still_runs():
    def f(x, i):
        y = x @ x
        if y.sum() > 0:  # a cond: its bodies' parameters are annotated too
            y = y * 2.0
        return y, i + 1

    x = np.ones((4, 4), np.float32)
    program = omnistage.make_jaxpr(f)(x, np.int32(3))
    source = str(program)
    assert re.search(r"^def f\(x: 'f32\[4,4\]', i: 'i32\[\]'\):$", source, re.M), source
    assert re.search(r"^    def if_true\(\w+: 'f32\[4,4\]'\):$", source, re.M), source
    printed = run_printed_program(program, x, np.int32(3))
    assert_same(list(printed), [2.0 * (x @ x), np.int32(4)])


def test_argument_names_are_the_parameter_names():
    def f(alpha, beta):
        return alpha - beta

    assert omnistage.make_jaxpr(f)(1.0, 2.0).in_names == ["alpha", "beta"]


def test_names_never_shadow_primitives_or_builtins():
    def f(x):
        add = x + 1.0  # noqa: F841 - a user variable named like a primitive
        sum = add * 2.0  # noqa: A001
        return sum

    program = omnistage.make_jaxpr(f)(F)
    targets = [e.outs[0] for e in program.eqns()]
    assert "add" not in targets and "sum" not in targets
    check_staged(f, F)


def test_repeated_user_names_get_suffixes():
    def f(x):
        x = x + 1.0
        x = x * 2.0
        return x

    program = omnistage.make_jaxpr(f)(F)
    names = program.in_names + [o for e in program.eqns() for o in e.outs]
    assert len(names) == len(set(names))
    check_staged(f, F)


# --- omnistaging -------------------------------------------------------------------------


def test_jnp_add_of_constants_is_staged_as_add():
    """The omnistaging seed: `y = jnp.add(1, 1)` appears as an `add` statement."""
    def f(x):
        y = jnp.add(1, 1)
        return x * y

    program = omnistage.make_jaxpr(f)(3)
    assert [e.prim for e in program.eqns()] == ["add", "mul"]
    assert re.search(r"y = add\(np\.int32\(1\), np\.int32\(1\)\)", str(program)), str(program)
    assert int(omnistage.jit(f)(3)) == 6


def test_jnp_zeros_is_staged_not_folded():
    program = omnistage.make_jaxpr(lambda x: x + jnp.zeros(3))(np.ones(3, np.float32))
    assert len(program.eqns()) >= 2
    assert program.consts == {}


def test_function_with_no_argument_dependence_is_still_staged():
    program = omnistage.make_jaxpr(lambda x: jnp.ones((2, 2)) * 3.0)(1.0)
    assert len(program.eqns()) >= 2
    assert program.consts == {}


def test_select_tril_mask_is_staged():
    program = omnistage.make_jaxpr(_select_tril)(I)
    prims = [e.prim for e in program.eqns()]
    assert "iota" in prims
    assert any(p in ("gt", "lt") for p in prims)
    assert program.consts == {}


def test_plain_numpy_on_static_values_runs_at_trace_time():
    def f(x):
        return x.reshape((np.prod(x.shape),))

    program = omnistage.make_jaxpr(f)(jnp.ones((2, 3)))
    assert [e.prim for e in program.eqns()] == ["reshape"]
    assert omnistage.jit(f)(jnp.ones((2, 3))).shape == (6,)


def test_numpy_array_constant_becomes_a_named_constant():
    table = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def f(x):
        return x + table

    program = omnistage.make_jaxpr(f)(F)
    assert len(program.consts) == 1
    assert "np.array(" in str(program)
    check_staged(f, F)


def test_side_effects_run_at_trace_time_only():
    calls = []

    def f(x):
        calls.append(x)
        return x + 1.0

    program = omnistage.make_jaxpr(f)(F)
    assert len(calls) == 1
    assert isinstance(calls[0], omnistage.core.tracer.Tracer)
    run_printed_program(program, jnp.asarray(F))
    run_printed_program(program, jnp.asarray(F))
    assert len(calls) == 1
    assert "append" not in str(program)


def test_print_inside_make_jaxpr_shows_a_tracer(capsys):
    def log2_with_print(x):
        print("printed x:", x)
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2

    program = omnistage.make_jaxpr(log2_with_print)(3.0)
    out = capsys.readouterr().out
    assert out.startswith("printed x: ") and "float32[]" in out
    assert not any("print" in l for l in _statement_lines(str(program)))


def test_make_jaxpr_stages_a_fresh_program_every_call():
    calls = []

    def f(x):
        calls.append(1)
        return x

    omnistage.make_jaxpr(f)(1.0)
    omnistage.make_jaxpr(f)(1.0)
    assert len(calls) == 2


# --- Program.check on hand-corrupted programs --------------------------------------------------


def _corruptible():
    return omnistage.make_jaxpr(lambda x, y: jnp.sum(jnp.sin(x) @ y, axis=0))(F, G)


def _clone(program, fn=None, avals=None):
    return Program(fn if fn is not None else copy.deepcopy(program.fn),
                   avals if avals is not None else dict(program.avals), program.consts)


def test_check_rejects_a_wrong_shape_in_the_avals_table():
    program = _corruptible()
    avals = dict(program.avals)
    name = program.eqns()[0].outs[0]
    avals[name] = avals[name].update(shape=(7, 7))
    with pytest.raises(ProgramCheckError, match=name):
        _clone(program, avals=avals).check()


def test_check_rejects_a_wrong_dtype_in_the_avals_table():
    program = _corruptible()
    avals = dict(program.avals)
    name = program.eqns()[-1].outs[0]
    avals[name] = avals[name].update(dtype=np.dtype("int32"))
    with pytest.raises(ProgramCheckError):
        _clone(program, avals=avals).check()


def test_check_rejects_an_undefined_variable():
    program = _corruptible()
    fn = copy.deepcopy(program.fn)
    fn.body[1].value.args[0] = ast.Name("nowhere", ast.Load())
    with pytest.raises(ProgramCheckError, match="nowhere"):
        _clone(program, fn=fn).check()


def test_check_rejects_an_unknown_primitive():
    program = _corruptible()
    fn = copy.deepcopy(program.fn)
    fn.body[0].value.func.id = "no_such_primitive"
    with pytest.raises(ProgramCheckError, match="no_such_primitive"):
        _clone(program, fn=fn).check()


def test_check_rejects_operands_of_mismatched_shapes():
    program = omnistage.make_jaxpr(lambda x, y: x + y)(F, F)
    avals = dict(program.avals)
    avals["y"] = avals["y"].update(shape=(4, 3))
    with pytest.raises(ProgramCheckError):
        _clone(program, avals=avals).check()


def test_check_rejects_a_variable_assigned_twice():
    program = omnistage.make_jaxpr(lambda x: jnp.sin(jnp.sin(x)))(F)
    fn = copy.deepcopy(program.fn)
    first, second = fn.body[0], fn.body[1]
    second.targets[0].id = first.targets[0].id
    fn.body[-1] = ast.Return(ast.Tuple([ast.Name(first.targets[0].id, ast.Load())], ast.Load()))
    with pytest.raises(ProgramCheckError):
        _clone(program, fn=fn).check()


def test_check_rejects_a_return_of_an_undefined_name():
    program = _corruptible()
    fn = copy.deepcopy(program.fn)
    fn.body[-1] = ast.Return(ast.Tuple([ast.Name("ghost", ast.Load())], ast.Load()))
    with pytest.raises(ProgramCheckError, match="ghost"):
        _clone(program, fn=fn).check()


def test_check_rejects_a_non_equation_statement():
    program = _corruptible()
    fn = copy.deepcopy(program.fn)
    fn.body.insert(0, ast.parse("print('hi')").body[0])
    with pytest.raises(ProgramCheckError):
        _clone(program, fn=fn).check()


def test_check_rejects_wrong_parameters():
    program = omnistage.make_jaxpr(lambda x: x.reshape(12))(F)
    fn = copy.deepcopy(program.fn)
    call = fn.body[0].value
    for kw in call.keywords:
        if kw.arg == "new_sizes":
            kw.value = ast.parse("(5, 5)", mode="eval").body
    with pytest.raises(ProgramCheckError):
        _clone(program, fn=fn).check()


# --- the eqn view ------------------------------------------------------------------------------


def test_eqn_view_round_trips_through_make_stmt():
    from omnistage.staging import eqn, make_stmt

    program = omnistage.make_jaxpr(lambda x: jnp.sum(x, axis=1))(F)
    for stmt in program.body[:-1]:
        e = eqn(stmt)
        rebuilt = make_stmt(e.outs, e.prim, e.ins, e.params)
        assert ast.unparse(rebuilt) == ast.unparse(stmt)
