"""Gradients against hand-derived values and float64 finite differences, the nn helpers, the
optimizers' steps against their formulas, and .npy files against numpy's own reader and writer."""

import numpy as np
import pytest

import lazuli as lz
from lazuli_test_helpers import assert_close, values

# ---- Gradients -----------------------------------------------------------------------------------


def test_grad_of_sum_of_squares_is_twice_x():
    x = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]], dtype=np.float32)
    grads = lz.grad(lambda t: lz.sum(t * t), [lz.asarray(x)])
    assert isinstance(grads, list) and len(grads) == 1
    assert_close(grads[0], 2 * x, dtype=lz.float32)


def test_grad_with_respect_to_several_parameters():
    a = np.array([0.5, -1.0, 2.0])
    b = np.array([3.0, 0.25, -2.0])
    grads = lz.grad(lambda p, q: lz.sum(p * q + lz.exp(p)) + lz.sum(q**2) * 0.5,
                    [lz.asarray(a), lz.asarray(b)])
    assert_close(grads[0], b + np.exp(a), rtol=1e-12, dtype=lz.float64)
    assert_close(grads[1], a + b, rtol=1e-12, dtype=lz.float64)


def test_value_and_grad():
    a = np.array([1.0, 2.0, 3.0])
    value, grads = lz.value_and_grad(lambda t: lz.sum(lz.sin(t)) * 2.0, [lz.asarray(a)])
    assert value.shape == ()
    assert value.item() == pytest.approx(2 * np.sin(a).sum(), rel=1e-12)
    assert_close(grads[0], 2 * np.cos(a), rtol=1e-12)


def test_vjp():
    x = lz.asarray(np.array([1.0, 2.0, -3.0]))
    y = x * x
    (g,) = lz.vjp([y], [x], [lz.full((3,), 3.0, dtype=lz.float64)])
    assert_close(g, 6 * np.array([1.0, 2.0, -3.0]), rtol=1e-12)


def test_grad_of_a_function_that_returns_no_tensor_is_an_error():
    with pytest.raises(lz.Error, match=r"\[grad\]"):
        lz.grad(lambda t: 3.0, [lz.zeros((2,))])
    with pytest.raises(lz.Error, match=r"\[grad\]"):
        lz.grad(lambda t: lz.sum(t), [lz.arange(3)])  # integers have no gradient


def test_a_python_exception_in_the_function_propagates_and_grad_still_works():
    x = lz.asarray(np.array([1.0, 3.0]))
    with pytest.raises(ZeroDivisionError):
        lz.grad(lambda t: 1 / 0, [x])
    with pytest.raises(lz.Error, match=r"\[mul\]"):
        lz.grad(lambda t: lz.sum(t * lz.zeros((3,))), [x])
    assert_close(lz.grad(lambda t: lz.sum(t * t * t), [x])[0], [3.0, 27.0], rtol=1e-12)


def test_stop_gradient():
    x = lz.asarray(np.array([1.0, 2.0]))
    (g,) = lz.grad(lambda t: lz.sum(t * lz.stop_gradient(t)), [x])
    assert_close(g, [1.0, 2.0], rtol=1e-12)  # d/dt (t * c) with c = t held constant


# ---- A small MLP against finite differences ------------------------------------------------------


def _numpy_mlp_loss(params, x, labels):
    w1, b1, w2, b2 = params
    hidden = np.maximum(x @ w1 + b1, 0)
    logits = hidden @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    log_z = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
    return np.mean(log_z - logits[np.arange(len(labels)), labels])


def test_mlp_parameters_layout():
    params = lz.nn.mlp_parameters([3, 5, 4], seed=0, dtype=lz.float64)
    assert [p.shape for p in params] == [(3, 5), (5,), (5, 4), (4,)]
    assert all(p.dtype == lz.float64 for p in params)
    assert values(params[1]).tolist() == [0.0] * 5 and values(params[3]).tolist() == [0.0] * 4
    again = lz.nn.mlp_parameters([3, 5, 4], seed=0, dtype=lz.float64)
    np.testing.assert_array_equal(values(params[0]), values(again[0]))
    assert lz.nn.mlp_parameters([3, 5, 4], seed=0)[0].dtype == lz.float32


