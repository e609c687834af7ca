#!/usr/bin/env python3
"""The seed texts' experiments on lazuli from Python, each printing its table.

    PYTHONPATH=build/release/python python examples/python/seed_experiments.py [--quick]

1. A 1000x1000 matmul of a random matrix with itself, timed without and with a blocking point:
   without one, the clock only sees the op being recorded.
2. 10,000 `y = x + 1`, synchronous (wait_to_read after each) and asynchronous (one waitall).
3. Automatic parallelism: the same work on two devices, with and without a barrier between them.
4. A training loop on the digits (examples/data/, minibatches from lz.data.DataLoader, prepared
   on a background thread), synchronizing once per minibatch
   (`loss.item()`), never inside the epoch, or after every op (the sync engine): time per epoch
   and peak resident memory.
"""

import argparse
import contextlib
import os
import sys
import time

import numpy as np

import lazuli as lz

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


@contextlib.contextmanager
def benchmark(description, results):
    """As the seed's d2l.Benchmark: times the block and records the figure under `description`."""
    start = time.perf_counter()
    yield
    results[description] = time.perf_counter() - start


def print_table(title, results):
    print(f"\n{title}")
    print("| run | time |")
    print("| --- | --- |")
    for description, seconds in results.items():
        figure = f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us"
        print(f"| {description} | {figure} |")


def matmul_experiment():
    a = lz.random_normal((1000, 1000), seed=1)
    a.wait_to_read()
    results = {}
    with benchmark("lazuli, no blocking point (only records)", results):
        b = a @ a
    b.wait_to_read()
    with benchmark("lazuli, wait_to_read (computes)", results):
        b = a @ a
        b.wait_to_read()
    host = a.asnumpy()
    with benchmark("numpy", results):
        host @ host
    print_table("1. 1000x1000 matmul", results)


def increment_experiment(count):
    x = lz.ones((1000,))
    x.wait_to_read()
    results = {}
    # Every y is kept: lazuli never computes a value nothing holds any more.
    with benchmark(f"synchronous: wait_to_read after each of {count:,} y = x + 1", results):
        ys = []
        for _ in range(count):
            ys.append(x + 1)
            ys[-1].wait_to_read()
    with benchmark(f"asynchronous: {count:,} y = x + 1, then waitall", results):
        ys = []
        for _ in range(count):
            ys.append(x + 1)
        lz.waitall()
    print_table("2. Synchronous versus asynchronous increments", results)


def parallelism_experiment(size, steps):
    devices = [lz.cpu(0), lz.cpu(1)]
    if lz.cuda.device_count() >= 2:
        devices = [lz.Device.cuda(0), lz.Device.cuda(1)]
    starts = [lz.random_normal((size, size), seed=i + 1, device=d) for i, d in enumerate(devices)]
    lz.waitall()

    def run(barrier):
        values = list(starts)
        for i in range(len(devices)):
            for _ in range(steps):
                values[i] = lz.tanh(values[i] @ starts[i])
            if barrier:
                values[i].wait_to_read()
        lz.waitall()

    run(False)  # compiles
    results = {}
    with benchmark(f"{devices[0]} and {devices[1]}, no barrier between them", results):
        run(False)
    with benchmark(f"{devices[0]}, wait_to_read, then {devices[1]}", results):
        run(True)
    print_table("3. The same work on two devices", results)
    if devices[0].kind == "cpu":
        print(f"(logical CPU devices share this machine's {os.cpu_count()} cores and one thread "
              "pool: they overlap only what one device leaves idle)")


def peak_resident_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_resident():
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def training_experiment(epochs):
    images = lz.load_npy(os.path.join(DATA, "digits_images.npy")).astype(lz.float32)
    labels = lz.load_npy(os.path.join(DATA, "digits_labels.npy")).astype(lz.int64)
    images = images.reshape(images.shape[0], -1) / 16.0
    count = images.shape[0]
    batch = 64

    def loss_of(inputs, targets):
        return lambda *p: lz.cross_entropy(lz.nn.mlp(list(p), inputs), targets)

    def epoch(mode, params, optimizer, loader):
        total = 0.0
        pending = lz.zeros(())
        for inputs, targets in loader:  # prepared on the loader's thread meanwhile
            loss, grads = lz.value_and_grad(loss_of(inputs, targets), params)
            optimizer.step(params, grads)
            if mode == "never":
                pending = pending + loss
            else:
                total += loss.item()
        if mode == "never":
            total = pending.item()
        return total / (count // batch)

    rows = []
    for mode, description in [("minibatch", "loss.item() once per minibatch"),
                              ("never", "never inside the epoch"),
                              ("every op", "after every op (sync engine)")]:
        lz.set_engine("sync" if mode == "every op" else "async")
        # The same start for every mode: the losses agree, whenever lazuli computes them.
        params = lz.nn.mlp_parameters([images.shape[1], 128, 10], seed=3)
        optimizer = lz.optim.SGD(learning_rate=0.1, momentum=0.9)
        loader = lz.data.DataLoader([images, labels], batch_size=batch, seed=5, drop_last=True)
        epoch(mode, params, optimizer, loader)  # compiles
        reset_peak_resident()
        start = time.perf_counter()
        for _ in range(epochs):
            loss = epoch(mode, params, optimizer, loader)
        seconds = (time.perf_counter() - start) / epochs
        rows.append((description, seconds, peak_resident_mib(), loss))
    lz.set_engine("async")
    print("\n4. Training the digits MLP (64-128-10, batch 64): synchronizing")
    print("| synchronizing | time per epoch | peak resident memory | mean loss, last epoch |")
    print("| --- | --- | --- | --- |")
    for description, seconds, mib, loss in rows:
        print(f"| {description} | {seconds * 1e3:.1f} ms | {mib:.0f} MiB | {loss:.4f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (a smoke test)")
    options = parser.parse_args()
    matmul_experiment()
    increment_experiment(1000 if options.quick else 10000)
    parallelism_experiment(256 if options.quick else 512, 2 if options.quick else 8)
    training_experiment(1 if options.quick else 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
