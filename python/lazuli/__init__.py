"""lazuli: eager-looking tensor code that runs lazily.

Every op records into a graph and returns at once; a blocking point (``item()``, ``tolist()``,
``asnumpy()``, ``print``, ``wait_to_read()``, ``waitall()``) computes what it needs through
lazuli's passes, JIT-compiled kernels and streams. Errors name the Python line that recorded the
failing op.
"""

import atexit as _atexit
import os as _os
import sys as _sys

import numpy as _np

from . import _lazuli
from ._lazuli import *  # noqa: F401,F403  (the C++ API, named as in C++)
from ._lazuli import DTypeError, Error, Tensor, cuda, data, dist, nn, optim  # noqa: F401
# The op table, for the tests to find ops the package or they lack.
from ._lazuli import _numpy_names, _unary_functions  # noqa: F401

_lazuli._set_package_directory(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)


# The exit handlers run last registered first: these three run in the reverse of this order.
_atexit.register(_lazuli._mark_interpreter_exiting)  # python/src/gil_released.h


def _write_trace_at_exit():
    # Python runs its exit handlers on every interpreter exit, an uncaught KeyboardInterrupt
    # included, which then ends the process by SIGINT, past C++'s own exit handlers. After
    # _finish_at_exit's callbacks, so that their spans are in it.
    _lazuli.stop_trace()


_atexit.register(_write_trace_at_exit)


def _finish_at_exit():
    # Lets Tensor.then callbacks still waiting run while the interpreter can run them: a
    # callback thread that asks for the GIL once finalization has begun is ended by Python
    # mid-call, which aborts the process. Without such callbacks nothing is computed at exit
    # (pending work nobody can read any more). A failure that no blocking point raised is
    # dropped, as a C++ program's would be.
    if _lazuli._callbacks_waiting() == 0:
        return
    try:
        _lazuli.waitall()
    except Error:
        pass


_atexit.register(_finish_at_exit)

_uncaught_exception_hook = _sys.excepthook


def _abort_the_group_on_an_uncaught_exception(kind, value, traceback):
    # A rank that ends with an exception would leave the others waiting in their next
    # collective for the whole timeout (and itself in MPI's finalization): it ends them all.
    _uncaught_exception_hook(kind, value, traceback)
    if dist.is_initialized() and dist.world_size() > 1:
        dist.abort(f"an uncaught {kind.__name__} ended it")


_sys.excepthook = _abort_the_group_on_an_uncaught_exception


bool = _lazuli.bool_  # lz.bool, as numpy's np.bool  # noqa: A001

# numpy dtypes lazuli has no counterpart of, and the lazuli dtype they become (as JAX does
# without 64-bit mode for narrow types, keeping every value exact).
_WIDENED = {
    _np.dtype(_np.float16): _np.float32,
    _np.dtype(_np.int8): _np.int32,
    _np.dtype(_np.int16): _np.int32,
    _np.dtype(_np.uint8): _np.int32,
    _np.dtype(_np.uint16): _np.int32,
    _np.dtype(_np.uint32): _np.int64,
}
_SUPPORTED = {_np.dtype(t) for t in (_np.float32, _np.float64, _np.int32, _np.int64, _np.bool_)}


def _numpy_dtype(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, _lazuli.dtype):
        return _np.dtype(dtype.name)
    return _np.dtype(dtype)  # "float32", np.float32, np.dtype("float32"), float, ...


def _as_numpy(obj, dtype):
    array = _np.asarray(obj, dtype=_numpy_dtype(dtype))
    if dtype is None and array.dtype == _np.float64 and not isinstance(obj, (_np.ndarray, _np.generic)):
        # Python floats are float32, as everywhere else in lazuli (and in PyTorch and JAX); an
        # array that says float64 stays float64.
        array = array.astype(_np.float32)
    if not array.dtype.isnative:  # a big-endian file's array: the same dtype in this byte order
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype not in _SUPPORTED:
        if array.dtype not in _WIDENED:
            raise TypeError(
                f"lazuli has no dtype for numpy's {array.dtype}; convert to float32, float64, "
                "int32, int64 or bool first"
            )
        array = array.astype(_WIDENED[array.dtype])
    return array


def asarray(obj, dtype=None, device=None):
    """A tensor of `obj` (a tensor, numpy array, DLPack-capable array, list or number).

    A C-contiguous, aligned numpy array of a lazuli dtype is shared, not copied (as
    torch.from_numpy): the tensor reads the array's memory until lazuli lets go of it, so do not
    write to the array meanwhile. Anything else is copied once (a strided view, another dtype).
    """
    if isinstance(obj, Tensor):
        result = obj if dtype is None else obj.astype(dtype)
        return result if device is None else result.to(device)
    if not isinstance(obj, _np.ndarray) and hasattr(obj, "__dlpack__"):
        obj = _np.from_dlpack(obj)
    array = _as_numpy(obj, dtype)
    if not array.flags.c_contiguous or not array.flags.aligned:
        array = _np.array(array, order="C", copy=True)  # a fresh buffer: contiguous, aligned
    return _lazuli._borrow(array, device)


