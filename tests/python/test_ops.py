"""Every op of the Python package against numpy on the same inputs: elementwise math with
broadcasting, Python numbers on either side and PyTorch's type promotion, reductions, movement,
linear algebra and nn, indexing, and creation."""

import numpy as np
import pytest

import lazuli as lz
from lazuli_test_helpers import assert_close, values

F32 = dict(rtol=2e-6, atol=1e-6)


def random(rng, shape, dtype=np.float32, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


# ---- Elementwise unary ---------------------------------------------------------------------------


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY = {
    "exp": (lz.exp, np.exp, (-3, 3)),
    "log": (lz.log, np.log, (0.1, 5)),
    "sqrt": (lz.sqrt, np.sqrt, (0.0, 5)),
    "rsqrt": (lz.rsqrt, lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "sin": (lz.sin, np.sin, (-4, 4)),
    "cos": (lz.cos, np.cos, (-4, 4)),
    "tanh": (lz.tanh, np.tanh, (-4, 4)),
    "sigmoid": (lz.sigmoid, _sigmoid, (-6, 6)),
    "relu": (lz.relu, lambda x: np.maximum(x, 0), (-2, 2)),
    "abs": (lz.abs, np.abs, (-2, 2)),
    "square": (lz.square, np.square, (-2, 2)),
    "negative": (lz.negative, np.negative, (-2, 2)),
    "neg_operator": (lambda t: -t, np.negative, (-2, 2)),
    "abs_builtin": (abs, np.abs, (-2, 2)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name, dtype, rng):
    op, reference, (low, high) = UNARY[name]
    x = random(rng, (3, 5), dtype, low, high)
    result = op(lz.asarray(x))
    expected = reference(x.astype(np.float64)).astype(dtype)
    tolerance = F32 if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    assert_close(result, expected, dtype=lz.float32 if dtype == np.float32 else lz.float64,
                 **tolerance)


def test_every_unary_function_of_the_op_table_has_a_numpy_reference():
    missing = [name for name in lz._unary_functions if name not in UNARY]
    assert not missing, f"add them to UNARY: {missing}"


def test_every_elementwise_op_is_bound_under_its_numpy_name():
    assert "add" in lz._numpy_names and lz._numpy_names["sub"] == "subtract"
    unbound = {op: name for op, name in lz._numpy_names.items() if not hasattr(lz, name)}
    assert not unbound, f"ops whose numpy name the package lacks: {unbound}"


def test_unary_math_of_integers_computes_in_float32():
    x = np.array([0, 1, 2, 3], dtype=np.int32)
    assert_close(lz.exp(x), np.exp(x.astype(np.float32)), dtype=lz.float32, **F32)
    assert_close(lz.sqrt(lz.asarray(x)), np.sqrt(x.astype(np.float32)), dtype=lz.float32, **F32)
    # relu, abs and square keep the integer dtype.
    assert_close(lz.abs(lz.asarray(-x)), x, dtype=lz.int32)
    assert_close(lz.square(lz.asarray(x)), x * x, dtype=lz.int32)
    assert_close(lz.relu(lz.asarray(x - 2)), np.maximum(x - 2, 0), dtype=lz.int32)


def test_unary_functions_take_numpy_arrays_and_lists():
    assert_close(lz.exp([0.0, 1.0]), np.exp([0.0, 1.0]), **F32)
    assert_close(lz.tanh(np.array([0.5, -0.5])), np.tanh([0.5, -0.5]), dtype=lz.float64)


# ---- Elementwise binary --------------------------------------------------------------------------

# name: (lazuli function, operator form or None, numpy reference)
BINARY = {
    "add": (lz.add, lambda a, b: a + b, np.add),
    "subtract": (lz.subtract, lambda a, b: a - b, np.subtract),
    "multiply": (lz.multiply, lambda a, b: a * b, np.multiply),
    "divide": (lz.divide, lambda a, b: a / b, np.divide),
    "maximum": (lz.maximum, None, np.maximum),
    "minimum": (lz.minimum, None, np.minimum),
    "pow": (lz.pow, lambda a, b: a**b, np.power),
    "equal": (lz.equal, lambda a, b: a == b, np.equal),
    "not_equal": (lz.not_equal, lambda a, b: a != b, np.not_equal),
    "less": (lz.less, lambda a, b: a < b, np.less),
    "less_equal": (lz.less_equal, lambda a, b: a <= b, np.less_equal),
    "greater": (lz.greater, lambda a, b: a > b, np.greater),
    "greater_equal": (lz.greater_equal, lambda a, b: a >= b, np.greater_equal),
}


def _binary_inputs(rng, name):
    # Broadcasting (3,1,4) with (5,4); positive bases for pow; ties for the comparisons.
    a = random(rng, (3, 1, 4), np.float32, 0.5, 2.0)
    b = random(rng, (5, 4), np.float32, -2.0, 2.0)
    if name in ("equal", "not_equal", "less_equal", "greater_equal"):
        a = np.round(a * 2) / 2
        b = np.round(b * 2) / 2
    if name == "divide":
        b = np.where(np.abs(b) < 0.25, 1.0, b).astype(np.float32)
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_broadcasting_matches_numpy(name, rng):
    function, operator, reference = BINARY[name]
    a, b = _binary_inputs(rng, name)
    expected = reference(a, b)
    results = [function(lz.asarray(a), lz.asarray(b)), function(a, lz.asarray(b))]
    if operator is not None:
        results.append(operator(lz.asarray(a), lz.asarray(b)))
        results.append(operator(a, lz.asarray(b)))  # a numpy array on the left defers to lazuli
    for result in results:
        assert result.shape == (3, 5, 4)
        expected_dtype = lz.bool if expected.dtype == np.bool_ else lz.float32
        assert_close(result, expected, dtype=expected_dtype, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "maximum",
                                  "minimum", "less", "greater_equal", "equal"])
@pytest.mark.parametrize("scalar", [3, 0.5], ids=["int", "float"])
def test_binary_with_a_python_number_on_either_side(name, scalar, rng):
    function, operator, reference = BINARY[name]
    x = random(rng, (2, 3), np.float32, 0.5, 2.0)
    expected_right = reference(x, np.float32(scalar))
    expected_left = reference(np.float32(scalar), x)
    right = [function(lz.asarray(x), scalar)]
    left = [function(scalar, lz.asarray(x))]
    if operator is not None:
        right.append(operator(lz.asarray(x), scalar))
        left.append(operator(scalar, lz.asarray(x)))
    for result in right:
        assert_close(result, expected_right, rtol=1e-5)
        assert result.dtype == (lz.bool if expected_right.dtype == np.bool_ else lz.float32)
    for result in left:
        assert_close(result, expected_left, rtol=1e-5)
        assert result.dtype == (lz.bool if expected_left.dtype == np.bool_ else lz.float32)


# (left dtype, right operand: a numpy dtype for a tensor or a Python number, result dtype),
# PyTorch's rules: a number never widens a tensor of its own category; true division of integers
# gives float32; bool with an int number gives int64.
PROMOTION = [
    ("float32", 2.0, "mul", "float32"),
    ("float32", 2, "mul", "float32"),
    ("float64", 2.0, "mul", "float64"),
    ("int32", 2, "mul", "int32"),
    ("int32", 2.5, "mul", "float32"),
    ("int64", 2.5, "mul", "float32"),
    ("int64", 3, "add", "int64"),
    ("bool", 1, "add", "int64"),
    ("bool", 1.5, "mul", "float32"),
    ("int32", 2, "div", "float32"),
    ("int64", "int64", "div", "float32"),
    ("int32", "int64", "add", "int64"),
    ("int32", "float32", "add", "float32"),
    ("int64", "float32", "mul", "float32"),
    ("float32", "float64", "add", "float64"),
    ("bool", "int32", "add", "int32"),
    ("float32", 2.0, "less", "bool"),
]


@pytest.mark.parametrize("left, right, op, result", PROMOTION)
def test_type_promotion_follows_pytorch(left, right, op, result):
    a = np.array([0, 1, 3], dtype=left) if left != "bool" else np.array([True, False, True])
    tensor = lz.asarray(a)
    if isinstance(right, str):
        b = np.array([2, 1, 2], dtype=right)
        operand = lz.asarray(b)
    else:
        b = right
        operand = right
    computed = {"mul": tensor * operand, "add": tensor + operand, "div": tensor / operand,
                "less": tensor < operand}[op]
    assert computed.dtype == getattr(lz, result)
    numpy_result = {"mul": np.multiply, "add": np.add, "div": np.true_divide,
                    "less": np.less}[op](a.astype(np.float64), np.float64(b) if not
                                         isinstance(b, np.ndarray) else b.astype(np.float64))
    assert_close(computed, numpy_result.astype(np.dtype(result if result != "bool" else bool)),
                 rtol=1e-6)


def test_python_numbers_on_the_left_keep_the_tensor_dtype():
    i = lz.asarray(np.array([1, 2, 4], dtype=np.int32))
    assert_close(2 - i, np.array([1, 0, -2], dtype=np.int32), dtype=lz.int32)
    assert_close(10 * i, np.array([10, 20, 40], dtype=np.int32), dtype=lz.int32)
    assert_close(1 / i, np.array([1, 0.5, 0.25], dtype=np.float32), dtype=lz.float32)
    assert_close(2**i, np.array([2, 4, 16], dtype=np.int32), dtype=lz.int32)
    assert_close(2.0**i, np.array([2, 4, 16], dtype=np.float32), dtype=lz.float32)
    b = lz.asarray(np.array([True, False]))
    assert_close(1 + b, np.array([2, 1]), dtype=lz.int64)


def test_numpy_scalars_as_operands():
    x = lz.asarray(np.array([1.0, 2.0], dtype=np.float32))
    assert_close(x * np.float32(3), [3.0, 6.0], dtype=lz.float32)
    assert_close(np.float32(3) * x, [3.0, 6.0], dtype=lz.float32)
    assert_close(np.int64(2) + x, [3.0, 4.0], dtype=lz.float32)


def test_operators_are_also_methods_and_follow_pythons_protocol():
    i = lz.asarray(np.array([1, 2, 4], dtype=np.int64))
    # Python makes the methods from the type's slots: both spellings compute the same.
    assert_close(i.__add__(1), [2, 3, 5], dtype=lz.int64)
    assert_close(i.__radd__(1), [2, 3, 5], dtype=lz.int64)
    assert_close(i.__rsub__(10), [9, 8, 6], dtype=lz.int64)
    assert_close(lz.Tensor.__mul__(i, i), [1, 4, 16], dtype=lz.int64)
    assert_close(i.__rpow__(2), [2, 4, 16], dtype=lz.int64)
    assert_close(i.__ge__(2), [False, True, True], dtype=lz.bool)
    assert i.__add__("a") is NotImplemented and i.__eq__(None) is NotImplemented
    assert +i is i  # tensors are immutable
    assert_close(abs(-i), [1, 2, 4], dtype=lz.int64)
    assert_close(np.array([1, 0, 1]) @ i, 5, dtype=lz.int64)
    with pytest.raises(TypeError):
        pow(i, 2, 3)  # no modulus, as numpy
    assert_close(2 < i, [False, False, True], dtype=lz.bool)  # Python swaps it: i > 2
    blank = lz.Tensor.__new__(lz.Tensor)  # never initialized: an error, never a crash
    for operation in (lambda: blank + 1, lambda: i + blank, lambda: blank * i, lambda: i == blank,
                      lambda: i @ blank, lambda: -blank, lambda: lz.exp(blank)):
        with pytest.raises(TypeError, match="holds no value"):
            operation()


def test_integer_arithmetic_is_exact():
    big = np.array([2**40 + 1, -(2**40) - 3], dtype=np.int64)
    assert_close(lz.asarray(big) * 3 + 7, big * 3 + 7, dtype=lz.int64)
    assert_close(lz.asarray(big) - lz.asarray(big[::-1].copy()), big - big[::-1], dtype=lz.int64)


def test_where_and_astype(rng):
    x = random(rng, (4, 3))
    y = random(rng, (3,))
    cond = x > 0
    assert_close(lz.where(cond, x, y), np.where(cond, x, y), **F32)
    assert_close(lz.where(lz.asarray(cond), 1.0, lz.asarray(x)), np.where(cond, 1.0, x), **F32)
    assert_close(lz.where(cond, x, 0), np.where(cond, x, 0), dtype=lz.float32, **F32)
    assert_close(lz.where(cond, 1, 2), np.where(cond, 1, 2), dtype=lz.int64)
    # float to int truncates toward zero, as numpy's astype.
    t = lz.asarray(x * 3)
    assert_close(t.astype(lz.int32), (x * 3).astype(np.int32), dtype=lz.int32)
    assert_close(lz.astype(t, lz.float64), (x * 3).astype(np.float64), dtype=lz.float64)
    assert_close(t.astype("int64"), (x * 3).astype(np.int64), dtype=lz.int64)
    assert_close(t.astype(np.int32), (x * 3).astype(np.int32), dtype=lz.int32)
    assert_close(t.astype(np.dtype("float64")), (x * 3).astype(np.float64), dtype=lz.float64)
    assert_close(t.astype(lz.bool), (x * 3) != 0, dtype=lz.bool)


def test_nan_wins_in_maximum_and_minimum():
    a = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    b = np.array([np.nan, 2.0, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(values(lz.maximum(a, lz.asarray(b))), np.maximum(a, b))
    np.testing.assert_array_equal(values(lz.minimum(lz.asarray(a), b)), np.minimum(a, b))


# ---- Reductions ----------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": (lz.sum, np.sum),
    "mean": (lz.mean, np.mean),
    "max": (lz.max, np.max),
    "min": (lz.min, np.min),
    "logsumexp": (lz.logsumexp, lambda x, axis, keepdims: np.log(
        np.sum(np.exp(x), axis=axis, keepdims=keepdims))),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 1)], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_numpy(name, axis, keepdims, rng):
    function, reference = REDUCTIONS[name]
    x = random(rng, (2, 3, 4))
    expected = reference(x.astype(np.float64), axis=axis, keepdims=keepdims)
    assert_close(function(lz.asarray(x), axis=axis, keepdims=keepdims), expected,
                 dtype=lz.float32, rtol=1e-5, atol=1e-5)
    if name != "logsumexp":  # the method form, as numpy's x.sum(axis, keepdims)
        method = getattr(lz.asarray(x), name)
        assert_close(method(axis, keepdims), expected, rtol=1e-5, atol=1e-5)


def test_reduction_dtypes_follow_pytorch():
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = i % 3 == 0
    assert_close(lz.sum(i), i.sum(), dtype=lz.int64)
    assert_close(lz.sum(b, axis=1), b.sum(axis=1), dtype=lz.int64)
    assert_close(lz.mean(i, axis=0), i.mean(axis=0), dtype=lz.float32)
    assert_close(lz.max(i, axis=1), i.max(axis=1), dtype=lz.int32)
    assert_close(lz.min(lz.asarray(i)), i.min(), dtype=lz.int32)
    assert_close(lz.logsumexp(i, axis=1), np.log(np.exp(i.astype(np.float64)).sum(axis=1)),
                 dtype=lz.float32, rtol=1e-6)


def test_logsumexp_does_not_overflow():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1001.0]], dtype=np.float32)
    m = x.max(axis=1, keepdims=True)
    expected = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    assert_close(lz.logsumexp(x, axis=1), expected, rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_and_argmin_match_numpy(axis, keepdims, rng):
    x = random(rng, (3, 5))
    x[1, 2] = x[1, 4] = 9.0  # ties give the first index
    assert_close(lz.argmax(x, axis, keepdims=keepdims),
                 np.argmax(x, axis=axis, keepdims=keepdims), dtype=lz.int64)
    assert_close(lz.argmin(lz.asarray(x), axis=axis, keepdims=keepdims),
                 np.argmin(x, axis=axis, keepdims=keepdims), dtype=lz.int64)


# ---- Movement ------------------------------------------------------------------------------------


def test_reshape_and_transpose(rng):
    x = random(rng, (2, 3, 4))
    t = lz.asarray(x)
    assert_close(lz.reshape(t, (4, -1)), x.reshape(4, -1))
    assert_close(t.reshape(6, 4), x.reshape(6, 4))
    assert_close(t.reshape((3, 8)), x.reshape(3, 8))
    assert_close(t.reshape(-1), x.reshape(-1))
    assert_close(t.reshape(np.int64(24)), x.reshape(24))
    assert_close(t.sum(axis=np.int64(1)), x.sum(axis=1), rtol=1e-5)
    assert_close(lz.mean(t, axis=(np.int32(0), -1)), x.mean(axis=(0, -1)), rtol=1e-5)
    assert_close(lz.transpose(t), x.transpose())
    assert_close(lz.transpose(t, (1, 0, 2)), x.transpose(1, 0, 2))
    assert_close(t.transpose(2, 0, 1), x.transpose(2, 0, 1))
    assert_close(t.transpose((0, 2, 1)), x.transpose(0, 2, 1))
    assert_close(t.transpose(), x.transpose())
    assert_close(t.T, x.T)
    assert_close(lz.transpose(t, (-1, 0, 1)), x.transpose(-1, 0, 1))


def test_broadcast_to_concatenate_expand_dims_squeeze(rng):
    x = random(rng, (3, 1))
    assert_close(lz.broadcast_to(x, (2, 3, 4)), np.broadcast_to(x, (2, 3, 4)))
    a = random(rng, (2, 3))
    b = random(rng, (2, 2))
    c = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_close(lz.concatenate([a, b], axis=1), np.concatenate([a, b], axis=1))
    assert_close(lz.concatenate([lz.asarray(a), b], axis=-1), np.concatenate([a, b], axis=-1))
    assert_close(lz.concatenate([a, lz.asarray(a), a]), np.concatenate([a, a, a]))
    mixed = lz.concatenate([lz.asarray(a), lz.asarray(c)], axis=0)  # promoted to float32
    assert_close(mixed, np.concatenate([a, c.astype(np.float32)]), dtype=lz.float32)
    assert_close(lz.expand_dims(a, 0), np.expand_dims(a, 0))
    assert_close(lz.expand_dims(a, -1), np.expand_dims(a, -1))
    assert_close(lz.expand_dims(a, 1), np.expand_dims(a, 1))
    y = random(rng, (1, 3, 1, 2))
    assert_close(lz.squeeze(y), np.squeeze(y))
    assert_close(lz.squeeze(y, 2), np.squeeze(y, 2))
    assert_close(lz.squeeze(y, (0, -2)), np.squeeze(y, (0, -2)))


def test_slice_function(rng):
    x = random(rng, (5, 6))
    assert_close(lz.slice(x, [1, 0], [4, 6], [2, 3]), x[1:4:2, 0:6:3])
    assert_close(lz.slice(x, [-2], [100]), x[-2:100])


def test_take_and_take_along_axis(rng):
    x = random(rng, (4, 5))
    idx = np.array([[3, 0], [-1, 2]])
    assert_close(lz.take(x, idx, axis=1), np.take(x, idx, axis=1))
    assert_close(lz.take(x, idx, axis=0), np.take(x, idx, axis=0))
    assert_close(lz.take(x, [7, 0, -1]), np.take(x, [7, 0, -1]))  # flattened
    assert_close(lz.take(lz.asarray(x), lz.asarray(np.array([1, 1], dtype=np.int32)), axis=-1),
                 np.take(x, [1, 1], axis=-1))
    order = np.argsort(x, axis=1)
    assert_close(lz.take_along_axis(x, order, axis=1), np.take_along_axis(x, order, axis=1))
    top = np.argmax(x, axis=0)[None, :]
    assert_close(lz.take_along_axis(lz.asarray(x), top, 0), np.take_along_axis(x, top, 0))


def test_take_outside_the_axis_reads_nan():
    # lazuli's documented fill mode (as JAX): an index outside the axis shows as NaN.
    got = values(lz.take(np.array([1.0, 2.0], dtype=np.float32), [0, 5]))
    assert got[0] == 1.0 and np.isnan(got[1])


# ---- Linear algebra and nn -----------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)),
                                    ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2))], ids=str)
