#!/usr/bin/env python3
"""Generates numpy_expectations.txt: every public lazuli op against values computed with numpy.

Rerun after changing this script (needs numpy; CI does not have it, so the output is checked in):

    python3 tests/data/make_numpy_expectations.py

It writes numpy_expectations.txt next to itself. The inputs come from a seeded numpy RNG, so the
output is the same on every run. tests/frontend/numpy_expectations_test.cpp reads the file.

Expectations follow numpy semantics except where lazuli deliberately differs; there the value is
computed the lazuli way and a comment says so. The main difference is type promotion, which
follows PyTorch: see result_dtype() and scalar_result_dtype().

File format (line based, tokens separated by single spaces, '#' lines are comments):

    cases N                      number of cases that follow
    case NAME                    starts a case; NAME is a valid GoogleTest name
    op OP                        the lazuli call (see the C++ test for the mapping)
    tensor DTYPE SHAPE V...      a tensor operand, in call order
    scalar KIND V                a C++ number operand (KIND: bool, int or float), in call order
    param NAME TOKEN...          a named parameter (axes, keepdims, shape, perm, ...); a missing
                                 optional parameter means the C++ default argument is used
    expect DTYPE SHAPE V...      the expected result
    end

DTYPE is float32, float64, int32, int64 or bool. SHAPE is "()" for a 0-d tensor, else the
dimensions joined by 'x' ("3x4", "0", "2x0x3"). Values are row-major: integers in decimal, bools
as 0/1, float64 as Python's repr (shortest round-trip form; nan, inf, -inf), float32 as the repr
of the float32 value widened to float64, so that parsing with strtod and narrowing is exact.
"""

import os
import sys

import numpy as np

SEED = 20240611
OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_expectations.txt")

F32, F64, I32, I64, BOOL = "float32", "float64", "int32", "int64", "bool"
ALL_DTYPES = [F32, F64, I32, I64, BOOL]
NUMERIC_DTYPES = [F32, F64, I32, I64]
NP_DTYPE = {F32: np.float32, F64: np.float64, I32: np.int32, I64: np.int64, BOOL: np.bool_}
SHORT = {F32: "f32", F64: "f64", I32: "i32", I64: "i64", BOOL: "bool"}
# lazuli's promotion lattice (PyTorch's, restricted to these dtypes).
RANK = {BOOL: 0, I32: 1, I64: 2, F32: 3, F64: 4}

rng = np.random.default_rng(SEED)


def is_floating(dtype):
    return dtype in (F32, F64)


def dtype_of(array):
    for name, np_dtype in NP_DTYPE.items():
        if array.dtype == np_dtype:
            return name
    raise ValueError(f"unsupported dtype {array.dtype}")


# ---- lazuli's dtype rules (PyTorch, not numpy) ---------------------------------------------------


def result_dtype(*dtypes):
    """Tensor-tensor promotion: the largest of bool < int32 < int64 < float32 < float64.

    numpy differs: int64 + float32 -> float64 there, float32 here. A 0-d tensor counts as a tensor
    here (the larger dtype wins), unlike PyTorch's "dimensioned tensors first" rule.
    """
    return max(dtypes, key=lambda d: RANK[d])


def scalar_result_dtype(tensor_dtype, scalar_kind):
    """A C++ number never widens a tensor of its own category (float32 * 2.0 stays float32).

    An integer tensor with a floating number gives float32 (PyTorch's default float dtype); a bool
    tensor with an integer number gives int64 and with a floating number float32.
    """
    if is_floating(tensor_dtype):
        return tensor_dtype
    if tensor_dtype in (I32, I64):
        return F32 if scalar_kind == "float" else tensor_dtype
    return {"bool": BOOL, "int": I64, "float": F32}[scalar_kind]


def true_division_dtype(dtype):
    """'/' is true division: integer and bool operands are divided as float32."""
    return dtype if is_floating(dtype) else F32


def unary_float_dtype(dtype):
    """exp..sigmoid of integer and bool tensors are computed in float32."""
    return dtype if is_floating(dtype) else F32


def sum_dtype(dtype):
    return dtype if is_floating(dtype) else I64


def mean_dtype(dtype):
    return dtype if is_floating(dtype) else F32


# ---- Operands and cases --------------------------------------------------------------------------


class Tensor:
    def __init__(self, array):
        self.array = np.asarray(array)
        self.dtype = dtype_of(self.array)


class Scalar:
    """A C++ number operand; kind is 'bool', 'int' or 'float'."""

    def __init__(self, kind, value):
        self.kind = kind
        self.value = value


def T(data, dtype):
    """A tensor with the given (nested list) values."""
    return Tensor(np.array(data, dtype=NP_DTYPE[dtype]))


def format_value(value, dtype):
    if dtype == BOOL:
        return "1" if value else "0"
    if dtype in (I32, I64):
        return str(int(value))
    return repr(float(value))  # float32 widens exactly; repr round-trips.


def format_shape(shape):
    return "()" if len(shape) == 0 else "x".join(str(d) for d in shape)


def format_tensor(keyword, array):
    dtype = dtype_of(array)
    tokens = [keyword, dtype, format_shape(array.shape)]
    tokens += [format_value(v, dtype) for v in array.reshape(-1).tolist()]
    return " ".join(tokens)


class Cases:
    def __init__(self):
        self.blocks = []
        self.names = set()

    def add(self, name, op, args, expected, **params):
        """Records one case. params values: int, list of ints, shape tuple, str, or float."""
        assert name not in self.names, f"duplicate case name {name}"
        assert all(c.isalnum() or c == "_" for c in name), f"bad case name {name}"
        self.names.add(name)
        expected = np.asarray(expected)
        dtype_of(expected)  # checks that it is one of lazuli's dtypes
        lines = [f"case {name}", f"op {op}"]
        for arg in args:
            if isinstance(arg, Tensor):
                lines.append(format_tensor("tensor", arg.array))
            else:
                lines.append(f"scalar {arg.kind} {format_scalar(arg)}")
        for key, value in params.items():
            lines.append(" ".join(["param", key] + format_param(value)).rstrip())
        lines.append(format_tensor("expect", expected))
        lines.append("end")
        self.blocks.append("\n".join(lines))

    def write(self, path):
        header = [
            "# Generated by tests/data/make_numpy_expectations.py (numpy "
            + np.__version__
            + "); do not edit.",
            "# Rerun: python3 tests/data/make_numpy_expectations.py (it describes the format)",
            f"cases {len(self.blocks)}",
        ]
        with open(path, "w") as out:
            out.write("\n".join(header + self.blocks) + "\n")


def format_scalar(scalar):
    if scalar.kind == "bool":
        return "1" if scalar.value else "0"
    if scalar.kind == "int":
        return str(int(scalar.value))
    return repr(float(scalar.value))


def format_param(value):
    if isinstance(value, tuple):  # a shape
        return [format_shape(value)]
    if isinstance(value, list):
        return [str(int(v)) for v in value]
    if isinstance(value, bool):
        return ["1" if value else "0"]
    if isinstance(value, (int, np.integer)):
        return [str(int(value))]
    if isinstance(value, float):
        return [repr(value)]
    return [str(value)]


