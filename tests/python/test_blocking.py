"""Blocking points give the values; the asynchronous calls (eval_async, is_ready, then) and the
inspection functions (stats, ir_text, last_evaluation) report what happened."""

import inspect
import json
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import lazuli as lz
from lazuli_test_helpers import assert_close


def here():
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def test_item_gives_python_numbers_of_each_dtype():
    x = lz.asarray(np.array([1.5, 2.25], dtype=np.float32))
    value = lz.sum(x).item()
    assert type(value) is float and value == 3.75
    assert lz.sum(lz.asarray(np.array([0.1, 0.2]))).item() == 0.1 + 0.2  # float64 kept exactly
    count = lz.sum(lz.arange(10)).item()
    assert type(count) is int and count == 45
    i32 = lz.asarray(np.array([7], dtype=np.int32)).item()
    assert type(i32) is int and i32 == 7
    flag = (lz.arange(3) > 1)[2].item()
    assert type(flag) is bool and flag is True
    assert float(x[1]) == 2.25 and int(x[1]) == 2
    assert bool(lz.asarray(np.array([1.0]))) and not bool(lz.zeros(()))
    assert [10, 20, 30][lz.asarray(np.int64(1))] == 20  # __index__


def test_tolist_asnumpy_and_np_asarray_give_the_values():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = lz.asarray(a) * 2 + 1
    assert t.tolist() == (a * 2 + 1).tolist()
    assert lz.arange(3).tolist() == [0, 1, 2]
    assert lz.full((), 4.0).tolist() == 4.0
    assert (lz.arange(3) < 2).tolist() == [True, True, False]
    for array in (t.asnumpy(), t.numpy(), np.asarray(t), np.array(t)):
        assert array.dtype == np.float32
        np.testing.assert_array_equal(array, a * 2 + 1)
    as_double = np.asarray(t, dtype=np.float64)
    assert as_double.dtype == np.float64
    np.testing.assert_array_equal(as_double, a * 2 + 1)


def test_each_reading_is_a_blocking_point():
    reads = [lambda t: t.item(), lambda t: t.tolist(), lambda t: t.asnumpy(),
             lambda t: np.asarray(t), repr, str, lambda t: t.wait_to_read(), float]
    for index, read in enumerate(reads):
        t = lz.sum(lz.arange(4.0) * (index + 1))
        assert not t.is_ready()
        read(t)
        assert t.is_ready(), f"read {index} did not compute the tensor"
        assert t.item() == 6.0 * (index + 1)


def test_repr_and_print_show_values_shape_and_dtype(capsys):
    t = lz.asarray(np.array([[1.5, -2.0], [3.0, 4.0]], dtype=np.float32)) * 2
    text = repr(t)
    assert "3." in text and "-4." in text and "6." in text and "8." in text
    assert "(2,2)" in text and "float32" in text
    print(lz.arange(4) * 3)
    printed = capsys.readouterr().out
    assert "0" in printed and "3" in printed and "6" in printed and "9" in printed
    assert "int64" in printed and "(4)" in printed


def test_wait_to_read_eval_async_and_is_ready():
    y = lz.exp(lz.asarray(np.array([0.0, 1.0])))
    assert not y.is_ready(), "recorded only: nothing computes before a blocking point"
    y.wait_to_read()
    assert y.is_ready()
    z = lz.arange(1000) * 3
    z.eval_async()
    z.wait_to_read()
    assert z.is_ready()
    assert z[999].item() == 2997
    w1 = lz.arange(4) + 1
    w2 = lz.arange(4) * 2
    lz.eval_async([w1, w2])
    lz.waitall()
    assert w1.is_ready() and w2.is_ready()
    assert w1.tolist() == [1, 2, 3, 4] and w2.tolist() == [0, 2, 4, 6]
    lz.eval_async(w1 - 1)  # one tensor also goes
    assert (w1 - 1).tolist() == [0, 1, 2, 3]