def test_matmul_matches_numpy(shapes, rng):
    a = random(rng, shapes[0])
    b = random(rng, shapes[1])
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert_close(lz.matmul(a, b), expected, rtol=1e-5, atol=1e-5)
    assert_close(lz.asarray(a) @ lz.asarray(b), expected, rtol=1e-5, atol=1e-5)
    assert_close(lz.asarray(a) @ b, expected, rtol=1e-5, atol=1e-5)
    assert_close(a @ lz.asarray(b), expected, rtol=1e-5, atol=1e-5)


def test_matmul_float64_and_from_lists(rng):
    a = rng.standard_normal((6, 7))
    b = rng.standard_normal((7, 3))
    assert_close(lz.matmul(a, b), a @ b, dtype=lz.float64, rtol=1e-12, atol=1e-12)
    assert_close(lz.asarray(np.eye(2)) @ [[1.0, 2.0], [3.0, 4.0]], [[1, 2], [3, 4]])
    assert_close([[1.0, 2.0]] @ lz.asarray(np.eye(2)), [[1, 2]])


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax(axis, rng):
    x = random(rng, (3, 4, 5), low=-5, high=5).astype(np.float64)
    assert_close(lz.softmax(x, axis), _softmax(x, axis), rtol=1e-12, atol=1e-12)
    assert_close(lz.log_softmax(lz.asarray(x), axis=axis), np.log(_softmax(x, axis)), rtol=1e-12,
                 atol=1e-12)