# ---- Input values --------------------------------------------------------------------------------


def values(dtype, shape, kind="smooth"):
    """Seeded random values.

    Floating kinds: smooth (uniform in [-3, 3)), positive ([0.1, 5)), exact (multiples of 1/8 in
    [-5, 5], so sums and products are exact in float32 whatever the order of summation), small
    (multiples of 1/2 in [-1.5, 1.5], so that ties and equal values occur). Integer kinds:
    smooth ([-20, 20]), positive ([1, 20]), nonnegative ([0, 5]), small ([-3, 3]).
    """
    shape = tuple(shape)
    if dtype == BOOL:
        return Tensor(rng.random(shape) < 0.5)
    if is_floating(dtype):
        if kind == "smooth":
            data = rng.uniform(-3, 3, shape)
        elif kind == "positive":
            data = rng.uniform(0.1, 5, shape)
        elif kind == "exact":
            data = rng.integers(-40, 41, shape) / 8
        elif kind == "small":
            data = rng.integers(-3, 4, shape) / 2
        else:
            raise ValueError(kind)
        return Tensor(data.astype(NP_DTYPE[dtype]))
    ranges = {"smooth": (-20, 21), "positive": (1, 21), "nonnegative": (0, 6), "small": (-3, 4)}
    low, high = ranges["smooth" if kind == "exact" else kind]
    return Tensor(rng.integers(low, high, shape).astype(NP_DTYPE[dtype]))


def shape_name(shape):
    return "scalar" if len(shape) == 0 else "x".join(str(d) for d in shape)


# ---- Computing expectations ----------------------------------------------------------------------


def cast(array, dtype):
    return np.asarray(array).astype(NP_DTYPE[dtype])


def via_float64(function, dtype, *arrays):
    """function evaluated in float64 and rounded once to dtype (the correctly rounded result)."""
    with np.errstate(all="ignore"):
        return cast(function(*[cast(a, F64) for a in arrays]), dtype)


def integer_power(base, exponent, dtype):
    """lazuli's integer pow: exact for exponent >= 0; for a negative exponent 1 if base == 1, +-1
    if base == -1 (by the parity of the exponent), else 0 (1 / base**-e truncated toward zero)."""
    base = np.broadcast_to(base, np.broadcast_shapes(np.shape(base), np.shape(exponent)))
    exponent = np.broadcast_to(exponent, base.shape)
    out = np.empty(base.shape, dtype=NP_DTYPE[dtype])
    for index in np.ndindex(base.shape):
        b, e = int(base[index]), int(exponent[index])
        if e >= 0:
            out[index] = b**e
        elif b == 1:
            out[index] = 1
        elif b == -1:
            out[index] = 1 if e % 2 == 0 else -1
        else:
            out[index] = 0
    return out


def apply_binary(op, a, b, dtype):
    """op on a and b already converted to the computation dtype."""
    if op == "pow":
        if is_floating(dtype):
            return via_float64(np.power, dtype, a, b)
        return integer_power(a, b, dtype)
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "maximum":
            return np.maximum(a, b)
        if op == "minimum":
            return np.minimum(a, b)
        comparison = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                      "gt": np.greater, "ge": np.greater_equal}
        return comparison[op](a, b)


COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]


def compute_dtype(op, dtype):
    return true_division_dtype(dtype) if op == "div" else dtype


def binary_expectation(op, left, right):
    """left/right: Tensor or Scalar (not both Scalar)."""
    if isinstance(left, Tensor) and isinstance(right, Tensor):
        dtype = result_dtype(left.dtype, right.dtype)
    elif isinstance(left, Tensor):
        dtype = scalar_result_dtype(left.dtype, right.kind)
    else:
        dtype = scalar_result_dtype(right.dtype, left.kind)
    dtype = compute_dtype(op, dtype)

    def operand(x):
        if isinstance(x, Tensor):
            return cast(x.array, dtype)
        return np.array(x.value).astype(NP_DTYPE[dtype])

    result = apply_binary(op, operand(left), operand(right), dtype)
    return np.asarray(result)


def astype_expectation(array, dtype):
    """lazuli's astype: float to int truncates toward zero, saturates at the target's range and
    maps NaN to 0 (numpy leaves those cases undefined); everything else as numpy."""
    source = dtype_of(array)
    if not (is_floating(source) and dtype in (I32, I64)):
        return cast(array, dtype)
    info = np.iinfo(NP_DTYPE[dtype])
    out = np.empty(array.shape, dtype=NP_DTYPE[dtype])
    for index in np.ndindex(array.shape):
        v = float(array[index])
        if np.isnan(v):
            out[index] = 0
        elif v >= info.max:
            out[index] = info.max
        elif v <= info.min:
            out[index] = info.min
        else:
            out[index] = int(v)  # int() truncates toward zero
    return out


