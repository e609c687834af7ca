"""Several Python threads recording and reading at once, and tensors dropped in every state
(pending, in flight, computed) under the garbage collector."""

import gc
import os
import subprocess
import sys
import threading
import weakref

import numpy as np

import lazuli as lz


def run_threads(target, count):
    errors = []

    def guarded(index):
        try:
            target(index)
        except BaseException as error:  # noqa: BLE001  (reported below, with its thread)
            errors.append((index, error))

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive(), "a thread hung"
    assert not errors, errors


def test_threads_recording_and_reading_at_once_get_their_own_values():
    def work(index):
        rng = np.random.default_rng(index)
        for step in range(25):
            a = rng.standard_normal((16, 8)).astype(np.float32)
            b = rng.standard_normal((8, 4)).astype(np.float32)
            result = lz.relu(lz.asarray(a) @ lz.asarray(b)) + index
            np.testing.assert_allclose(np.asarray(result), np.maximum(a @ b, 0) + index,
                                       rtol=1e-5, atol=1e-5)
            total = lz.sum(lz.arange(step + 1) * index).item()
            assert total == index * step * (step + 1) // 2
            assert (lz.asarray(a)[step % 16] * 2).tolist() == (a[step % 16] * 2).tolist()

    run_threads(work, 6)


def test_threads_with_their_own_devices_and_callbacks():
    seen = []
    lock = threading.Lock()

    def work(index):
        with lz.DeviceScope(lz.cpu(index % 3)):
            tensors = [lz.arange(10) * (index * 100 + k) for k in range(10)]
        for k, t in enumerate(tensors):
            t.then(lambda t=t, k=k: _record(seen, lock, (index, k, t.sum().item())))
        lz.waitall()

    run_threads(work, 4)
    lz.waitall()
    assert sorted(seen) == sorted((i, k, 45 * (i * 100 + k)) for i in range(4) for k in range(10))


def _record(seen, lock, entry):
    with lock:
        seen.append(entry)