def test_softmax_defaults_to_the_last_axis_and_is_stable():
    x = np.array([[1000.0, 1001.0, 999.0]], dtype=np.float32)
    assert_close(lz.softmax(x), _softmax(x.astype(np.float64), -1), rtol=1e-6)
    assert_close(lz.log_softmax(x), np.log(_softmax(x.astype(np.float64), -1)), rtol=1e-6)


def test_one_hot():
    labels = np.array([[0, 2], [1, 3]])
    expected = (labels[..., None] == np.arange(3)).astype(np.float32)  # 3 is outside: all zeros
    assert_close(lz.one_hot(labels, 3), expected, dtype=lz.float32)
    assert_close(lz.one_hot(lz.asarray(labels.astype(np.int32)), 4, dtype=lz.int64),
                 (labels[..., None] == np.arange(4)).astype(np.int64), dtype=lz.int64)


def test_cross_entropy(rng):
    logits = rng.standard_normal((6, 4))
    labels = np.array([0, 3, 1, 1, 2, 0])
    log_probabilities = np.log(_softmax(logits, -1))
    expected = -log_probabilities[np.arange(6), labels].mean()
    result = lz.cross_entropy(logits, labels)
    assert result.shape == ()
    assert_close(result, expected, rtol=1e-12)
    assert abs(lz.cross_entropy(lz.asarray(logits.astype(np.float32)), labels).item()
               - expected) < 1e-5
    # A label outside [0, classes) shows in the loss instead of hiding in it.
    assert np.isnan(lz.cross_entropy(logits, np.array([0, 3, 1, 4, 2, 0])).item())