def unary_expectation(op, array):
    dtype = dtype_of(array)
    if op in ("neg", "abs", "square", "relu"):
        functions = {"neg": np.negative, "abs": np.abs, "square": np.square,
                     "relu": lambda x: np.maximum(x, np.zeros_like(x))}
        return functions[op](array)
    functions = {
        "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
        "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    }
    return via_float64(functions[op], unary_float_dtype(dtype), array)


def normalize_axes(axes, ndim):
    return tuple(sorted(a % ndim for a in axes)) if axes else tuple(range(ndim))


def reduction_expectation(op, array, axes, keepdims):
    dtype = dtype_of(array)
    axis = normalize_axes(axes, array.ndim)
    with np.errstate(all="ignore"):
        if op == "sum":
            if is_floating(dtype):
                return via_float64(lambda x: np.sum(x, axis=axis, keepdims=keepdims), dtype, array)
            return cast(np.sum(cast(array, I64), axis=axis, keepdims=keepdims), sum_dtype(dtype))
        if op == "mean":
            # lazuli's mean is sum / count: over an empty axis that is 0 / 0 = NaN, as in numpy.
            total = np.sum(cast(array, F64), axis=axis, keepdims=keepdims)
            count = int(np.prod([array.shape[a] for a in axis]))
            return cast(total / np.float64(count), mean_dtype(dtype))
        function = np.max if op == "max" else np.min
        return np.asarray(function(array, axis=axis, keepdims=keepdims))


def softmax_expectation(array, axis, log):
    dtype = dtype_of(array)

    def function(x):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        return shifted - np.log(total) if log else np.exp(shifted) / total

    return via_float64(function, dtype, array)


# ---- The cases -----------------------------------------------------------------------------------

cases = Cases()


def add_binary(name, op, left, right):
    cases.add(name, op, [left, right], binary_expectation(op, left, right))


def add_binary_ops():
    # Each arithmetic op over each numeric dtype; the shapes rotate through broadcasting patterns.
    shape_pairs = {F32: ((3, 4), (3, 4)), F64: ((3, 4), (4,)), I32: ((3, 1), (1, 4)),
                   I64: ((2, 1, 3), (4, 1))}
    for op in ["add", "sub", "mul", "maximum", "minimum"]:
        for dtype in NUMERIC_DTYPES:
            sa, sb = shape_pairs[dtype]
            a, b = values(dtype, sa), values(dtype, sb)
            add_binary(f"{op}_{SHORT[dtype]}_{shape_name(sa)}_{shape_name(sb)}", op, a, b)
    for op in ["maximum", "minimum"]:
        a, b = values(BOOL, (3, 4)), values(BOOL, (3, 4))
        add_binary(f"{op}_bool_3x4_3x4", op, a, b)
        # maximum/minimum propagate NaN from either side, as numpy does.
        for dtype in (F32, F64):
            a = T([np.nan, 1.0, np.nan, -2.0, np.inf, 0.5], dtype)
            b = T([2.0, np.nan, np.nan, -np.inf, 3.0, -0.5], dtype)
            add_binary(f"{op}_{SHORT[dtype]}_nan_propagates", op, a, b)

    # Division: floats, and integers (true division, float32 result).
    for dtype in NUMERIC_DTYPES:
        sa, sb = shape_pairs[dtype]
        a = values(dtype, sa)
        b = values(dtype, sb, "positive")
        b = Tensor(np.where(rng.random(sb) < 0.5, -b.array, b.array).astype(b.array.dtype))
        add_binary(f"div_{SHORT[dtype]}_{shape_name(sa)}_{shape_name(sb)}", "div", a, b)
    add_binary("div_bool_bool_gives_f32", "div", values(BOOL, (6,)),
               T([True, True, True, True, True, True], BOOL))
    add_binary("div_f32_by_zero", "div", T([1.0, -1.0, 0.0, np.nan], F32), T([0, 0, 0, 0], F32))
    add_binary("div_i32_by_zero", "div", T([1, -1, 0, 7], I32), T([0, 0, 0, 2], I32))

    # Comparisons over every dtype, with values drawn from a small set so that ties occur.
    cmp_shapes = {F32: ((3, 4), (3, 4)), F64: ((2, 3), (3,)), I32: ((3, 4), (3, 4)),
                  I64: ((4, 1), (1, 3)), BOOL: ((3, 4), (3, 4))}
    for op in COMPARISONS:
        for dtype in ALL_DTYPES:
            sa, sb = cmp_shapes[dtype]
            a, b = values(dtype, sa, "small"), values(dtype, sb, "small")
            add_binary(f"{op}_{SHORT[dtype]}_{shape_name(sa)}_{shape_name(sb)}", op, a, b)
    nan_a = T([np.nan, 1.0, np.nan, 2.0], F32)
    nan_b = T([np.nan, np.nan, 1.0, 2.0], F32)
    for op in COMPARISONS:
        add_binary(f"{op}_f32_nan_is_unordered", op, nan_a, nan_b)

    # pow: floats with positive bases, integers with non-negative exponents.
    for dtype in (F32, F64):
        add_binary(f"pow_{SHORT[dtype]}_3x4_3x4", "pow", values(dtype, (3, 4), "positive"),
                   values(dtype, (3, 4)))
    add_binary("pow_f32_special_values", "pow", T([-2.0, 0.0, 0.0, 2.0, 4.0, -2.0, 9.0], F32),
               T([3.0, 0.0, -1.0, 0.5, -0.5, 0.5, 0.0], F32))
    for dtype in (I32, I64):
        add_binary(f"pow_{SHORT[dtype]}_3x4_3x4", "pow", values(dtype, (3, 4), "small"),
                   values(dtype, (3, 4), "nonnegative"))
        # Negative integer exponents: lazuli's rule (numpy raises instead); base 0 kept apart below.
        add_binary(f"pow_{SHORT[dtype]}_negative_exponent", "pow",
                   T([1, 1, -1, -1, 2, -2, 3, -3], dtype),
                   T([-1, -4, -1, -2, -1, -2, -3, -1], dtype))
    add_binary("pow_i32_zero_base_negative_exponent", "pow", T([0, 0, 0], I32), T([-1, -2, 0], I32))


def add_type_promotion():
    # Tensor-tensor: every ordered pair of distinct dtypes (bool + bool is rejected: no bool add).
    for da in ALL_DTYPES:
        for db in ALL_DTYPES:
            if da == db:
                continue
            a, b = values(da, (2, 3), "small"), values(db, (3,), "small")
            add_binary(f"promote_add_{SHORT[da]}_{SHORT[db]}", "add", a, b)
    for da, db in [(I32, I64), (I64, F32), (BOOL, F64), (I32, F64)]:
        a, b = values(da, (2, 3)), values(db, (2, 3), "positive")
        add_binary(f"promote_mul_{SHORT[da]}_{SHORT[db]}", "mul", a, b)
        add_binary(f"promote_sub_{SHORT[da]}_{SHORT[db]}", "sub", a, b)
    for da, db in [(I32, I64), (I64, I32), (I32, F64), (F32, F64), (BOOL, I32), (I64, F32)]:
        a, b = values(da, (2, 3)), values(db, (2, 3), "positive")
        add_binary(f"promote_div_{SHORT[da]}_{SHORT[db]}", "div", a, b)
    for da, db in [(I32, F32), (I64, F64), (BOOL, I32), (I32, I64)]:
        for op in ("lt", "eq"):
            a, b = values(da, (2, 3), "small"), values(db, (2, 3), "small")
            add_binary(f"promote_{op}_{SHORT[da]}_{SHORT[db]}", op, a, b)
    for da, db in [(I32, F32), (F32, F64)]:
        a, b = values(da, (2, 3), "small"), values(db, (2, 3), "small")
        add_binary(f"promote_maximum_{SHORT[da]}_{SHORT[db]}", "maximum", a, b)
    add_binary("promote_pow_f32_i32", "pow", values(F32, (2, 3), "positive"),
               values(I32, (2, 3), "small"))
    # A 0-d tensor is a tensor: float32 (3) + float64 () -> float64. (PyTorch would give float32
    # here; lazuli's rule is the plain lattice for all tensor-tensor operands.)
    add_binary("promote_add_f32_vector_f64_0d", "add", values(F32, (3,), "exact"),
               T(0.5, F64))


def add_scalar_forms():
    S = Scalar
    f32, f64 = values(F32, (2, 3)), values(F64, (2, 3))
    i32, i64, b = values(I32, (2, 3)), values(I64, (2, 3)), values(BOOL, (2, 3))
    pos_f32, pos_i32 = values(F32, (2, 3), "positive"), values(I32, (2, 3), "positive")
    forms = [
        ("add_f32_plus_float", "add", f32, S("float", 2.0)),
        ("add_float_plus_f32", "add", S("float", 2.0), f32),
        ("add_f32_plus_int", "add", f32, S("int", 2)),
        ("add_f64_plus_float", "add", f64, S("float", 0.1)),
        ("add_i32_plus_int", "add", i32, S("int", 2)),
        ("add_int_plus_i32", "add", S("int", 2), i32),
        ("add_i32_plus_float", "add", i32, S("float", 2.5)),
        ("add_i64_plus_int", "add", i64, S("int", 3)),
        ("add_i64_plus_large_int", "add", i64, S("int", 4000000000)),
        ("add_i64_plus_float", "add", i64, S("float", 1.5)),
        ("add_bool_plus_int", "add", b, S("int", 2)),
        ("add_bool_plus_float", "add", b, S("float", 2.5)),
        ("add_i32_plus_bool", "add", i32, S("bool", True)),
        ("sub_f32_minus_float", "sub", f32, S("float", 1.5)),
        ("sub_float_minus_f32", "sub", S("float", 1.5), f32),
        ("sub_int_minus_i32", "sub", S("int", 2), i32),
        ("sub_i32_minus_int", "sub", i32, S("int", 2)),
        ("sub_int_minus_f64", "sub", S("int", 2), f64),
        ("sub_float_minus_i64", "sub", S("float", 0.5), i64),
        ("mul_f32_times_float", "mul", f32, S("float", 2.0)),
        ("mul_f32_times_int", "mul", f32, S("int", 3)),
        ("mul_float_times_f64", "mul", S("float", 2.5), f64),
        ("mul_i64_times_float", "mul", i64, S("float", 1.5)),
        ("mul_int_times_i64", "mul", S("int", -3), i64),
        ("mul_bool_times_float", "mul", b, S("float", 2.5)),
        ("mul_bool_times_int", "mul", b, S("int", 3)),
        ("div_f32_by_float", "div", f32, S("float", 2.5)),
        ("div_float_by_f32", "div", S("float", 2.5), pos_f32),
        ("div_i32_by_float", "div", i32, S("float", 2.5)),
        ("div_i32_by_int", "div", i32, S("int", 4)),
        ("div_int_by_i32", "div", S("int", 1), pos_i32),
        ("div_i64_by_int", "div", i64, S("int", 3)),
        ("div_f64_by_int", "div", f64, S("int", 4)),
        ("div_bool_by_int", "div", b, S("int", 2)),
        ("lt_f32_float", "lt", f32, S("float", 0.5)),
        ("le_int_i32", "le", S("int", 1), i32),
        ("eq_i32_int", "eq", values(I32, (2, 3), "small"), S("int", 2)),
        ("ne_i64_int", "ne", values(I64, (2, 3), "small"), S("int", 0)),
        ("gt_i32_float", "gt", i32, S("float", 0.5)),
        ("ge_float_f64", "ge", S("float", 0.25), f64),
        ("eq_bool_bool", "eq", b, S("bool", True)),
        ("ne_bool_int", "ne", b, S("int", 1)),
        ("pow_f32_int", "pow", f32, S("int", 2)),
        ("pow_f32_float", "pow", pos_f32, S("float", 0.5)),
        ("pow_f64_float", "pow", values(F64, (2, 3), "positive"), S("float", -1.5)),
        ("pow_i32_int", "pow", i32, S("int", 2)),
        ("pow_i64_int", "pow", values(I64, (2, 3), "small"), S("int", 3)),
        ("pow_i32_float", "pow", pos_i32, S("float", 0.5)),
        ("pow_int_i32", "pow", S("int", 2), values(I32, (2, 3), "nonnegative")),
        ("pow_float_f32", "pow", S("float", 2.0), f32),
        ("pow_float_i32", "pow", S("float", 2.5), values(I32, (2, 3), "small")),
        ("maximum_f32_float", "maximum", f32, S("float", 0.0)),
        ("maximum_float_i32", "maximum", S("float", 0.5), i32),
        ("maximum_i32_float", "maximum", i32, S("float", 2.5)),
        ("minimum_i32_int", "minimum", i32, S("int", 0)),
        ("minimum_int_f64", "minimum", S("int", 1), f64),
        ("minimum_bool_int", "minimum", b, S("int", 0)),
    ]
    for name, op, left, right in forms:
        add_binary(f"scalar_{name}", op, left, right)


def add_broadcasting():
    patterns = [
        ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 1, 3), (4, 1)), ((), (2, 3)),
        ((2, 3), ()), ((), ()), ((1,), (5,)), ((5,), (1,)), ((1, 1, 1), (2, 3)),
        ((2, 0), (2, 1)), ((0,), (1,)), ((0,), ()), ((2, 1, 0), (3, 1)), ((0, 3), (3,)),
    ]
    for sa, sb in patterns:
        a, b = values(F32, sa), values(F32, sb)
        add_binary(f"broadcast_add_{shape_name(sa)}_{shape_name(sb)}", "add", a, b)
    add_binary("broadcast_mul_i32_3x1_1x4", "mul", values(I32, (3, 1)), values(I32, (1, 4)))
    add_binary("broadcast_sub_i64_scalar_2x3", "sub", values(I64, ()), values(I64, (2, 3)))
    add_binary("broadcast_lt_f32_2x1x3_4x1", "lt", values(F32, (2, 1, 3)), values(F32, (4, 1)))
    add_binary("broadcast_maximum_f64_scalar_2x3", "maximum", values(F64, ()), values(F64, (2, 3)))
    add_binary("broadcast_div_f32_2x0_1", "div", values(F32, (2, 0)), values(F32, (1,)))


