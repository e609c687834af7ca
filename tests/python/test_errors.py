"""Errors: lazuli.Error is a ValueError naming the op and the user's Python line (of the call, or
of the op that failed at run time); Python's own exception types where Python expects them."""

import inspect

import numpy as np
import pytest

import lazuli as lz


def here():
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def raise_shape_error_in_a_helper(a):
    helper_line = here() + 1
    return a + lz.zeros((5,)), helper_line


def test_error_is_a_value_error():
    assert issubclass(lz.Error, ValueError)
    with pytest.raises(ValueError):
        lz.zeros((3,)) + lz.zeros((4,))


def test_a_dtype_the_op_does_not_take_is_a_dtype_error_and_a_type_error():
    assert issubclass(lz.DTypeError, lz.Error) and issubclass(lz.DTypeError, TypeError)
    with pytest.raises(lz.DTypeError, match=r"\[take\].*int32 or int64, got float32"):
        lz.take(lz.ones((3,)), lz.ones((2,)))
    with pytest.raises(TypeError, match=r"\[where\] .*condition must be bool"):
        lz.where(lz.ones((2,)), 1.0, 0.0)
    with pytest.raises(TypeError, match=r"\[matmul\].*bool"):
        lz.ones((2, 2), dtype=lz.bool) @ lz.ones((2, 2), dtype=lz.bool)
    # A shape error is no TypeError.
    with pytest.raises(lz.Error) as caught:
        lz.ones((2,)) + lz.ones((3,))
    assert not isinstance(caught.value, TypeError)


def test_shape_error_names_this_file_and_the_line_of_the_call():
    a = lz.zeros((3, 4))
    b = lz.zeros((5,))
    line = here() + 2
    with pytest.raises(lz.Error) as raised:
        a + b
    message = str(raised.value)
    assert message.startswith("[add] ")
    assert f"at {__file__}:{line}:" in message, message
    assert "(3,4)" in message and "(5)" in message


def test_error_of_a_module_function_and_a_method_name_their_lines():
    x = lz.zeros((2, 3))
    line = here() + 2
    with pytest.raises(lz.Error) as raised:
        lz.matmul(x, x)
    assert str(raised.value).startswith("[matmul]")
    assert f"{__file__}:{line}:" in str(raised.value)
    line = here() + 2
    with pytest.raises(lz.Error) as raised:
        x.reshape(4, 2)
    assert f"{__file__}:{line}:" in str(raised.value), str(raised.value)
    line = here() + 2
    with pytest.raises(lz.Error) as raised:
        lz.asarray([1.0, 2.0]) @ lz.asarray(np.ones((3, 2)))  # through lazuli.asarray's Python
    assert f"{__file__}:{line}:" in str(raised.value), str(raised.value)


def test_error_raised_inside_a_helper_names_the_helpers_line():
    with pytest.raises(lz.Error) as raised:
        raise_shape_error_in_a_helper(lz.zeros((3,)))
    helper_line = inspect.getsourcelines(raise_shape_error_in_a_helper)[1] + 2
    message = str(raised.value)
    assert f"{__file__}:{helper_line}:" in message, message


def test_ops_recorded_by_lazulis_own_python_name_the_users_line():
    # lazuli.asarray (Python) calls astype (C++): the op's location is the caller's line, not the
    # package's.
    t = lz.arange(3)
    line = here() + 1
    converted = lz.asarray(t, dtype=lz.float64)
    text = lz.ir_text(converted)
    assert "astype(" in text, text
    assert f'"{__file__}":{line}' in text, text
    assert "__init__.py" not in text, text


def test_an_asynchronous_failure_names_the_line_that_recorded_the_op():
    # Over the memory limit, the op fails while it runs; the error surfaces at the blocking point
    # and names the line that recorded it, not the line that blocked.
    lz.set_memory_limit(16 << 20)
    try:
        recorded_line = here() + 1
        huge = lz.ones((8 << 20,)) * 2  # 32 MiB
        small = lz.arange(4) + 1
        lz.eval_async([small, huge])
        blocking_line = here() + 2
        with pytest.raises(lz.Error) as raised:
            huge.wait_to_read()
        message = str(raised.value)
        assert "out of memory" in message, message
        assert f"recorded at {__file__}:{recorded_line}:" in message, message
        assert f":{blocking_line}:" not in message
        assert small.tolist() == [1, 2, 3, 4], "the unrelated tensor is computed"
        assert huge.is_ready(), "failed is finished"
        with pytest.raises(lz.Error, match="out of memory"):
            huge.tolist()  # every read of it fails the same way
        with pytest.raises(lz.Error, match="out of memory"):
            lz.sum(huge).item()  # and so does everything computed from it
        lz.waitall()  # already raised
    finally:
        lz.set_memory_limit(0)
    assert lz.sum(lz.ones((8 << 20,)) * 2).item() == 2 * (8 << 20), "the runtime keeps working"


def test_waitall_raises_a_failure_no_blocking_point_raised():
    lz.set_memory_limit(16 << 20)
    try:
        recorded_line = here() + 1
        unread = lz.ones((8 << 20,)) * 3  # held but never read: a dropped result is not computed
        unread.eval_async()
        with pytest.raises(lz.Error) as raised:
            lz.waitall()
        assert f"{__file__}:{recorded_line}" in str(raised.value), str(raised.value)
        lz.waitall()  # raised once
    finally:
        lz.set_memory_limit(0)