# ---- Indexing ------------------------------------------------------------------------------------

BASE = np.arange(60, dtype=np.float32).reshape(3, 4, 5)

INDEX_KEYS = [
    1,
    -1,
    (1, 2),
    (-1, -2, -3),
    (2, 3, 4),
    slice(None, None, 2),
    slice(None, None, -1),
    (slice(None), slice(3, None, -2)),
    (slice(None), slice(None), slice(-1, 0, -2)),
    (slice(2, 0, -1), slice(None, -5, -1)),
    slice(-100, 100),
    slice(4, 1),
    (Ellipsis, 1),
    (1, Ellipsis),
    (Ellipsis, slice(1, 3), None),
    None,
    (None, 1),
    (1, None, Ellipsis, None),
    (slice(1, 3), None, slice(None, None, -2)),
    Ellipsis,
    [2, 0],
    [-1, 0, 0],
    (slice(None), [3, 0, -1]),
    (Ellipsis, [4, 0]),
    (1, [0, 2]),
    (None, slice(None), [1]),
    np.array([[0, 1], [2, 2]]),
    (slice(None), np.array([1, 3], dtype=np.int32)),
    np.int64(2),
    (np.int32(-1), slice(None, None, 3)),
    np.array(1),  # a 0-d integer array is a position, as in numpy
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=repr)
def test_indexing_matches_numpy(key):
    x = lz.asarray(BASE)
    assert_close(x[key], BASE[key])