def test_then_runs_the_callback_with_the_gil():
    seen = []
    tensors = [lz.arange(i + 1) * 2 for i in range(8)]
    for t in tensors:
        # The callback touches Python objects (a list, the tensor's values): it holds the GIL.
        t.then(lambda t=t: seen.append((threading.current_thread().name, sum(t.tolist()))))
    lz.waitall()
    assert sorted(total for _, total in seen) == [(i + 1) * i for i in range(8)]


def test_then_on_a_computed_tensor_runs_at_once():
    t = lz.arange(3) + 1
    t.wait_to_read()
    calls = []
    t.then(lambda: calls.append(t.tolist()))
    assert calls == [[1, 2, 3]]


def test_a_raising_callback_is_reported_as_unraisable(monkeypatch):
    reported = []
    monkeypatch.setattr("sys.unraisablehook", lambda info: reported.append(info.exc_type))
    t = lz.arange(3) * 5
    t.then(lambda: 1 / 0)
    lz.waitall()
    assert reported == [ZeroDivisionError]
    assert t.tolist() == [0, 5, 10], "the tensor is unaffected"


def test_stats_count_evaluations_and_kernels():
    lz.reset_stats()
    before = lz.stats()
    assert before["evaluations"] == 0 and before["kernels_launched"] == 0
    assert (lz.arange(5) * 2 + 1).tolist() == [1, 3, 5, 7, 9]
    after = lz.stats()
    assert after["evaluations"] == 1
    assert after["nodes_evaluated"] >= 3
    assert after["kernels_launched"] >= 1
    assert after["cache_hits"] + after["cache_misses"] >= 1
    assert after["bytes_allocated"] >= 5 * 8
    assert set(after) >= {"plan_hits", "plan_misses", "compile_microseconds", "disk_cache_hits"}


def test_ir_text_names_the_ops_and_the_recording_line():
    x = lz.asarray(np.ones((2, 3), np.float32))
    line = here() + 1
    y = lz.exp(x * 2.0) + 1
    text = lz.ir_text(y)
    for op in ("data", "mul", "exp", "add", "f32[2,3]", "return"):
        assert op in text, text
    assert f'"{__file__}":{line}' in text, text
    assert "digraph" in lz.ir_dot([y])
    assert lz.ir_text([y, x]).count("return") == 1


def test_last_evaluation_says_why_and_where():
    a = lz.arange(4) + 1
    line = here() + 1
    assert a.sum().item() == 10
    record = lz.last_evaluation()
    assert record["reason"] == "item"
    assert record["location"] == f"{__file__}:{line}"
    assert record["number"] >= 1 and record["nodes"] >= 1
    (lz.arange(3) * 2).tolist()
    assert lz.last_evaluation()["reason"] == "read"
    (lz.arange(3) * 3).wait_to_read()
    assert lz.last_evaluation()["reason"] == "wait_to_read"
    b = lz.arange(3) * 4
    b.eval_async()
    assert lz.last_evaluation()["reason"] == "eval_async"
    b.wait_to_read()
    (lz.arange(3) * 5).eval_async()  # dropped: waitall computes nothing left reachable
    c = lz.arange(3) * 6
    lz.waitall()
    assert lz.last_evaluation()["reason"] == "waitall"
    assert c.is_ready()


def test_sync_engine_computes_each_op_as_it_is_recorded():
    lz.set_engine("sync")
    try:
        y = lz.arange(3) * 2
        assert y.is_ready()
        assert y.tolist() == [0, 2, 4]
        assert lz.last_evaluation()["reason"] == "sync_engine"
    finally:
        lz.set_engine("async")
    assert not (lz.arange(3) * 2).is_ready()
    with pytest.raises(ValueError):
        lz.set_engine("eager")


def test_trace_file_is_written(tmp_path):
    path = tmp_path / "trace.json"
    lz.start_trace(path)  # a str or a pathlib.Path
    (lz.arange(10) * 2).tolist()
    lz.stop_trace()
    assert path.exists() and os.path.getsize(path) > 0
    assert "traceEvents" in path.read_text() or path.read_text().lstrip().startswith("[")


