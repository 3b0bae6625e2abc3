"""Every module of the package imports in the environment README's install command makes: a
module that needs a package must have it declared (install_requires, or the test extra for the
developer tools), and the optional GPU backend must import without its extra."""
import importlib
import pkgutil
import subprocess
import sys

import pytest

import omnistage

MODULES = sorted(m.name for m in pkgutil.walk_packages(omnistage.__path__, "omnistage."))


def test_the_package_has_its_modules():
    assert len(MODULES) > 100 and "omnistage.codegen.emit_cpu" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports(name):
    importlib.import_module(name)


def test_declared_runtime_dependencies_are_what_a_jitted_matmul_and_bfloat16_need(tmp_path):
    """SciPy (Numba's BLAS/LAPACK) and ml_dtypes (bfloat16) are install_requires: a fresh
    install once lacked both, and every jitted `@` died in Numba's 'scipy 0.16+ is required'."""
    from importlib.metadata import requires

    names = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower().replace("_", "-")
             for r in requires("omnistage") if "extra ==" not in r}
    assert {"numpy", "numba", "llvmlite", "scipy", "ml-dtypes"} <= names
    code = ("import numpy as np, omnistage as jax, omnistage.numpy as jnp;"
            "a = np.ones((3, 3), np.float32);"
            "print(float(jax.jit(lambda a: (a @ a).sum())(a)), jnp.ones(2, jnp.bfloat16).dtype)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "OMNISTAGE_CACHE_DIR": str(tmp_path / "c"),
                              "NUMBA_CACHE_DIR": str(tmp_path / "n")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["27.0", "bfloat16"]


def test_import_and_a_float32_program_leave_ml_dtypes_unimported():
    """ml_dtypes 0.7's import takes over a second (its ufunc loops registered one by one): a
    process that never touches bfloat16 must not pay it. bfloat16 then loads it on first use,
    by the type and by its name."""
    code = ("import sys, numpy as np, omnistage as jax, omnistage.numpy as jnp;"
            "jax.jit(lambda a: jnp.sin(a) * 2)(np.ones(3, np.float32)); jax.grad(lambda a: a * a)(1.0);"
            "print('ml_dtypes' in sys.modules);"
            "print(jnp.dtype('bfloat16'), jnp.zeros(2, 'bfloat16').dtype, jnp.issubdtype(jnp.bfloat16, jnp.floating),"
            " jnp.bfloat16 is jnp.bfloat16, jax.dtypes.bfloat16 is type(np.zeros(1, 'bfloat16')[0]))")
    # each use of the name in a fresh process: it loads ml_dtypes there
    first_uses = ["jnp.dtype('bfloat16')", "jnp.result_type('bfloat16', 'float32')", "jnp.can_cast('bfloat16', 'float32')",
                  "jnp.isdtype('bfloat16', 'real floating')", "jax.ShapeDtypeStruct((2,), 'bfloat16').dtype",
                  "jnp.ones(2).astype('bfloat16').dtype", "jnp.promote_types('bfloat16', 'float16')"]
    code += "".join(f";print(subprocess.run([sys.executable, '-c', \"import omnistage as jax, omnistage.numpy as jnp;"
                    f"print({use})\"], capture_output=True, text=True).stdout.strip() or 'failed')" for use in first_uses)
    code = "import subprocess;" + code
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**__import__("os").environ, "OMNISTAGE_BACKEND": "interpreter"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "bfloat16", "bfloat16", "True", "True", "True",
                                  "bfloat16", "float32", "True", "True", "bfloat16", "bfloat16", "float32"]


def test_jnp_dtype_is_numpys():
    import numpy as np
    import omnistage.numpy as jnp

    assert jnp.dtype("float32") == np.float32 and jnp.dtype(np.int8) is np.dtype(np.int8)
    assert isinstance(np.dtype("f4"), jnp.dtype) and issubclass(type(np.dtype("c8")), jnp.dtype)
    assert jnp.dtype("f4", align=True) == np.float32 and jnp.dtype[np.float32] == np.dtype[np.float32]
    with pytest.raises(TypeError):
        jnp.dtype("no such type")