def add_unary_ops():
    float_ops = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid"]
    # Inputs in each op's domain; integers and bools are computed in float32.
    domain = {"log": "positive", "sqrt": "positive", "rsqrt": "positive"}
    int_domain = {"log": "positive", "sqrt": "nonnegative", "rsqrt": "positive"}
    for op in float_ops:
        for dtype in ALL_DTYPES:
            if is_floating(dtype):
                x = values(dtype, (3, 4), domain.get(op, "smooth"))
            elif dtype == BOOL:
                x = values(dtype, (3, 4))  # log(0) = -inf, rsqrt(0) = inf: fine for bools too
            else:
                x = values(dtype, (3, 4), int_domain.get(op, "small"))
            cases.add(f"{op}_{SHORT[dtype]}", op, [x], unary_expectation(op, x.array))
    for op in ["neg", "abs", "square", "relu"]:
        for dtype in NUMERIC_DTYPES:
            x = values(dtype, (3, 4))
            cases.add(f"{op}_{SHORT[dtype]}", op, [x], unary_expectation(op, x.array))
    specials = {
        "exp": [-np.inf, np.inf, 100.0, -200.0, 0.0, np.nan],
        "log": [0.0, -1.0, np.inf, 1.0, np.nan],
        "sqrt": [-1.0, 0.0, np.inf, 4.0, np.nan],
        "rsqrt": [0.0, np.inf, 4.0, -1.0],
        "tanh": [-np.inf, np.inf, -50.0, 50.0, 0.0, np.nan],
        "sigmoid": [-np.inf, np.inf, -100.0, 100.0, 0.0, np.nan],
        "sin": [0.0, np.nan],
        "cos": [0.0, np.nan],
    }
    for op, data in specials.items():
        for dtype in (F32, F64):
            x = T(data, dtype)
            cases.add(f"{op}_{SHORT[dtype]}_special_values", op, [x],
                      unary_expectation(op, x.array))
    for op in ["neg", "abs", "square"]:
        x = T([np.inf, -np.inf, np.nan, -0.0], F32)
        cases.add(f"{op}_f32_special_values", op, [x], unary_expectation(op, x.array))
    # Shapes: 0-d and size-0 tensors go through unary ops unchanged in shape.
    for op, dtype, shape in [("exp", F32, ()), ("neg", I64, ()), ("sqrt", F64, (0, 3)),
                             ("abs", I32, (2, 0)), ("sigmoid", I32, ())]:
        x = values(dtype, shape, "positive" if op == "sqrt" else "smooth")
        cases.add(f"{op}_{SHORT[dtype]}_{shape_name(shape)}", op, [x],
                  unary_expectation(op, x.array))