def test_indexing_with_tensors():
    x = lz.asarray(BASE)
    assert_close(x[lz.asarray(np.array([2, 1]))], BASE[[2, 1]])
    assert_close(x[:, lz.asarray(np.array([[0], [3]]))], BASE[:, [[0], [3]]])
    assert_close(x[lz.asarray(2)], BASE[2])  # a 0-d integer tensor drops its axis
    assert_close(x[1][2][3], BASE[1, 2, 3])


def test_iteration_and_len():
    x = lz.asarray(BASE[0])
    rows = list(x)
    assert len(x) == 4 and len(rows) == 4
    for row, expected in zip(rows, BASE[0]):
        assert_close(row, expected)
    with pytest.raises(TypeError):
        list(lz.zeros(()))  # as numpy: a 0-d tensor is not iterable
    assert list(lz.zeros((0, 2))) == []
    assert 5.0 in lz.asarray(BASE[0, 1]) and 4.0 not in lz.asarray(BASE[0, 1])


# ---- Creation ------------------------------------------------------------------------------------


def test_zeros_ones_full():
    assert_close(lz.zeros((2, 3)), np.zeros((2, 3), np.float32), dtype=lz.float32)
    assert_close(lz.zeros(4, dtype=lz.int32), np.zeros(4, np.int32), dtype=lz.int32)
    assert_close(lz.zeros((2,), dtype="float64"), np.zeros(2), dtype=lz.float64)
    assert_close(lz.zeros((), dtype=np.int64), np.zeros((), np.int64), dtype=lz.int64)
    assert_close(lz.ones((3,), dtype=lz.bool), np.ones(3, bool), dtype=lz.bool)
    assert_close(lz.ones((2, 2), dtype=np.float64), np.ones((2, 2)), dtype=lz.float64)
    assert_close(lz.full((2, 2), 7), np.full((2, 2), 7, np.int64), dtype=lz.int64)
    assert_close(lz.full((2,), 2.5), np.full(2, 2.5, np.float32), dtype=lz.float32)
    assert_close(lz.full((2,), True), np.full(2, True), dtype=lz.bool)
    assert_close(lz.full((3,), 3, dtype=lz.float64), np.full(3, 3.0), dtype=lz.float64)
    assert_close(lz.full((2,), -(2**40), dtype=lz.int64), np.full(2, -(2**40)), dtype=lz.int64)
    assert lz.zeros((0, 3)).shape == (0, 3)
    # numpy scalars keep their own dtype, as in numpy; numpy integers are shapes.
    assert_close(lz.full((2,), np.int32(3)), np.full(2, 3, np.int32), dtype=lz.int32)
    assert_close(lz.full((2,), np.float64(0.1)), np.full(2, 0.1), dtype=lz.float64)
    assert_close(lz.full((2,), np.bool_(True)), np.full(2, True), dtype=lz.bool)
    assert_close(lz.zeros(np.int64(3)), np.zeros(3, np.float32))
    assert_close(lz.ones((np.int32(2), 2)), np.ones((2, 2), np.float32))
    assert values(lz.zeros((0, 3))).shape == (0, 3)