def test_mlp_cross_entropy_gradient_matches_finite_differences(rng):
    sizes = [3, 6, 4]
    initial = lz.nn.mlp_parameters(sizes, seed=5, dtype=lz.float64)
    # Random biases too, so that every parameter matters; the weights are lazuli's own.
    numpy_params = [values(initial[0]).copy(), rng.standard_normal(6) * 0.1,
                    values(initial[2]).copy(), rng.standard_normal(4) * 0.1]
    x = rng.standard_normal((8, 3))
    labels = rng.integers(0, 4, size=8)

    def loss(*params):
        return lz.cross_entropy(lz.nn.mlp(list(params), lz.asarray(x)), lz.asarray(labels))

    value, grads = lz.value_and_grad(loss, [lz.asarray(p) for p in numpy_params])
    assert value.item() == pytest.approx(_numpy_mlp_loss(numpy_params, x, labels), rel=1e-12)
    eps = 1e-6
    for index, param in enumerate(numpy_params):
        numeric = np.zeros_like(param)
        for position in np.ndindex(param.shape):
            plus = [p.copy() for p in numpy_params]
            minus = [p.copy() for p in numpy_params]
            plus[index][position] += eps
            minus[index][position] -= eps
            numeric[position] = (_numpy_mlp_loss(plus, x, labels)
                                 - _numpy_mlp_loss(minus, x, labels)) / (2 * eps)
        assert grads[index].dtype == lz.float64
        np.testing.assert_allclose(values(grads[index]), numeric, rtol=1e-5, atol=1e-8,
                                   err_msg=f"parameter {index}")


def test_cross_entropy_gradient_is_softmax_minus_one_hot(rng):
    logits = rng.standard_normal((5, 3))
    labels = np.array([0, 2, 1, 1, 0])
    (g,) = lz.grad(lambda t: lz.cross_entropy(t, lz.asarray(labels)), [lz.asarray(logits)])
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    assert_close(g, (softmax - np.eye(3)[labels]) / 5, rtol=1e-10, atol=1e-12)


