"""numpy and DLPack interoperation: what is shared and what is copied, lifetimes across garbage
collection, dtype widening, and round trips through PyTorch and JAX where they are installed."""

import gc
import time
import weakref

import numpy as np
import pytest

import lazuli as lz
from lazuli_test_helpers import assert_close, values


def collect_until(predicate, seconds=5.0):
    """Runs the garbage collector (and lets the interpreter run its pending calls, by which
    lazuli's threads hand back Python objects) until `predicate()` holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gc.collect()
        if predicate():
            return True
        time.sleep(0.001)
    return predicate()


# ---- numpy to lazuli ----------------------------------------------------------------------------


def test_asarray_shares_the_memory_of_a_contiguous_array():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = lz.asarray(a)
    assert t.shape == (3, 4) and t.dtype == lz.float32
    assert np.shares_memory(np.asarray(t), a), "a C-contiguous array of a lazuli dtype is borrowed"
    assert_close(t * 2, a * 2)


def test_array_copies():
    a = np.arange(4, dtype=np.float64)
    t = lz.array(a)
    a[:] = -1  # later writes to the source do not show
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not np.shares_memory(np.asarray(t), a)
    assert lz.array([1, 2]).tolist() == [1, 2]
    assert lz.array(np.arange(3), dtype=lz.float32).dtype == lz.float32


def test_tensor_of_an_array_outlives_the_array_name_and_releases_it_when_dropped():
    a = np.arange(1000, dtype=np.float32)
    alive = weakref.ref(a)
    t = lz.asarray(a)
    del a
    gc.collect()
    assert alive() is not None, "the tensor holds the array it reads"
    np.testing.assert_array_equal(values(t + 1), np.arange(1000, dtype=np.float32) + 1)
    del t
    assert collect_until(lambda: alive() is None), "the array is let go once the tensor is gone"


def _tensor_of_a_local_array():
    owner = {"array": np.linspace(0.0, 1.0, 50)}
    return lz.asarray(owner["array"]) * 1.0  # pending: reads the array later


def test_tensor_stays_valid_after_the_arrays_owner_is_gone():
    t = _tensor_of_a_local_array()
    gc.collect()
    for _ in range(3):  # memory freed meanwhile would be reused by these
        np.ones(50) * 7.0
        lz.ones((50,), dtype=lz.float64).tolist()
    assert_close(t, np.linspace(0.0, 1.0, 50), rtol=0, atol=0)


def test_pending_tensors_of_arrays_dropped_unread_release_the_arrays():
    refs = []
    for i in range(200):
        a = np.full((64,), i, dtype=np.float32)
        refs.append(weakref.ref(a))
        t = lz.asarray(a) * 2 + 1
        del a, t
    lz.waitall()
    assert collect_until(lambda: all(r() is None for r in refs)), \
        f"{sum(r() is not None for r in refs)} arrays still held"


@pytest.mark.parametrize("make", [
    lambda: np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2],
    lambda: np.arange(24, dtype=np.float64).reshape(4, 6).T,
    lambda: np.asfortranarray(np.arange(24, dtype=np.int32).reshape(4, 6)),
    lambda: np.arange(24, dtype=np.int64)[::-3],
    lambda: np.broadcast_to(np.arange(3, dtype=np.float32), (4, 3)),
], ids=["strided", "transposed", "fortran", "reversed", "broadcast"])
def test_non_contiguous_arrays_are_copied_in_order(make):
    a = make()
    t = lz.asarray(a)
    assert t.shape == a.shape
    assert_close(t, a, rtol=0, atol=0)
    assert_close(t + 0, a, rtol=0, atol=0)


def test_misaligned_array_is_copied():
    raw = np.zeros(4 * 5 + 1, dtype=np.uint8)
    a = np.frombuffer(raw.data, dtype=np.float32, count=5, offset=1)
    assert not a.flags.aligned
    raw[1:] = np.arange(5, dtype=np.float32).view(np.uint8)
    assert_close(lz.asarray(a), np.arange(5, dtype=np.float32), rtol=0, atol=0)


@pytest.mark.parametrize("source, widened", [
    (np.float16, lz.float32), (np.uint8, lz.int32), (np.int8, lz.int32), (np.int16, lz.int32),
    (np.uint16, lz.int32), (np.uint32, lz.int64),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_narrow_dtypes_are_widened_exactly(source, widened):
    info = np.finfo(source) if np.issubdtype(source, np.floating) else np.iinfo(source)
    a = np.array([0, 1, info.max, info.min, 3], dtype=source)
    t = lz.asarray(a)
    assert t.dtype == widened
    expected = a.astype(np.float32 if widened == lz.float32 else
                        np.int32 if widened == lz.int32 else np.int64)
    assert_close(t, expected, rtol=0, atol=0)
    assert values(t).tolist() == a.tolist()


def test_float16_fractions_are_kept():
    a = (np.arange(8, dtype=np.float16) / np.float16(3)).astype(np.float16)
    assert_close(lz.asarray(a), a.astype(np.float32), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4", ">i8"])
def test_big_endian_arrays_are_read_in_native_order(dtype):
    a = np.array([1, -2, 300, 7], dtype=dtype)
    t = lz.asarray(a)
    assert t.tolist() == [1, -2, 300, 7]
    assert str(t.dtype) == np.dtype(dtype).newbyteorder("=").name


def test_asarray_of_python_values_and_dtypes():
    assert lz.asarray(3).dtype == lz.int64 and lz.asarray(3).shape == ()
    # Python floats are float32, as lz.full's and the operators' (PyTorch's and JAX's choice too);
    # numpy's float64 stays float64.
    assert lz.asarray(2.5).dtype == lz.float32 and lz.asarray(2.5).item() == 2.5
    assert lz.asarray([1.5, 2]).dtype == lz.float32
    assert lz.asarray(np.array([1.5, 2])).dtype == lz.float64
    assert lz.asarray(np.float64(2.5)).dtype == lz.float64
    assert lz.array([0.1]).tolist() == [np.float32(0.1)]
    assert lz.asarray(True).dtype == lz.bool
    assert lz.asarray([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert lz.asarray((1.0, 2.0)).dtype == lz.float32
    assert lz.asarray([1, 2], dtype=lz.float32).dtype == lz.float32
    assert lz.asarray([1, 2], dtype="int32").dtype == lz.int32
    assert lz.asarray(np.arange(3), dtype=np.float64).tolist() == [0.0, 1.0, 2.0]
    t = lz.arange(3)
    assert lz.asarray(t) is t
    assert lz.asarray(t, dtype=lz.float64).dtype == lz.float64
    readonly = np.arange(3.0)
    readonly.setflags(write=False)
    assert lz.asarray(readonly).tolist() == [0.0, 1.0, 2.0]
    assert lz.asarray(np.zeros((0, 2))).shape == (0, 2)


# ---- lazuli to numpy ----------------------------------------------------------------------------


def test_asnumpy_of_a_computed_tensor_is_read_only():
    t = lz.arange(5) * 2
    array = t.asnumpy()
    assert not array.flags.writeable
    with pytest.raises(ValueError):
        array[0] = 1
    np.testing.assert_array_equal(array, [0, 2, 4, 6, 8])


def test_numpy_views_of_one_tensor_share_its_buffer():
    t = lz.arange(6.0) * 3
    first = np.asarray(t)
    second = np.asarray(t)
    assert np.shares_memory(first, second)
    assert np.shares_memory(t.asnumpy(), first)


def test_numpy_array_of_a_tensor_stays_valid_after_the_tensor_is_gone():
    t = lz.arange(10_000) * 2 + 1
    array = np.asarray(t)
    del t
    gc.collect()
    for i in range(5):  # would reuse a freed buffer
        (lz.arange(10_000) * 0 - i).tolist()
    np.testing.assert_array_equal(array, np.arange(10_000) * 2 + 1)


def test_copy_and_astype_through_array_protocol():
    t = lz.arange(4) + 1
    copy = np.array(t, copy=True)
    assert copy.flags.writeable
    copy[0] = 99
    assert t.tolist() == [1, 2, 3, 4]
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float32), [1.0, 2.0, 3.0, 4.0])
    assert np.asarray(t, dtype=np.float32).flags.writeable  # a converted copy
    assert np.shares_memory(np.asarray(t, copy=False), np.asarray(t))
    assert np.shares_memory(np.asarray(t, dtype=np.int64, copy=False), np.asarray(t))
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float64, copy=False)  # a conversion cannot avoid a copy


# ---- Memory lazuli writes over ------------------------------------------------------------------
# A kernel writes its output over an input of 1 MiB or more that nothing can read after it (an
# optimizer's new state over the old); never over memory numpy or a DLPack consumer can see.

IN_PLACE_ELEMENTS = 1 << 18  # float32: 1 MiB


def written_in_place(compute):
    """How many outputs compute() had lazuli write over an input (lz.waitall would compute the
    pending work before it)."""
    before = lz.stats()["outputs_written_in_place"]
    compute()
    lz.waitall()
    return lz.stats()["outputs_written_in_place"] - before


def halves():
    x = lz.arange(IN_PLACE_ELEMENTS).astype(lz.float32) * 0.5
    x.wait_to_read()
    return x


def test_an_input_only_its_reader_holds_is_written_over():
    x = halves()
    y = x * 2 + 1
    del x
    assert written_in_place(y.wait_to_read) == 1
    np.testing.assert_array_equal(np.asarray(y), np.arange(IN_PLACE_ELEMENTS, dtype=np.float32) + 1)


def test_stats_give_the_host_bytes_in_use_and_their_peak():
    lz.waitall()
    lz.reset_stats()
    before = lz.stats()["bytes_in_use"]
    assert lz.stats()["peak_bytes_in_use"] == before
    x = halves()
    assert lz.stats()["bytes_in_use"] == before + 4 * IN_PLACE_ELEMENTS
    del x
    assert lz.stats()["bytes_in_use"] == before
    assert lz.stats()["peak_bytes_in_use"] == before + 4 * IN_PLACE_ELEMENTS


def test_a_borrowed_numpy_array_is_never_written_over():
    a = np.arange(IN_PLACE_ELEMENTS, dtype=np.float32)
    x = lz.asarray(a)  # shares a's memory
    y = x * 2 + 1
    del x
    assert written_in_place(y.wait_to_read) == 0
    np.testing.assert_array_equal(np.asarray(y), a * 2 + 1)
    np.testing.assert_array_equal(a, np.arange(IN_PLACE_ELEMENTS, dtype=np.float32))


def test_memory_exported_to_numpy_or_through_dlpack_is_never_written_over():
    expected = np.arange(IN_PLACE_ELEMENTS, dtype=np.float32) * 0.5
    x = halves()
    view = np.asarray(x)  # lazuli's own buffer, read-only
    try:
        exported = np.from_dlpack(x, copy=False)
    except (BufferError, TypeError):  # an older numpy cannot import read-only memory
        exported = view
    y = x * 2 + 1
    del x
    assert written_in_place(y.wait_to_read) == 0
    np.testing.assert_array_equal(np.asarray(y), expected * 2 + 1)
    np.testing.assert_array_equal(view, expected)
    np.testing.assert_array_equal(exported, expected)


# ---- DLPack -------------------------------------------------------------------------------------


def test_from_dlpack_of_a_numpy_array():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = lz.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype == lz.float32
    assert_close(t * 2, a * 2)


def test_a_dlpack_consumer_gets_a_copy_it_may_write():
    # As PyTorch's from_dlpack: what it writes must not reach lazuli's result.
    t = lz.arange(4) * 3
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    array = np.from_dlpack(t)
    np.testing.assert_array_equal(array, [0, 3, 6, 9])
    array *= 100
    assert t.tolist() == [0, 3, 6, 9] and (t + 1).tolist() == [1, 4, 7, 10]
    assert type(t.__dlpack__()).__name__ == "PyCapsule"  # a consumer of the older DLPack too


def test_a_dlpack_consumer_asking_for_no_copy_gets_a_read_only_view():
    t = lz.arange(4) * 3
    try:
        view = np.from_dlpack(t, copy=False)
    except (BufferError, TypeError) as error:  # an older numpy cannot export read-only memory
        pytest.skip(f"numpy {np.__version__} cannot import a read-only DLPack tensor: {error}")
    assert not view.flags.writeable and np.shares_memory(view, t.asnumpy())
    del t
    gc.collect()
    np.testing.assert_array_equal(view, [0, 3, 6, 9])
    # A consumer of the older DLPack (no max_version) cannot be told the memory is read-only.
    with pytest.raises(BufferError):
        (lz.arange(4.0) * 1.5).__dlpack__(copy=False)


def test_torch_round_trip():
    torch = pytest.importorskip("torch")
    t = lz.arange(6.0).reshape(2, 3) * 2
    as_torch = torch.from_dlpack(t)
    assert tuple(as_torch.shape) == (2, 3) and as_torch.dtype == torch.float32
    assert as_torch.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    del t
    gc.collect()
    assert as_torch.sum().item() == 30.0
    source = torch.arange(6, dtype=torch.float64).reshape(3, 2)
    back = lz.from_dlpack(source)
    assert back.dtype == lz.float64
    assert (back + 1).tolist() == (source + 1).tolist()
    assert lz.asarray(source.to(torch.int32)).dtype == lz.int32
    assert lz.asarray(torch.tensor([True, False])).tolist() == [True, False]
    twice = torch.from_dlpack(lz.from_dlpack(source) * 2)
    assert torch.equal(twice, source * 2)


def test_jax_round_trip():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    source = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    t = lz.from_dlpack(source)
    assert t.dtype == lz.float32
    assert (t * 2).tolist() == (source * 2).tolist()
    assert lz.asarray(source).tolist() == source.tolist()
    back = jnp.from_dlpack(lz.arange(4.0) * 1.5)
    assert back.tolist() == [0.0, 1.5, 3.0, 4.5]


def test_cuda_tensors_read_back_through_numpy(cuda_device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = lz.asarray(a, device="cuda:0")
    assert x.device == lz.Device("cuda:0") and x.device.kind == "cuda"
    y = lz.relu(x * 2 - 5)
    assert y.device.kind == "cuda"
    assert_close(y, np.maximum(a * 2 - 5, 0))  # copied to the host once
    assert lz.sum(y).item() == float(np.maximum(a * 2 - 5, 0).sum())
    back = y.to("cpu")
    assert back.device == lz.cpu(0)
    assert_close(back + 1, np.maximum(a * 2 - 5, 0) + 1)


def test_cuda_dlpack_hands_device_memory_over_both_ways(cuda_device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = lz.asarray(a, device="cuda:0") * 2
    assert x.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    back = lz.from_dlpack(x)  # a consumer of lazuli's export, on the device
    assert back.device == lz.Device("cuda:0") and back.dtype == lz.float32
    del x
    gc.collect()
    # Tensors of the same size now: had the export let go of x's memory, one of them would take
    # it over.
    others = [lz.full((2, 3), 7.0, device="cuda:0") * (i + 1) for i in range(4)]
    lz.waitall()
    assert_close(back + 1, a * 2 + 1)  # the export keeps the memory alive
    assert all(other.device.kind == "cuda" for other in others)
    for dtype in (np.float64, np.int32, np.int64, np.bool_):
        values = np.arange(4).astype(dtype)
        moved = lz.from_dlpack(lz.asarray(values, device="cuda:0"))
        assert moved.device.kind == "cuda" and moved.tolist() == values.tolist()
    assert lz.from_dlpack(lz.zeros((0, 3), device="cuda:0")).shape == (0, 3)
    with pytest.raises(BufferError):
        lz.zeros((2,), device="cuda:0").__dlpack__(stream=0)  # ambiguous for CUDA (DLPack)
    # A consumer that asks for host memory gets a host copy.
    capsule = lz.asarray(np.arange(3.0), device="cuda:0").__dlpack__(dl_device=(1, 0))
    assert type(capsule).__name__ == "PyCapsule"


def test_numpys_reductions_take_a_tensor_as_they_take_an_array():
    # numpy's functions pass dtype= and out= on to the method of their name.
    array = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    t = lz.asarray(array)
    for function in (np.sum, np.mean, np.max, np.min):
        np.testing.assert_allclose(float(function(t)), function(array), rtol=1e-6)
        np.testing.assert_allclose(function(t, axis=0).asnumpy(), function(array, axis=0), rtol=1e-6)
        np.testing.assert_allclose(
            function(t, axis=1, keepdims=True).asnumpy(),
            function(array, axis=1, keepdims=True),
            rtol=1e-6,
        )
    total = np.sum(lz.asarray(np.array([2**24, 1, 1], dtype=np.int32)), dtype=np.int64)
    assert total.dtype == lz.int64 and int(total) == 2**24 + 2
    with pytest.raises(TypeError, match=r"^\[sum\] out= cannot be written"):
        np.sum(t, out=np.zeros(()))