def test_arange():
    assert_close(lz.arange(5), np.arange(5), dtype=lz.int64)
    assert_close(lz.arange(2, 11, 3), np.arange(2, 11, 3), dtype=lz.int64)
    assert_close(lz.arange(5, 0, -2), np.arange(5, 0, -2), dtype=lz.int64)
    assert_close(lz.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32),
                 dtype=lz.float32)
    assert_close(lz.arange(4.0), np.arange(4, dtype=np.float32), dtype=lz.float32)
    assert_close(lz.arange(3, dtype=lz.float64), np.arange(3.0), dtype=lz.float64)
    assert_close(lz.arange(1, 4, dtype="int32"), np.arange(1, 4, dtype=np.int32), dtype=lz.int32)
    assert_close(lz.arange(np.int64(3)), np.arange(3), dtype=lz.int64)
    assert_close(lz.arange(np.int32(1), 7, np.int64(2)), np.arange(1, 7, 2), dtype=lz.int64)


@pytest.mark.parametrize("draw", [lz.random_uniform, lz.random_normal])
def test_random_is_deterministic_by_seed(draw):
    a = draw((3, 4), seed=7)
    b = draw((3, 4), 7)
    c = draw((3, 4), seed=8)
    assert a.shape == (3, 4) and a.dtype == lz.float32
    np.testing.assert_array_equal(values(a), values(b))
    assert not np.array_equal(values(a), values(c))
    assert draw((2,), seed=1, dtype=lz.float64).dtype == lz.float64


def test_random_distributions():
    u = values(lz.random_uniform((100_000,), seed=3, low=-1.0, high=3.0))
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 0.03 and abs(u.std() - 4 / np.sqrt(12)) < 0.03
    n = values(lz.random_normal((100_000,), seed=3, mean=2.0, std=0.5))
    assert abs(n.mean() - 2.0) < 0.01 and abs(n.std() - 0.5) < 0.01