def test_linear_and_initializers(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    assert_close(lz.nn.linear(lz.asarray(x), lz.asarray(w), lz.asarray(b)), x @ w + b, rtol=1e-5)
    assert_close(lz.nn.linear(x, w, b), x @ w + b, rtol=1e-5)  # numpy arrays too
    params = lz.nn.mlp_parameters([3, 2], seed=0)
    assert_close(lz.nn.mlp(params, x), x @ values(params[0]) + values(params[1]), rtol=1e-5)
    bound = np.sqrt(6 / (200 + 300))
    glorot = values(lz.nn.glorot_uniform((200, 300), seed=1))
    assert glorot.shape == (200, 300) and np.abs(glorot).max() <= bound
    assert glorot.std() == pytest.approx(bound / np.sqrt(3), rel=0.02)
    he = values(lz.nn.he_normal((400, 100), seed=2, dtype=lz.float64))
    assert he.dtype == np.float64 and he.std() == pytest.approx(np.sqrt(2 / 400), rel=0.02)
    assert values(lz.nn.he_uniform((50, 10), seed=3)).max() <= np.sqrt(6 / 50)
    assert values(lz.nn.glorot_normal((300, 300), seed=4)).std() == pytest.approx(
        np.sqrt(2 / 600), rel=0.02)


# ---- Optimizers ----------------------------------------------------------------------------------


def test_sgd_step_updates_the_list_in_place():
    p = np.array([1.0, -2.0, 3.0])
    g = np.array([0.5, 0.5, -1.0])
    params = [lz.asarray(p)]
    original = params[0]
    optimizer = lz.optim.SGD(learning_rate=0.1)
    assert optimizer.learning_rate == 0.1
    optimizer.step(params, [lz.asarray(g)])
    assert params[0] is not original, "rebound to the stepped value"
    assert_close(params[0], p - 0.1 * g, rtol=1e-12)
    assert_close(original, p, rtol=0)  # the old value is unchanged
    optimizer.learning_rate = 0.5
    optimizer.step(params, [lz.asarray(g)])
    assert_close(params[0], p - 0.1 * g - 0.5 * g, rtol=1e-12)


def test_sgd_with_momentum_and_weight_decay():
    p0 = np.array([1.0, -1.0])
    g1 = np.array([0.2, 0.4])
    g2 = np.array([-0.1, 0.3])
    lr, momentum, decay = 0.1, 0.9, 0.01
    params = [lz.asarray(p0)]
    optimizer = lz.optim.SGD(learning_rate=lr, momentum=momentum, weight_decay=decay)
    optimizer.step(params, [lz.asarray(g1)])
    d1 = g1 + decay * p0
    v1 = d1
    p1 = p0 - lr * v1
    assert_close(params[0], p1, rtol=1e-12)
    optimizer.step(params, [lz.asarray(g2)])
    d2 = g2 + decay * p1
    v2 = momentum * v1 + d2
    assert_close(params[0], p1 - lr * v2, rtol=1e-12)
    nesterov = [lz.asarray(p0)]
    optimizer = lz.optim.SGD(learning_rate=lr, momentum=momentum, nesterov=True)
    optimizer.step(nesterov, [lz.asarray(g1)])
    assert_close(nesterov[0], p0 - lr * (g1 + momentum * g1), rtol=1e-12)


def test_adam_steps_follow_the_formula():
    p = np.array([0.5, -1.5, 2.0])
    grads = [np.array([0.1, -0.2, 0.3]), np.array([0.05, 0.4, -0.3])]
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    params = [lz.asarray(p)]
    optimizer = lz.optim.Adam(learning_rate=lr)
    m = np.zeros(3)
    v = np.zeros(3)
    expected = p.copy()
    for t, g in enumerate(grads, start=1):
        optimizer.step(params, [lz.asarray(g)])
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        expected = expected - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        assert_close(params[0], expected, rtol=1e-10, atol=1e-12)
    assert optimizer.steps == 2


def _classification_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4))
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    return lz.asarray(x.astype(np.float32)), lz.asarray(labels)


@pytest.mark.parametrize("make_optimizer", [
    lambda: lz.optim.SGD(learning_rate=0.5, momentum=0.5),
    lambda: lz.optim.Adam(learning_rate=0.05),
], ids=["sgd", "adam"])
def test_training_reduces_the_loss(make_optimizer):
    x, labels = _classification_data()
    params = lz.nn.mlp_parameters([4, 16, 3], seed=1)
    optimizer = make_optimizer()

    def loss(*p):
        return lz.cross_entropy(lz.nn.mlp(list(p), x), labels)

    losses = []
    for _ in range(15):
        value, grads = lz.value_and_grad(loss, params)
        optimizer.step(params, grads)
        losses.append(value.item())
    assert losses[-1] < 0.7 * losses[0], losses
    assert all(np.isfinite(losses))


# ---- .npy files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    np.linspace(-1, 1, 5),
    np.arange(-3, 3, dtype=np.int32),
    np.array([[2**40, -5]], dtype=np.int64),
    np.array([True, False, True]),
    np.array(3.5, dtype=np.float32),
], ids=["f32", "f64", "i32", "i64", "bool", "scalar"])
def test_save_npy_and_load_npy_round_trip(array, tmp_path):
    path = tmp_path / "x.npy"
    lz.save_npy(str(path), lz.asarray(array) + 0 if array.dtype != np.bool_ else lz.asarray(array))
    read_by_numpy = np.load(path)
    assert read_by_numpy.dtype == array.dtype and read_by_numpy.shape == array.shape
    np.testing.assert_array_equal(read_by_numpy, array)
    loaded = lz.load_npy(str(path))
    assert loaded.shape == array.shape
    np.testing.assert_array_equal(values(loaded), array)