def array(obj, dtype=None, device=None):
    """A tensor holding a copy of `obj`: later writes to `obj` do not reach it."""
    if isinstance(obj, Tensor):
        return asarray(obj, dtype, device)
    return _lazuli._borrow(_np.array(_as_numpy(obj, dtype), copy=True), device)


_DL_CUDA = 2  # DLPack's kDLCUDA


def from_dlpack(obj, device=None):
    """A tensor sharing the memory of a DLPack-capable array: one on the CPU (PyTorch, JAX,
    CuPy on the host, numpy), or a C-contiguous one on a CUDA device (PyTorch, JAX, CuPy on the
    GPU), whose device memory the tensor reads in place. The device finishes what is queued on
    it first (the producer's writes)."""
    if hasattr(obj, "__dlpack_device__") and obj.__dlpack_device__()[0] == _DL_CUDA:
        tensor = _lazuli._borrow_cuda(obj)
        return tensor if device is None else tensor.to(device)
    return asarray(_np.from_dlpack(obj), device=device)


def _dlpack(self, stream=None, **kwargs):
    if self.device.kind == "cuda" and kwargs.get("dl_device") in (None, self.__dlpack_device__()):
        # Device memory, once written, so any stream may read it: a copy the consumer may write,
        # or lazuli's own when it asks for no copy (copy=False); lazuli reuses it after the
        # consumer lets go and its stream (DLPack's number; None and -1 say nothing of it: the
        # legacy default stream, 1) has run what it queued.
        if stream == 0:
            raise BufferError("stream=0 is ambiguous for a CUDA tensor (DLPack): pass 1 for the "
                              "legacy default stream, 2 for the per-thread one, or a stream")
        reader = 1 if stream is None or stream < 0 else stream
        copy = kwargs.get("copy") is not False
        return _lazuli._cuda_dlpack_array(self, reader, copy).__dlpack__(stream=stream, **kwargs)
    # numpy takes no stream: host memory is read on the host. A consumer may write what it gets
    # (PyTorch does not honour DLPack's read-only flag), and lazuli's results must not change
    # under it: it gets a copy of its own, unless it asks for none (copy=False), promising not to
    # write. Then numpy exports lazuli's buffer marked read-only, which a consumer of the older
    # DLPack (no max_version) cannot be told, so numpy refuses it.
    values = self.asnumpy()  # read-only: lazuli's own buffer; a CUDA tensor's, copied to the host
    if kwargs.get("copy") is not False:
        values = values.copy()
    return values.__dlpack__(**kwargs)


def _dlpack_device(self):
    # kDLCUDA and the device for a CUDA tensor; else kDLCPU: host memory (no blocking point to
    # say so).
    return (_DL_CUDA, self.device.index) if self.device.kind == "cuda" else (1, 0)


def _iter(self):
    # Rows along the first axis, as numpy; without this Python would iterate through
    # __getitem__ until an IndexError, and a 0-d tensor would look empty instead of refusing.
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for index in range(self.shape[0]):
        yield self[index]


def _epochs(self):
    # Each `for batch in loader` is the next epoch (0, 1, ...), in its own shuffled order. The
    # loader prepares one epoch at a time, so an iteration another one overtook raises rather
    # than end early without a word.
    epoch = getattr(self, "_next_epoch", 0)
    self._next_epoch = epoch + 1
    self.start_epoch(epoch)
    while True:
        if self._next_epoch != epoch + 1:
            raise RuntimeError(
                f"this iteration over the DataLoader (epoch {epoch}) was overtaken by another "
                f"one (epoch {self._next_epoch - 1}); a DataLoader prepares one epoch at a time: "
                "finish or leave one loop before starting the next, or make a DataLoader per loop"
            )
        batch = self.next()
        if batch is None:
            return
        yield batch


data.DataLoader.__iter__ = _epochs  # noqa: F405

Tensor.__iter__ = _iter
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
# Above numpy's arrays and scalars: `array + tensor` and `np.float32(2) * tensor` defer to the
# tensor's reflected operators (a recorded op, a Tensor) instead of computing a numpy array
# through __array__. numpy's functions (np.exp(t)) still read the tensor's values.
Tensor.__array_priority__ = 1000


def _dtype_repr(self):
    return f"lazuli.{self.name}"


dtype.__repr__ = _dtype_repr  # noqa: F405
dtype.__str__ = lambda self: self.name  # noqa: F405