def add_where():
    S = Scalar
    for dtype in ALL_DTYPES:
        cond, a, b = values(BOOL, (3, 4)), values(dtype, (3, 4)), values(dtype, (3, 4))
        expected = np.where(cond.array, a.array, b.array)
        cases.add(f"where_{SHORT[dtype]}", "where", [cond, a, b], expected)
    cond, a, b = values(BOOL, (3, 1)), values(F32, (1, 4)), values(F32, ())
    cases.add("where_broadcast_3x1_1x4_scalar", "where", [cond, a, b],
              np.where(cond.array, a.array, b.array))
    cond, a, b = values(BOOL, ()), values(I32, (2, 3)), values(I32, (3,))
    cases.add("where_broadcast_0d_condition", "where", [cond, a, b],
              np.where(cond.array, a.array, b.array))
    cond = values(BOOL, (2, 3))
    f32, f64, i32 = values(F32, (2, 3)), values(F64, (2, 3)), values(I32, (2, 3))
    # Mixed operands promote like the arithmetic ops (tensor-tensor lattice; numbers by category).
    forms = [
        ("where_i32_f32_promotes", [cond, i32, f32], F32),
        ("where_f32_f64_promotes", [cond, f32, f64], F64),
        ("where_f32_float", [cond, f32, S("float", 0.0)], F32),
        ("where_float_f64", [cond, S("float", 1.5), f64], F64),
        ("where_i32_int", [cond, i32, S("int", -1)], I32),
        ("where_i32_float", [cond, i32, S("float", 2.5)], F32),
    ]
    for name, args, dtype in forms:
        operands = [a.array if isinstance(a, Tensor) else a.value for a in args[1:]]
        expected = cast(np.where(cond.array, *operands), dtype)
        cases.add(name, "where", args, expected)
    x = T([np.nan, 1.0, -np.inf, 2.0], F32)
    cond = T([True, False, True, True], BOOL)
    cases.add("where_f32_passes_nan_and_inf", "where", [cond, x, T(0.0, F32)],
              np.where(cond.array, x.array, np.float32(0)))


def add_astype():
    specials = [0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 1e10, -1e10, 1e20, -1e20, np.inf, -np.inf,
                np.nan, 123456789.0, 0.25]
    for source in ALL_DTYPES:
        for target in ALL_DTYPES:
            if source in (F32, F64):
                x = T(specials, source)
            elif source == I64:
                x = T([0, 1, -1, 7, -7, 16777217, -16777217, 2**53 + 1, 2**31 - 1, -(2**31)], I64)
            elif source == I32:
                x = T([0, 1, -1, 7, -7, 16777217, -16777217, 2**31 - 1, -(2**31)], I32)
            else:
                x = values(BOOL, (2, 3))
            if source == I64 and target == I32:
                x = T([0, 1, -1, 7, -7, 2**31 - 1, -(2**31)], I64)  # no wraparound cases
            name = f"astype_{SHORT[source]}_to_{SHORT[target]}"
            cases.add(name, "astype", [x], astype_expectation(x.array, target), dtype=target)
    x = values(F32, (2, 3))
    cases.add("astype_member_f32_to_i32", "astype_member", [x],
              astype_expectation(x.array, I32), dtype=I32)
    x = values(I32, (2, 3))
    cases.add("astype_member_i32_to_f64", "astype_member", [x],
              astype_expectation(x.array, F64), dtype=F64)
    x = values(F64, (0, 2))
    cases.add("astype_f64_to_i64_0x2", "astype", [x], astype_expectation(x.array, I64), dtype=I64)


def add_reduction(name, op, x, axes=None, keepdims=None):
    params = {}
    if axes is not None:
        params["axes"] = list(axes)
    if keepdims is not None:
        params["keepdims"] = bool(keepdims)
    expected = reduction_expectation(op, x.array, axes or [], bool(keepdims))
    cases.add(name, op, [x], expected, **params)


def add_reductions():
    for op in ["sum", "mean", "max", "min"]:
        x = values(F32, (3, 4, 5), "exact")
        add_reduction(f"{op}_f32_all_default", op, x)
        add_reduction(f"{op}_f32_all_keepdims", op, x, [], True)
        add_reduction(f"{op}_f32_axis0", op, x, [0])
        add_reduction(f"{op}_f32_axis1_keepdims", op, x, [1], True)
        add_reduction(f"{op}_f32_axis_minus1", op, x, [-1])
        add_reduction(f"{op}_f32_axes_0_2", op, x, [0, 2])
        add_reduction(f"{op}_f32_axes_minus1_0_keepdims", op, x, [-1, 0], True)
        add_reduction(f"{op}_f32_all_axes_listed", op, x, [0, 1, 2], False)
        add_reduction(f"{op}_f64_axis1", op, values(F64, (3, 4)), [1])
        add_reduction(f"{op}_i32_axis0", op, values(I32, (3, 4)), [0])
        add_reduction(f"{op}_i32_all", op, values(I32, (3, 4)))
        add_reduction(f"{op}_i64_axis1_keepdims", op, values(I64, (3, 4)), [1], True)
        add_reduction(f"{op}_bool_axis1", op, values(BOOL, (3, 4)), [1])
        add_reduction(f"{op}_bool_all", op, values(BOOL, (3, 4)))
        add_reduction(f"{op}_f32_0d", op, values(F32, (), "exact"))
        add_reduction(f"{op}_f32_0d_keepdims", op, values(F32, (), "exact"), [], True)
        add_reduction(f"{op}_i32_0d", op, values(I32, ()))
        x = values(F32, (1, 4, 1), "exact")
        add_reduction(f"{op}_f32_size1_axes_0_2", op, x, [0, 2])
        add_reduction(f"{op}_f32_size1_axis1_keepdims", op, x, [1], True)
        # Reducing the non-empty axis of an empty tensor gives an empty result.
        add_reduction(f"{op}_f32_0x3_axis1", op, values(F32, (0, 3)), [1])
    for op in ["sum", "mean"]:
        # Empty reductions: sum is 0; mean is 0 / 0 = NaN (max and min reject them).
        add_reduction(f"{op}_f32_0x3_axis0", op, values(F32, (0, 3)), [0])
        add_reduction(f"{op}_f32_0x3_all", op, values(F32, (0, 3)))
        add_reduction(f"{op}_f64_2x0_axis1_keepdims", op, values(F64, (2, 0)), [1], True)
        add_reduction(f"{op}_i32_2x0_axis1", op, values(I32, (2, 0)), [1])
    for op in ["sum", "mean", "max", "min"]:
        x = T([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], F32)
        add_reduction(f"{op}_f32_nan_propagates", op, x, [1])
    # Large sums in float32: all terms exact and positive, so the order of summation cannot matter.
    x = Tensor((rng.integers(0, 9, (1000,)) / 4).astype(np.float32))
    add_reduction("sum_f32_1000_elements", "sum", x)
    add_reduction("mean_f32_1000_elements", "mean", x)
    x = Tensor(rng.integers(0, 2**40, (64,)).astype(np.int64))
    add_reduction("sum_i64_large_values", "sum", x)

    def add_argmax(name, x, axis, keepdims=None):
        params = {"axis": axis}
        if keepdims is not None:
            params["keepdims"] = bool(keepdims)
        expected = np.argmax(x.array, axis=axis, keepdims=bool(keepdims)).astype(np.int64)
        cases.add(name, "argmax", [x], np.asarray(expected), **params)

    # Values from a small set, so ties are common: argmax picks the first maximum.
    x = values(F32, (4, 6), "small")
    add_argmax("argmax_f32_ties_axis0", x, 0)
    add_argmax("argmax_f32_ties_axis1", x, 1)
    add_argmax("argmax_f32_ties_axis_minus1_keepdims", x, -1, True)
    add_argmax("argmax_f32_ties_axis0_keepdims", x, 0, True)
    add_argmax("argmax_f64_axis1", values(F64, (3, 5)), 1)
    add_argmax("argmax_i32_ties_axis0", values(I32, (5, 3), "small"), 0)
    add_argmax("argmax_i64_axis_minus1_keepdims", values(I64, (2, 3, 4), "small"), -1, True)
    add_argmax("argmax_f32_3d_axis1", values(F32, (2, 3, 4), "small"), 1)
    add_argmax("argmax_f32_size1_axis", values(F32, (3, 1)), 1)
    add_argmax("argmax_f32_1d", T([1.0, 3.0, 3.0, -1.0], F32), 0)
    add_argmax("argmax_f32_all_equal", T([2.0, 2.0, 2.0], F32), 0)
    add_argmax("argmax_f32_nan_is_maximum", T([[1.0, np.nan, 3.0, np.nan], [np.inf, 1.0, 2.0, 0.0]],
                                             F32), 1)
    add_argmax("argmax_f32_negative_infinity", T([-np.inf, -np.inf, -5.0], F32), 0)


