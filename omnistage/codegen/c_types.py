"""Values of the native tier's translation (c_translate.py): C types of NumPy scalars, the
static array layouts translated code works on, exact C literals, Numba's typing of scalar
arithmetic (integers widened to 64 bits), and element-by-element copies between layouts."""
import numpy as np


class Unsupported(Exception):
    """The module uses something this translator does not handle; the Numba path stays."""


C_TYPES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "complex64": "os_c64", "complex128": "os_c128",
}
FLOAT_NAME = {"float32": "float", "float64": "double"}
# a complex number is a struct of two parts (c_complex.py): its operations are calls, as Numba's
COMPLEX_PART = {"complex64": "float32", "complex128": "float64"}
COMPLEX_SUFFIX = {"complex64": "c64", "complex128": "c128"}


def is_int(dtype):
    """Whether `dtype` is an integer type (bool is not)."""
    return dtype not in FLOAT_NAME and dtype not in COMPLEX_PART and dtype != "bool"
NP_TYPES = {**{name: name for name in C_TYPES}, "bool_": "bool"}  # np.<name>(x) casts


class Scalar:
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        if dtype not in C_TYPES:
            raise Unsupported(f"scalar type {dtype}")
        self.dtype = dtype

    def __eq__(self, other):
        return isinstance(other, Scalar) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("s", self.dtype))

    def __repr__(self):
        return self.dtype


class Arr:
    """An array value: dtype, static shape and strides (in elements)."""

    __slots__ = ("dtype", "shape", "strides")

    def __init__(self, dtype, shape, strides=None):
        if dtype not in C_TYPES:
            raise Unsupported(f"array type {dtype}")
        self.dtype, self.shape = dtype, tuple(int(d) for d in shape)
        self.strides = tuple(strides) if strides is not None else c_strides(self.shape)

    @property
    def contiguous(self):
        return all(d <= 1 or s == c for d, s, c in zip(self.shape, self.strides, c_strides(self.shape)))

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other):
        return isinstance(other, Arr) and (other.dtype, other.shape, other.strides) == (self.dtype, self.shape, self.strides)

    def __hash__(self):
        return hash((self.dtype, self.shape, self.strides))

    def __repr__(self):
        return f"{self.dtype}{list(self.shape)}@{list(self.strides)}"


class Tup:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = tuple(items)


def c_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(strides))


def c_float(value, dtype):
    """A C literal of exactly `value` in `dtype`."""
    v = float(value)
    suffix = "f" if dtype == "float32" else ""
    if np.isnan(v):
        return f"((({FLOAT_NAME[dtype]})NAN))" if not np.signbit(v) else f"(-(({FLOAT_NAME[dtype]})NAN))"
    if np.isinf(v):
        return f"(({FLOAT_NAME[dtype]})INFINITY)" if v > 0 else f"(-({FLOAT_NAME[dtype]})INFINITY)"
    return f"({v.hex()}{suffix})" if dtype == "float32" else f"({v.hex()})"


def c_literal(value, dtype):
    if dtype in COMPLEX_PART:
        v, part = complex(value), COMPLEX_PART[dtype]
        return f"os_{COMPLEX_SUFFIX[dtype]}_make({c_float(v.real, part)}, {c_float(v.imag, part)})"
    if dtype in FLOAT_NAME:
        return c_float(value, dtype)
    if dtype == "bool":
        return "true" if value else "false"
    v = int(value)
    if dtype == "int64" and v == -(1 << 63):
        return "INT64_MIN"
    if dtype.startswith("u"):
        return f"(({C_TYPES[dtype]}){v}ULL)"
    return f"(({C_TYPES[dtype]})({v}LL))"


def wide(dtype):
    """The type Numba computes integer arithmetic in (64 bits, keeping the signedness)."""
    if dtype == "bool":
        return "int64"
    if dtype.startswith("uint"):
        return "uint64"
    if dtype.startswith("int"):
        return "int64"
    return dtype


def arith_type(a, b, op):
    """Numba's result type of scalar `a op b` (dtype names)."""
    if a in COMPLEX_PART or b in COMPLEX_PART:
        if op not in ("+", "-", "*", "/"):
            raise Unsupported(f"{op} on complex numbers")
        # an integer operand counts as int64 (Numba widens it), a bool as well
        a64, b64 = (t if t in COMPLEX_PART or t in FLOAT_NAME else "int64" for t in (a, b))
        return np.promote_types(a64, b64).name
    fa, fb = a in FLOAT_NAME, b in FLOAT_NAME
    if fa or fb:
        if op == "/" or fa and fb:
            return "float64" if "float64" in (a, b) else ("float32" if fa and fb else "float64")
        return "float64"  # an integer (widened to 64 bits) with a float
    if op == "/":
        return "float64"
    if a == "bool" and b == "bool" and op in ("&", "|", "^"):
        return "bool"
    wa, wb = wide(a), wide(b)
    if wa == wb:
        return wa
    unsigned = a if wa == "uint64" else b
    if unsigned != "uint64":  # Numba: a narrower unsigned with a signed integer computes in int64
        return "int64"
    raise Unsupported(f"mixed-signedness integer arithmetic {a} {op} {b}")


def copy_lines(dst, dst_t, src, src_t, cast=None):
    """C statements copying array `src` (layout src_t) into `dst` (layout dst_t), elementwise."""
    if dst_t.shape != src_t.shape:
        raise Unsupported("copy between shapes")
    if dst_t.size == 0:
        return []
    if cast is None and dst_t.contiguous and src_t.contiguous:
        return [f"if ((void *)({dst}) != (void *)({src})) memmove({dst}, {src}, {dst_t.size} * sizeof({C_TYPES[dst_t.dtype]}));"]
    idx = [f"_c{k}" for k in range(len(dst_t.shape))]
    lines, indent = [], ""
    for k, d in enumerate(dst_t.shape):
        lines.append(f"{indent}for (int64_t {idx[k]} = 0; {idx[k]} < {d}; {idx[k]}++)")
        indent += "    "
    d_at = " + ".join(f"{i} * {s}" for i, s in zip(idx, dst_t.strides)) or "0"
    s_at = " + ".join(f"{i} * {s}" for i, s in zip(idx, src_t.strides)) or "0"
    value = f"{src}[{s_at}]" if cast is None else convert_code(f"{src}[{s_at}]", src_t.dtype, cast)
    lines.append(f"{indent}({dst})[{d_at}] = {value};")
    return ["{", *lines, "}"]


def same_type(a, b):
    return type(a) is type(b) and (a == b if not isinstance(a, Tup) else True)


def convert_code(code, src, dst):
    """C for the value `code` of type `src` as type `dst`, as Numba converts it."""
    if src == dst:
        return code
    if dst in COMPLEX_PART:
        part = C_TYPES[COMPLEX_PART[dst]]
        make = f"os_{COMPLEX_SUFFIX[dst]}_make"
        if src in COMPLEX_PART:
            return f"{make}(({part})({code}).re, ({part})({code}).im)"
        return f"{make}(({part})({code}), ({part})0)"
    if src in COMPLEX_PART:
        if dst == "bool":
            return f"(({code}).re != 0 || ({code}).im != 0)"
        raise Unsupported(f"{src} to {dst}")  # NumPy drops the imaginary part with a warning
    if dst == "bool":
        return f"(({code}) != 0)"
    return f"(({C_TYPES[dst]})({code}))"
