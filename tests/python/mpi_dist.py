"""lazuli.dist on every rank of an mpirun (tests/python/CMakeLists.txt runs it with 2 ranks).

Each rank's operand is a known function of its rank, so each rank computes the expected result
with numpy on its own."""
import inspect

import numpy as np
import pytest

import lazuli as lz

lz.dist.init()
RANK = lz.dist.rank()
RANKS = lz.dist.world_size()


def operand(r, dtype=np.float32):
    return (np.arange(6).reshape(2, 3) * (r + 1) - 2 * r).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_all_reduce_matches_numpy_over_the_ranks_operands(dtype):
    every = np.stack([operand(r, dtype) for r in range(RANKS)])
    x = lz.asarray(operand(RANK, dtype))
    np.testing.assert_array_equal(np.asarray(lz.dist.all_reduce(x)), every.sum(0))
    np.testing.assert_array_equal(np.asarray(lz.dist.all_reduce(x, "max")), every.max(0))
    np.testing.assert_array_equal(np.asarray(lz.dist.all_reduce(x, "min")), every.min(0))
    if np.issubdtype(dtype, np.floating):
        np.testing.assert_allclose(np.asarray(lz.dist.all_reduce(x, "mean")), every.mean(0))


def test_device_is_this_ranks_gpu_or_the_cpu():
    gpus = lz.cuda.device_count()
    expected = lz.Device(f"cuda:{lz.dist.local_rank() % gpus}") if gpus else lz.Device("cpu")
    assert lz.dist.device() == expected


def test_gather_scatter_and_broadcast_match_numpy():
    every = [operand(r) for r in range(RANKS)]
    x = lz.asarray(operand(RANK))
    np.testing.assert_array_equal(np.asarray(lz.dist.all_gather(x)), np.concatenate(every))
    # Each rank brings its operand once per rank; its part of the sum is the operands' sum.
    part = lz.dist.reduce_scatter(lz.asarray(np.concatenate([operand(RANK)] * RANKS)))
    np.testing.assert_array_equal(np.asarray(part), sum(every))
    for root in range(RANKS):
        np.testing.assert_array_equal(np.asarray(lz.dist.broadcast(x, root)), every[root])


def test_a_shape_mismatch_fails_every_rank_naming_the_python_line():
    y = lz.dist.all_reduce(lz.zeros((RANK + 1,)))
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(lz.Error) as raised:
        y.wait_to_read()
    message = str(raised.value)
    assert "the ranks reached different collectives" in message
    assert f"mpi_dist.py:{line}" in message
    assert float(lz.dist.all_reduce(lz.ones(())).item()) == RANKS  # still usable


def test_bad_reduce_op_is_an_error():
    with pytest.raises(lz.Error, match='"median" is not one of'):
        lz.dist.all_reduce(lz.ones((2,)), "median")


def test_data_parallel_sgd_takes_the_steps_of_one_process():
    rows = 4 * RANKS
    rng = np.random.default_rng(5)
    x = rng.standard_normal((rows, 3))
    t = rng.standard_normal((rows, 2))
    w0 = rng.standard_normal((3, 2))

    def loss_on(xs, ts):
        return lambda w: lz.mean(lz.square(lz.matmul(xs, w) - ts))

    params = lz.dist.broadcast_parameters([lz.asarray(w0 * (RANK + 1))])  # rank 0's: w0
    alone = [lz.asarray(w0)]
    sgd, sgd_alone = lz.optim.SGD(0.1, momentum=0.9), lz.optim.SGD(0.1, momentum=0.9)
    mine = slice(4 * RANK, 4 * RANK + 4)
    for _ in range(3):
        loss, grads = lz.dist.value_and_grad(
            loss_on(lz.asarray(x[mine]), lz.asarray(t[mine])), params, bucket_bytes=8
        )
        sgd.step(params, grads)
        _, grads_alone = lz.value_and_grad(loss_on(lz.asarray(x), lz.asarray(t)), alone)
        sgd_alone.step(alone, grads_alone)
    np.testing.assert_allclose(np.asarray(params[0]), np.asarray(alone[0]), rtol=1e-12)


def test_sharded_loader_and_moments():
    ids = np.arange(4 * RANKS, dtype=np.int64)
    loader = lz.data.DataLoader([ids], batch_size=2, seed=3, shards=RANKS, shard=RANK)
    seen = np.zeros(len(ids), dtype=np.int64)
    for (batch,) in loader:
        counts = np.bincount(np.asarray(batch), minlength=len(ids))
        seen += np.asarray(lz.dist.all_reduce(lz.asarray(counts)))
    np.testing.assert_array_equal(seen, np.ones(len(ids), dtype=np.int64))

    batch = np.array([[RANK, 100.0 + RANK * RANK], [RANK + 10.0, 50.0]])
    every = np.concatenate([[[r, 100.0 + r * r], [r + 10.0, 50.0]] for r in range(RANKS)])
    mean, variance = lz.dist.moments(lz.asarray(batch), 0)
    np.testing.assert_allclose(np.asarray(mean), every.mean(0))
    np.testing.assert_allclose(np.asarray(variance), every.var(0))