def add_movement():
    def add(name, op, args, expected, **params):
        cases.add(name, op, args, np.asarray(expected), **params)

    x = values(F32, (3, 4))
    add("reshape_f32_3x4_to_2xm1", "reshape", [x], x.array.reshape(2, -1), shape=(2, -1))
    add("reshape_f32_3x4_to_m1", "reshape", [x], x.array.reshape(-1), shape=(-1,))
    y = values(I64, (2, 3, 4))
    add("reshape_i64_2x3x4_to_4xm1x2", "reshape", [y], y.array.reshape(4, -1, 2), shape=(4, -1, 2))
    z = values(F64, (1, 1))
    add("reshape_f64_1x1_to_0d", "reshape", [z], z.array.reshape(()), shape=())
    z = values(I32, ())
    add("reshape_i32_0d_to_1x1x1", "reshape", [z], z.array.reshape(1, 1, 1), shape=(1, 1, 1))
    z = values(F32, (0, 3))
    add("reshape_f32_0x3_to_3x0", "reshape", [z], z.array.reshape(3, 0), shape=(3, 0))
    z = values(BOOL, (2, 3))
    add("reshape_bool_2x3_to_3x2", "reshape", [z], z.array.reshape(3, 2), shape=(3, 2))
    add("reshape_of_transpose_f32", "reshape_of_transpose", [x], x.array.T.reshape(2, 6),
        shape=(2, 6))

    t = values(F32, (2, 3, 4))
    add("transpose_f32_default_reverses", "transpose", [t], np.transpose(t.array))
    add("transpose_f32_perm_1_0_2", "transpose", [t], np.transpose(t.array, (1, 0, 2)),
        perm=[1, 0, 2])
    add("transpose_f32_perm_2_0_1", "transpose", [t], np.transpose(t.array, (2, 0, 1)),
        perm=[2, 0, 1])
    add("transpose_f32_empty_perm_reverses", "transpose", [x], x.array.T, perm=[])
    add("transpose_i64_2d_default", "transpose", [y], np.transpose(y.array))
    b = values(BOOL, (2, 3))
    add("transpose_bool_2d", "transpose", [b], b.array.T, perm=[1, 0])
    v = values(I32, (5,))
    add("transpose_i32_1d", "transpose", [v], v.array)
    s = values(F64, ())
    add("transpose_f64_0d", "transpose", [s], s.array)

    for name, dtype, source, target in [
        ("3_to_2x3", F32, (3,), (2, 3)), ("3x1_to_3x4", I32, (3, 1), (3, 4)),
        ("0d_to_2x2", F64, (), (2, 2)), ("1_to_0", F32, (1,), (0,)),
        ("2x1x3_to_4x2x5x3", I64, (2, 1, 3), (4, 2, 5, 3)), ("bool_2_to_3x2", BOOL, (2,), (3, 2)),
        ("same_shape", F32, (2, 3), (2, 3)),
    ]:
        z = values(dtype, source)
        add(f"broadcast_to_{name}", "broadcast_to", [z], np.broadcast_to(z.array, target),
            shape=target)

    kmax, kmin = 2**63 - 1, -(2**63) + 1
    m = values(F32, (4, 5))
    d = values(I32, (6,))
    slices = [
        ("1d_basic", d, [1], [4], None),
        ("1d_step2", d, [0], [6], [2]),
        ("1d_negative_bounds", d, [-4], [-1], [1]),
        ("1d_reverse_with_int64_min", d, [-1], [kmin], [-1]),
        ("1d_reverse_with_minus_n_minus_1", d, [-1], [-7], [-1]),
        ("1d_negative_step3", d, [5], [0], [-3]),
        ("1d_out_of_range_clamped", d, [-100], [100], [1]),
        ("1d_out_of_range_negative_step", d, [100], [-100], [-2]),
        ("1d_empty_start_after_stop", d, [4], [2], [1]),
        ("1d_empty_negative_step", d, [1], [3], [-1]),
        ("1d_to_end_with_int64_max", d, [2], [kmax], [1]),
        ("2d_both_axes", m, [1, -4], [3, 100], [1, 2]),
        ("2d_missing_trailing_axis", m, [1], [3], [1]),
        ("2d_missing_step", m, [0, 1], [2, 4], None),
        ("2d_no_axes", m, [], [], None),
        ("2d_reverse_both", m, [-1, -1], [kmin, kmin], [-1, -1]),
        ("2d_empty_axis", m, [2, 0], [2, 5], [1, 1]),
    ]
    t3 = values(I64, (3, 4, 5))
    slices.append(("3d_mixed_steps", t3, [2, 0, -1], [kmin, 4, 0], [-1, 3, -2]))
    slices.append(("bool", values(BOOL, (6,)), [1], [6], [2]))
    for name, z, start, stop, step in slices:
        index = tuple(slice(a, o, s) for a, o, s in zip(start, stop, step or [1] * len(start)))
        params = {"start": start, "stop": stop}
        if step is not None:
            params["step"] = step
        add(f"slice_{name}", "slice", [z], z.array[index], **params)

    a, c = values(F32, (2, 3)), values(F32, (1, 3))
    add("concatenate_f32_default_axis", "concatenate", [a, c], np.concatenate([a.array, c.array]))
    add("concatenate_f32_axis0", "concatenate", [a, c], np.concatenate([a.array, c.array]), axis=0)
    p, q, r = values(I32, (2, 1)), values(I32, (2, 3)), values(I32, (2, 2))
    add("concatenate_i32_axis1_three", "concatenate", [p, q, r],
        np.concatenate([p.array, q.array, r.array], axis=1), axis=1)
    p, q = values(F64, (2, 3, 1)), values(F64, (2, 3, 2))
    add("concatenate_f64_axis_minus1", "concatenate", [p, q],
        np.concatenate([p.array, q.array], axis=-1), axis=-1)
    p = values(F32, (3,))
    add("concatenate_f32_single", "concatenate", [p], p.array, axis=0)
    p, q = values(F32, (0, 3)), values(F32, (2, 3))
    add("concatenate_f32_with_empty", "concatenate", [p, q],
        np.concatenate([p.array, q.array]), axis=0)
    # Dtypes promote to a common one (lazuli's lattice).
    for names, dtypes in [("i32_f32", (I32, F32)), ("i32_i64", (I32, I64)),
                          ("bool_i32", (BOOL, I32)), ("i32_f32_f64", (I32, F32, F64)),
                          ("bool_bool", (BOOL, BOOL))]:
        parts = [values(dtype, (2, 2), "small") for dtype in dtypes]
        target = result_dtype(*dtypes)
        add(f"concatenate_promotes_{names}", "concatenate", parts,
            np.concatenate([cast(p.array, target) for p in parts], axis=1), axis=1)

    e = values(F32, (2, 3))
    for axis in [0, 1, 2, -1, -2, -3]:
        name = f"expand_dims_f32_axis{axis}".replace("-", "minus")
        add(name, "expand_dims", [e], np.expand_dims(e.array, axis), axis=axis)
    s = values(I32, ())
    add("expand_dims_i32_0d", "expand_dims", [s], np.expand_dims(s.array, 0), axis=0)

    g = values(F32, (1, 3, 1, 2, 1))
    add("squeeze_f32_all", "squeeze", [g], np.squeeze(g.array))
    add("squeeze_f32_axis0", "squeeze", [g], np.squeeze(g.array, (0,)), axes=[0])
    add("squeeze_f32_axis_minus1", "squeeze", [g], np.squeeze(g.array, (-1,)), axes=[-1])
    add("squeeze_f32_axes_0_2", "squeeze", [g], np.squeeze(g.array, (0, 2)), axes=[0, 2])
    h = values(I64, (2, 3))
    add("squeeze_i64_nothing_to_remove", "squeeze", [h], np.squeeze(h.array))
    h = values(F64, (1, 1))
    add("squeeze_f64_to_0d", "squeeze", [h], np.squeeze(h.array))
    h = values(BOOL, (1, 4))
    add("squeeze_bool", "squeeze", [h], np.squeeze(h.array))