def test_devices_and_scopes():
    assert lz.default_device() == lz.cpu(0) == lz.Device("cpu")
    assert str(lz.Device("cpu:1")) == "cpu:1" and lz.Device("cpu:1").index == 1
    assert lz.Device("cpu:1").kind == "cpu"
    assert lz.cpu(1) != lz.cpu(2) and lz.cpu(1) != "cpu:1" and lz.cpu(1) != None  # noqa: E711
    assert {lz.cpu(1): "a"}[lz.Device("cpu:1")] == "a"
    x = lz.arange(4) * 2
    moved = x.to("cpu:1")
    assert moved.device == lz.Device.cpu(1)
    assert (moved + 1).tolist() == [1, 3, 5, 7]
    with lz.DeviceScope("cpu:2") as device:
        assert device == lz.cpu(2)
        made = lz.ones((2,))
    assert made.device == lz.cpu(2)
    assert lz.zeros((2,), device="cpu:3").device == lz.cpu(3)
    assert lz.asarray(np.ones(2), device=lz.cpu(1)).device == lz.cpu(1)
    with lz.StreamScope(1):
        streamed = lz.arange(3) * 7
    assert streamed.tolist() == [0, 7, 14]
    assert lz.ones((2,)).device == lz.cpu(0)
    lz.set_default_device("cpu:1")
    try:
        assert lz.default_device() == lz.cpu(1) and lz.ones((2,)).device == lz.cpu(1)
    finally:
        lz.set_default_device(lz.cpu(0))
    assert lz.ones((2,)).device == lz.cpu(0)
    with pytest.raises(lz.Error, match="cpu:0 and cpu:2"):
        lz.ones((2,)) + made
    # Whether CUDA devices exist is one fact, asked three ways: the answers must agree.
    count = lz.cuda.device_count()
    assert lz.cuda.is_available() is (count > 0)
    if count == 0:
        with pytest.raises(lz.Error, match="no CUDA device"):
            lz.Device("cuda:0")
    else:
        assert lz.Device(f"cuda:{count - 1}").index == count - 1
        with pytest.raises(lz.Error, match="does not exist"):
            lz.Device(f"cuda:{count}")


def test_assert_close_helper_catches_a_wrong_value():
    # The suite's comparison really compares.
    with pytest.raises(AssertionError):
        assert_close(lz.arange(3), [0, 1, 3])
    with pytest.raises(AssertionError):
        assert_close(lz.arange(3.0), [0.0, 1.0, 2.1])


def test_the_trace_is_written_when_a_keyboard_interrupt_ends_the_program(tmp_path):
    path = tmp_path / "interrupted.json"
    script = "import lazuli as lz\n(lz.arange(10) * 2).tolist()\nraise KeyboardInterrupt\n"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), LZ_TRACE=str(path))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, env=environment,
                         timeout=60)
    assert run.returncode == -signal.SIGINT, run.stderr.decode()
    events = json.loads(path.read_text())["traceEvents"]
    assert any(event.get("name") == "evaluation" for event in events), events[:5]


INTERRUPTED_WAIT = """
import os, signal, threading, time
import lazuli as lz
a = lz.ones((3000, 3000)) * 1e-3
y = lz.ones((3000, 8))
(a @ y).wait_to_read()
start = time.perf_counter()
(a @ (a @ (a @ y))).wait_to_read()
# Narrow products (OpenBLAS), enough of them for about 3 s on this machine, however fast it is.
products = max(120, min(20000, int(3.0 / ((time.perf_counter() - start) / 3))))
for _ in range(products):
    y = a @ y
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    y.wait_to_read()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted before the result:", not y.is_ready(), flush=True)
print((lz.arange(3) + 1).tolist(), flush=True)
"""


def test_ctrl_c_interrupts_a_wait_and_the_runtime_stays_usable():
    # The chained products take about 3 s; SIGINT comes 0.3 s into the wait.
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", INTERRUPTED_WAIT], capture_output=True,
                         env=environment, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().split("\n")[:2] == ["interrupted before the result: True",
                                                   "[1, 2, 3]"], run.stdout.decode()