def test_waitall_from_one_thread_while_others_record():
    stop = threading.Event()
    totals = []

    def recorder(index):
        count = 0
        while not stop.is_set() and count < 200:
            t = lz.arange(50) + index
            if count % 20 == 0:
                totals.append(t.sum().item() - 50 * index)
            count += 1

    threads = [threading.Thread(target=recorder, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for _ in range(20):
        lz.waitall()
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert totals and all(total == 1225 for total in totals)


def test_many_pending_tensors_dropped_and_collected():
    lz.reset_stats()
    for i in range(2000):
        t = lz.asarray(np.full((32,), i, dtype=np.float32)) * 2 + 1
        u = lz.exp(t * 0.0)
        del t, u
        if i % 500 == 0:
            gc.collect()
    gc.collect()
    lz.waitall()
    assert lz.stats()["evaluations"] == 0, "nothing reachable was left to compute"
    # The runtime still works and computes the right values afterwards.
    assert (lz.arange(4) * 2).tolist() == [0, 2, 4, 6]


def test_many_tensors_in_flight_dropped_before_they_finish():
    for i in range(500):
        t = lz.arange(100) * i
        t.eval_async()
        del t
    lz.waitall()
    last = lz.arange(100) * 499
    assert last.sum().item() == 499 * 4950


def test_a_tensor_recorded_never_read_then_deleted():
    a = np.arange(10, dtype=np.float64)
    alive = weakref.ref(a)
    lz.reset_stats()
    t = lz.sin(lz.asarray(a))
    del a
    del t
    gc.collect()
    lz.waitall()
    assert lz.stats()["evaluations"] == 0, "a dropped pending tensor is never computed"
    for _ in range(100):
        gc.collect()
        if alive() is None:
            break
    assert alive() is None


def test_tensors_in_reference_cycles_are_collected():
    class Holder:
        pass

    refs = []
    for i in range(50):
        holder = Holder()
        holder.self = holder
        array = np.full((8,), i, dtype=np.float32)
        refs.append(weakref.ref(array))
        holder.tensor = lz.asarray(array) + 1
        holder.computed = (lz.asarray(array) * 2).asnumpy()
        del holder, array
    for _ in range(100):
        gc.collect()
        if all(r() is None for r in refs):
            break
    assert all(r() is None for r in refs)


def test_callbacks_registered_by_many_tensors_then_dropped():
    calls = []
    for i in range(300):
        t = lz.arange(8) + i
        t.then(lambda i=i: calls.append(i))
        del t
    lz.waitall()
    assert sorted(calls) == list(range(300)), "then keeps its tensor computing"


EXIT_WITH_WORK_IN_FLIGHT = """
import numpy as np
import lazuli as lz
done = []
for i in range(40):
    t = lz.asarray(np.ones((100_000,), np.float32)) * i
    t.then(lambda i=i: done.append(i))
pending = lz.arange(10) * 2  # recorded, never read
print("recorded", flush=True)
"""


def test_the_interpreter_exits_cleanly_with_work_and_callbacks_in_flight():
    # Callbacks still waiting at exit must run (or be dropped) before Python finalizes: a thread
    # that takes the GIL during finalization is ended mid-call and aborts the process.
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    runs = [subprocess.Popen([sys.executable, "-c", EXIT_WITH_WORK_IN_FLIGHT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
            for _ in range(6)]
    for run in runs:
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0, err.decode()
        assert out.decode().strip() == "recorded"
        assert "terminate" not in err.decode() and "leaked" not in err.decode(), err.decode()


def exits_cleanly(script, output, runs):
    """Runs `script` `runs` times: each prints `output` and ends with 0, nothing aborted."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for _ in range(runs):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             env=environment, timeout=300)
        err = run.stderr.decode()
        assert run.returncode == 0, err
        assert run.stdout.decode().strip() == output
        assert "terminate" not in err and "leaked" not in err, err


EXIT_WHILE_A_THREAD_WAITS = """
import threading
import lazuli as lz
a = lz.ones((3000, 3000)) * 1e-3
x = lz.ones((3000, 8))
for _ in range(30):  # narrow products (OpenBLAS): about a second
    x = a @ x
started = threading.Event()
def wait():
    started.set()
    x.wait_to_read()
threading.Thread(target=wait, daemon=True).start()
started.wait()
print("exiting", flush=True)
"""


def test_the_interpreter_exits_cleanly_while_a_daemon_thread_waits_on_a_tensor():
    # The waiting thread's wait ends while the interpreter finalizes: taking the GIL back then
    # would abort the process (terminate called without an active exception).
    exits_cleanly(EXIT_WHILE_A_THREAD_WAITS, "exiting", runs=4)


EXIT_WHILE_LARGE_PRODUCTS_RUN = """
import builtins
import lazuli as lz
a = lz.ones((1500, 1500)) * 1e-3
y = a
for _ in range(6):  # products oneDNN takes, where lazuli is built with it
    y = y @ a
y.eval_async()
builtins.kept = y  # still readable at exit, so it runs then
print("launched", flush=True)
"""


def test_the_interpreter_exits_cleanly_while_large_products_run():
    # oneDNN keeps its kernels' code in static objects that exit destroys: the products still
    # queued must run before, not in unmapped code (a SIGSEGV in 6 of 6 runs before).
    exits_cleanly(EXIT_WHILE_LARGE_PRODUCTS_RUN, "launched", runs=3)


EXIT_WITH_WORK_NOBODY_CAN_READ = """
import lazuli as lz
a = lz.ones((3000, 3000)) * 1e-3
y = lz.ones((3000, 8))
for _ in range(60):  # narrow products (OpenBLAS): seconds
    y = a @ y
y.eval_async()
print("launched", flush=True)
"""


def test_work_no_tensor_can_read_is_dropped_at_exit():
    # At exit the result is gone, so the launch stops between kernels instead of running on.
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), LZ_LOG="info")
    run = subprocess.run([sys.executable, "-c", EXIT_WITH_WORK_NOBODY_CAN_READ],
                         capture_output=True, env=environment, timeout=300)
    err = run.stderr.decode()
    assert run.returncode == 0, err
    assert run.stdout.decode().strip() == "launched"
    assert "cancelled: no tensor could read its results any more" in err, err