def add_matmul():
    def add(name, sa, sb, dtype, kind="exact"):
        a, b = values(dtype, sa, kind), values(dtype, sb, kind)
        if is_floating(dtype):
            expected = via_float64(np.matmul, dtype, a.array, b.array)
        else:
            expected = np.matmul(a.array, b.array)
        cases.add(f"matmul_{name}", "matmul", [a, b], np.asarray(expected))

    for dtype in NUMERIC_DTYPES:
        add(f"{SHORT[dtype]}_3x4_4x5", (3, 4), (4, 5), dtype)
    add("f64_random_values_6x7_7x5", (6, 7), (7, 5), F64, "smooth")
    add("f32_1d_2d", (4,), (4, 5), F32)
    add("f32_2d_1d", (3, 4), (4,), F32)
    add("f32_1d_1d_gives_0d", (4,), (4,), F32)
    add("i64_1d_1d_gives_0d", (5,), (5,), I64)
    add("f32_batched_3d_3d", (2, 3, 4), (2, 4, 5), F32)
    add("f64_batched_3d_3d", (3, 2, 4), (3, 4, 2), F64)
    add("i32_batched_3d_3d", (2, 3, 4), (2, 4, 5), I32)
    add("f32_batch_broadcast_2x1x3x4_5x4x2", (2, 1, 3, 4), (5, 4, 2), F32)
    add("f32_3d_2d", (2, 3, 4), (4, 5), F32)
    add("f32_2d_3d", (3, 4), (2, 4, 5), F32)
    add("f32_3d_1d", (2, 3, 4), (4,), F32)
    add("f32_1d_3d", (4,), (2, 4, 5), F32)
    add("f32_size1_dims", (1, 4), (4, 1), F32)
    add("f32_inner_dimension_0", (3, 0), (0, 4), F32)
    add("f32_larger_17x33_33x9", (17, 33), (33, 9), F32)
    # Transposed (non-contiguous) operands: the layout must not leak into the result.
    a, b = values(F32, (4, 3), "exact"), values(F32, (5, 4), "exact")
    cases.add("matmul_of_transposes_f32", "matmul_of_transposes", [a, b],
              via_float64(np.matmul, F32, a.array.T, b.array.T))


def add_softmax():
    for op, log in [("softmax", False), ("log_softmax", True)]:
        x = values(F32, (3, 5))
        cases.add(f"{op}_f32_default_axis", op, [x], softmax_expectation(x.array, -1, log))
        cases.add(f"{op}_f32_axis_minus1", op, [x], softmax_expectation(x.array, -1, log), axis=-1)
        cases.add(f"{op}_f32_axis0", op, [x], softmax_expectation(x.array, 0, log), axis=0)
        y = values(F64, (2, 3, 4))
        cases.add(f"{op}_f64_axis1", op, [y], softmax_expectation(y.array, 1, log), axis=1)
        z = values(F32, (6,))
        cases.add(f"{op}_f32_1d", op, [z], softmax_expectation(z.array, 0, log), axis=0)
        # Large values: exp(1000) overflows, so only a max-subtracting implementation is right.
        big = T([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], F32)
        cases.add(f"{op}_f32_large_values", op, [big], softmax_expectation(big.array, -1, log))
        big64 = T([[1000.0, 1000.5, 999.0], [800.0, 0.0, -800.0]], F64)
        cases.add(f"{op}_f64_large_values", op, [big64], softmax_expectation(big64.array, -1, log))
        inf = T([0.0, -np.inf, 1.0], F32)
        cases.add(f"{op}_f32_minus_infinity_entry", op, [inf],
                  softmax_expectation(inf.array, 0, log))
        one = values(F32, (4, 1))
        cases.add(f"{op}_f32_size1_axis", op, [one], softmax_expectation(one.array, -1, log))