def test_npy_paths_may_be_pathlib_paths(tmp_path):
    lz.save_npy(tmp_path / "p.npy", lz.arange(3) * 2)
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), [0, 2, 4])
    assert lz.load_npy(tmp_path / "p.npy").tolist() == [0, 2, 4]


def test_load_npy_of_numpy_files_in_other_layouts(tmp_path):
    fortran = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    np.save(tmp_path / "fortran.npy", fortran)
    np.testing.assert_array_equal(values(lz.load_npy(str(tmp_path / "fortran.npy"))), fortran)
    big_endian = np.arange(4, dtype=">i4")
    np.save(tmp_path / "big.npy", big_endian)
    assert lz.load_npy(str(tmp_path / "big.npy")).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int16, np.uint8, np.uint16, np.uint32])
def test_load_npy_widens_narrow_dtypes_as_asarray_does(dtype, tmp_path):
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    array = np.array([info.min, 0, 1, info.max], dtype=dtype).reshape(2, 2)
    np.save(tmp_path / "narrow.npy", array)
    loaded = lz.load_npy(tmp_path / "narrow.npy")
    converted = lz.asarray(array)
    assert loaded.dtype == converted.dtype
    np.testing.assert_array_equal(values(loaded), values(converted))
    np.testing.assert_array_equal(values(loaded), array.astype(values(converted).dtype))


def test_load_npy_of_a_bad_file_names_it(tmp_path):
    path = tmp_path / "bad.npy"
    path.write_bytes(b"not an npy file")
    with pytest.raises(lz.Error, match=r"\[load_npy\]") as raised:
        lz.load_npy(str(path))
    assert "bad.npy" in str(raised.value)


# ---- DataLoader ----------------------------------------------------------------------------------


def test_data_loader_epochs_are_aligned_permutations_in_batches():
    rows = np.arange(10, dtype=np.float32).reshape(10, 1) * 10
    labels = np.arange(10, dtype=np.int64)
    loader = lz.data.DataLoader([rows, labels], batch_size=4, seed=1)
    assert len(loader) == 3 and loader.size == 10
    orders = []
    for _ in range(2):
        batches = list(loader)
        assert [b[1].shape[0] for b in batches] == [4, 4, 2]
        order = [int(v) for b in batches for v in b[1].tolist()]
        for inputs, targets in batches:  # each row stays with its label
            np.testing.assert_array_equal(inputs.asnumpy()[:, 0], targets.asnumpy() * 10)
        assert sorted(order) == list(range(10))
        orders.append(order)
    assert orders[0] != orders[1]  # a new order per epoch


def test_data_loader_without_shuffle_keeps_order_and_can_drop_the_last_batch():
    labels = np.arange(7, dtype=np.int32)
    loader = lz.data.DataLoader([labels], batch_size=3, shuffle=False, drop_last=True)
    assert len(loader) == 2
    assert [b[0].tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    assert lz.data.DataLoader([labels], batch_size=3, shuffle=False).next()[0].tolist() == [0, 1, 2]


def test_an_iteration_overtaken_by_another_raises_instead_of_ending_early():
    labels = np.arange(10, dtype=np.int64)
    loader = lz.data.DataLoader([labels], batch_size=2, shuffle=False)
    first = iter(loader)
    assert next(first)[0].tolist() == [0, 1]
    assert len(list(loader)) == 5  # the second iteration runs whole
    with pytest.raises(RuntimeError, match=r"epoch 0\) was overtaken by another one \(epoch 1\)"):
        next(first)
    # An iteration left with break is no obstacle to the next.
    for _ in loader:
        break
    assert len(list(loader)) == 5