def test_tensors_are_immutable():
    x = lz.zeros((3,))
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    with pytest.raises(TypeError):
        x[1:] = lz.ones((2,))
    assert x.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError):
        hash(x)


@pytest.mark.parametrize("mask", [[True, False, True], np.array([True, False, True]),
                                  "tensor", True], ids=["list", "numpy", "tensor", "python_bool"])
def test_bool_mask_indexing_raises_index_error(mask):
    x = lz.arange(3)
    if isinstance(mask, str):
        mask = x > 0
    with pytest.raises(IndexError, match="boolean"):
        x[mask]


def test_index_errors():
    x = lz.zeros((2, 3))
    with pytest.raises(IndexError, match="out of range"):
        x[2]
    with pytest.raises(IndexError, match="out of range"):
        x[:, -4]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x[np.array(1.0)]  # a 0-d float array is no position
    with pytest.raises(IndexError):
        x[1.0]
    with pytest.raises(IndexError, match="float32"):
        x[:, [0.0, 1.0]]
    with pytest.raises(IndexError):
        x[[0], [1]]  # one integer array per indexing
    with pytest.raises(IndexError):
        list(x)[2]


def test_unsupported_dtypes_raise_type_error():
    with pytest.raises(TypeError, match="complex128"):
        lz.asarray(np.array([1 + 2j]))
    with pytest.raises(TypeError, match="complex"):
        lz.array(np.ones(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="complex64"):
        lz.zeros((2,), dtype=np.complex64)
    with pytest.raises(TypeError):
        lz.arange(3).astype("float16")
    with pytest.raises(TypeError):
        lz.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        lz.asarray(np.arange(3, dtype=np.uint64))


def test_bad_operands_raise_type_error():
    x = lz.arange(3)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" * x
    with pytest.raises(TypeError):
        x + None
    with pytest.raises(TypeError):
        lz.where(x > 0, "a", 1)
    with pytest.raises(TypeError):
        lz.where(x > 0, 1, "a")
    with pytest.raises(TypeError):
        lz.add(x, object())
    with pytest.raises(TypeError, match="ndarray"):
        lz.eval_async([np.ones(2)])
    with pytest.raises(TypeError, match="ndarray"):
        lz.grad(lambda t: lz.sum(t), [np.ones(2)])
    with pytest.raises(TypeError, match="list"):
        lz.optim.SGD().step([lz.ones((2,))], [[1.0, 2.0]])
    assert (x == None) is False  # noqa: E711  (Python's fallback, not an error)
    assert (x != None) is True  # noqa: E711


def test_value_errors_for_bad_values():
    with pytest.raises(ValueError, match="int64"):
        lz.arange(3) + 2**70
    with pytest.raises(ValueError, match="ambiguous"):
        bool(lz.arange(3))
    with pytest.raises(TypeError):
        len(lz.zeros(()))
    with pytest.raises(lz.Error, match="exactly one element"):
        lz.arange(3).item()
    with pytest.raises(TypeError):
        [1, 2][lz.asarray(np.array(1.0))]  # only integer tensors are indices
    with pytest.raises(TypeError):
        [1, 2][lz.arange(2)]  # of one element
    with pytest.raises(lz.Error):
        lz.Device("tpu:0")
    with pytest.raises(ValueError):
        lz.set_log_level("loud")


def test_op_errors_open_with_the_op_name():
    i = lz.arange(3)
    with pytest.raises(lz.Error, match=r"^\[pow\].*negative"):
        lz.pow(i, -1)
    with pytest.raises(lz.Error, match=r"^\[where\].*bool"):
        lz.where(lz.zeros((3,)), 1.0, 2.0)
    with pytest.raises(lz.Error, match=r"^\[reshape\]"):
        lz.reshape(i, (2, 2))
    with pytest.raises(lz.Error, match=r"^\[take\]"):
        lz.take(lz.zeros((3,)), [0.5])


@pytest.mark.parametrize(
    "setter, value, message",
    [
        (lz.set_disabled_passes, "bogus", r"^\[set_disabled_passes\] 'bogus' in 'bogus' is no pass"),
        (lz.set_max_in_flight, -3, r"^\[set_max_in_flight\] needs a whole number >= 1, got -3"),
        (lz.set_max_pending_nodes, -5, r"^\[set_max_pending_nodes\] needs a whole number >= 0"),
        (lz.set_memory_limit, -1, r"^\[set_memory_limit\] needs a whole number >= 0"),
        (lz.set_dump_directory, "/proc/nope", r"^\[set_dump_directory\] cannot dump into"),
    ],
)
def test_a_setter_rejects_at_its_call_what_its_variable_would_report(setter, value, message):
    with pytest.raises(lz.Error, match=message):
        setter(value)
    assert float((lz.arange(3) + 1).sum()) == 6.0  # and changed nothing


def test_messages_spell_lazulis_names_as_python_does():
    with pytest.raises(lz.Error) as raised:
        lz.ones((2,)) + lz.ones((2,), device="cpu:1")
    message = str(raised.value)
    assert "move one input with .to(lz.Device.cpu(0))" in message and "::" not in message, message
    with pytest.raises(ValueError, match=r"ambiguous; reduce it first: \(t != 0\)\.max\(\)"):
        bool(lz.arange(3))