def add_creation():
    def add(name, op, expected, **params):
        cases.add(name, op, [], np.asarray(expected), **params)

    add("full_f32_default_dtype", "full", np.full((2, 3), 1.5, np.float32), shape=(2, 3), value=1.5)
    add("full_i32", "full", np.full((4,), 7, np.int32), shape=(4,), value=7.0, dtype=I32)
    add("full_f64_0d", "full", np.full((), -2.25, np.float64), shape=(), value=-2.25, dtype=F64)
    add("full_bool", "full", np.full((2, 2), True), shape=(2, 2), value=1.0, dtype=BOOL)
    add("full_i64_size0", "full", np.full((0, 2), 3, np.int64), shape=(0, 2), value=3.0, dtype=I64)
    add("full_f32_nan", "full", np.full((2,), np.nan, np.float32), shape=(2,), value=np.nan)
    for dtype in ALL_DTYPES:
        add(f"zeros_{SHORT[dtype]}", "zeros", np.zeros((2, 3), NP_DTYPE[dtype]), shape=(2, 3),
            dtype=dtype)
        add(f"ones_{SHORT[dtype]}", "ones", np.ones((3,), NP_DTYPE[dtype]), shape=(3,), dtype=dtype)
    add("zeros_default_dtype", "zeros", np.zeros((2, 2), np.float32), shape=(2, 2))
    add("ones_default_dtype_0d", "ones", np.ones((), np.float32), shape=())
    for name, start, stop, step, dtype in [
        ("f32_default_step", 0.0, 5.0, None, None), ("f32_quarter_step", 1.0, 2.0, 0.25, None),
        ("f64_negative_step", 5.0, 0.0, -1.5, F64), ("i32_step3", 0.0, 10.0, 3.0, I32),
        ("i64_negative_start", -3.0, 3.0, 1.0, I64), ("f32_empty", 3.0, 1.0, None, None),
        ("f32_fractional_bounds", 0.5, 3.2, 0.5, None),
    ]:
        params = {"start": start, "stop": stop}
        if step is not None:
            params["step"] = step
        if dtype is not None:
            params["dtype"] = dtype
        expected = np.arange(start, stop, 1.0 if step is None else step).astype(
            NP_DTYPE[dtype or F32])
        add(f"arange_{name}", "arange", expected, **params)


def take_along_axis_filled(array, indices, axis):
    """numpy.take_along_axis with lazuli's reading of an index outside the axis: NaN, the lowest
    integer or True (JAX's "fill" mode); negative indices count from the end."""
    extent = array.shape[axis]
    wrapped = np.where(indices < 0, indices + extent, indices)
    inside = (wrapped >= 0) & (wrapped < extent)
    if extent == 0:
        shape = list(np.broadcast_shapes(*[tuple(1 if d == axis else n for d, n in enumerate(s))
                                           for s in (array.shape, indices.shape)]))
        shape[axis] = indices.shape[axis]
        gathered = np.zeros(shape, dtype=array.dtype)
    else:
        gathered = np.take_along_axis(array, np.where(inside, wrapped, 0), axis)
    if array.dtype == np.bool_:
        fill = True
    elif np.issubdtype(array.dtype, np.floating):
        fill = np.nan
    else:
        fill = np.iinfo(array.dtype).min
    return np.where(inside, gathered, fill).astype(array.dtype)


def add_gather():
    def add(name, op, args, expected, **params):
        cases.add(name, op, args, expected, **params)

    x = values(F32, (4, 5))
    rows = Tensor(rng.integers(0, 5, (4, 1)).astype(np.int64))
    add("take_along_axis_f32_rows", "take_along_axis", [x, rows],
        np.take_along_axis(x.array, rows.array, 1), axis=1)
    columns = Tensor(rng.integers(-4, 4, (3, 5)).astype(np.int32))
    add("take_along_axis_f32_negative_indices_axis0", "take_along_axis", [x, columns],
        take_along_axis_filled(x.array, columns.array, 0), axis=0)
    order = Tensor(np.argsort(x.array, axis=-1).astype(np.int64))
    add("take_along_axis_f32_argsort_axis_minus1", "take_along_axis", [x, order],
        np.take_along_axis(x.array, order.array, -1), axis=-1)
    outside = T([[0, 5, -6, 2]], I64)
    for dtype in ALL_DTYPES:
        z = values(dtype, (3, 5))
        add(f"take_along_axis_{SHORT[dtype]}_outside_fills", "take_along_axis", [z, outside],
            take_along_axis_filled(z.array, np.broadcast_to(outside.array, (3, 4)), 1), axis=1)
    # x and the indices broadcast against each other outside the axis.
    b = values(F64, (1, 6, 2))
    picks = Tensor(rng.integers(0, 6, (3, 2, 1)).astype(np.int32))
    add("take_along_axis_f64_broadcast", "take_along_axis", [b, picks],
        take_along_axis_filled(np.broadcast_to(b.array, (3, 6, 2)),
                               np.broadcast_to(picks.array, (3, 2, 2)), 1), axis=1)
    empty = values(F32, (2, 0))
    add("take_along_axis_f32_empty_axis_fills", "take_along_axis", [empty, T([[0], [1]], I64)],
        take_along_axis_filled(empty.array, np.array([[0], [1]]), 1), axis=1)

    w = values(F32, (6, 3))
    tokens = Tensor(rng.integers(0, 6, (2, 4)).astype(np.int32))
    add("take_f32_embedding_rows", "take", [w, tokens], np.take(w.array, tokens.array, 0), axis=0)
    add("take_f32_axis1", "take", [w, T([2, 0, 2, -1], I64)],
        np.take(w.array, [2, 0, 2, -1], 1), axis=1)
    add("take_f32_scalar_index", "take", [w, T(4, I64)], np.take(w.array, 4, 0), axis=0)
    add("take_f32_scalar_index_last_axis", "take", [w, T(-1, I32)], np.take(w.array, -1, -1),
        axis=-1)
    cube = values(I64, (2, 3, 4))
    add("take_i64_middle_axis_2d_indices", "take", [cube, T([[0, 2], [1, 1], [2, 0]], I64)],
        np.take(cube.array, [[0, 2], [1, 1], [2, 0]], 1), axis=1)
    add("take_i64_flattened", "take", [cube, T([[23, 0], [7, -1]], I64)],
        np.take(cube.array, [[23, 0], [7, -1]]))
    add("take_bool_flattened_empty_indices", "take", [values(BOOL, (2, 2)), T([], I64)],
        np.zeros((0,), dtype=np.bool_))


def main():
    if np.lib.NumpyVersion(np.__version__) < "1.22.0":
        sys.exit("needs numpy >= 1.22 (argmax keepdims)")
    add_creation()
    add_binary_ops()
    add_type_promotion()
    add_scalar_forms()
    add_broadcasting()
    add_unary_ops()
    add_where()
    add_astype()
    add_reductions()
    add_movement()
    add_matmul()
    add_softmax()
    add_gather()
    cases.write(OUTPUT)
    print(f"wrote {len(cases.blocks)} cases, {os.path.getsize(OUTPUT)} bytes to {OUTPUT}")


if __name__ == "__main__":
    main()
