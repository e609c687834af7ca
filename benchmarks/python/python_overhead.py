#!/usr/bin/env python3
"""What lazuli costs per op from Python, next to the peers that import here, in one run.

    PYTHONPATH=build/release/python python benchmarks/python/python_overhead.py [--quick]

Run it with an interpreter that has numpy and whichever peers should be columns (PyTorch, JAX,
MLX, Dr.Jit); the peers are optional, lazuli's Python package is found through PYTHONPATH.
Dr.Jit's LLVM backend needs LLVM 15 or newer: DRJIT_LIBLLVM_PATH is pointed at Debian's
libLLVM-15 when it is installed and the variable is not set.

Workloads (each figure the best of several runs):
  recording  x = x + 1, 100,000 times on 1000 float32, nothing computed: what recording one op
             costs (lazuli with its pending-node bound off, Dr.Jit and MLX record too; numpy,
             PyTorch and JAX compute each op, shown for scale).
  chain      10,000 dependent x = x + 1 on 1000 float32, one wait at the end, compiled code warm.
  asarray    np.asarray(t) of a computed float32 tensor of 1K, 1M and 16M elements: the same
             time for every size means no copy.
"""

import argparse
import gc
import os
import sys
import time

import numpy as np

if "DRJIT_LIBLLVM_PATH" not in os.environ:
    for candidate in ("/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/llvm-15/lib/libLLVM.so"):
        if os.path.exists(candidate):
            os.environ["DRJIT_LIBLLVM_PATH"] = candidate
            break

import lazuli as lz  # noqa: E402


def best_of(runs, function):
    """The smallest wall time of `runs` calls of function(), in seconds."""
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


# ---- Peers: each a dict of workload -> function(n) returning after its work is done. ----------


def increments(x, n):
    """x + 1, n times, each on the result of the last: the loop every workload runs."""
    for _ in range(n):
        x = x + 1
    return x


def timed_increments(x, n):
    """Seconds to run increments(x, n): recording them, for a lazy library."""
    start = time.perf_counter()
    x = increments(x, n)
    elapsed = time.perf_counter() - start
    del x
    return elapsed


def lazuli_peer():
    def record(n):
        lz.set_max_pending_nodes(0)
        elapsed = timed_increments(lz.ones((1000,)), n)
        lz.set_max_pending_nodes(10000)
        return elapsed

    return {"record": record,
            "chain": lambda n: increments(lz.ones((1000,)), n).wait_to_read()}


def numpy_peer():
    return {"chain": lambda n: increments(np.ones(1000, dtype=np.float32), n)}


def torch_peer():
    import torch

    torch.set_num_threads(2)
    return {"chain": lambda n: increments(torch.ones(1000), n)}


def jax_peer():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    return {"chain": lambda n: increments(jnp.ones(1000, dtype=jnp.float32), n).block_until_ready()}


def mlx_peer():
    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    return {"record": lambda n: timed_increments(mx.ones((1000,)), n),
            "chain": lambda n: mx.eval(increments(mx.ones((1000,)), n))}


def drjit_peer():
    import drjit as dr
    from drjit.llvm import Float

    def ones():
        x = dr.ones(Float, 1000)
        # Into memory: dr.ones makes a literal, which dr.eval leaves one, and `literal + 1` folds
        # into a new literal, recording and computing nothing.
        dr.make_opaque(x)
        return x

    def chain(n):
        dr.eval(increments(ones(), n))
        dr.sync_thread()  # the LLVM backend runs kernels asynchronously

    return {"record": lambda n: timed_increments(ones(), n), "chain": chain}


PEERS = [("lazuli", lazuli_peer), ("numpy", numpy_peer), ("PyTorch", torch_peer),
         ("JAX", jax_peer), ("MLX", mlx_peer), ("Dr.Jit", drjit_peer)]


def load_peers():
    loaded = []
    for name, make in PEERS:
        try:
            loaded.append((name, make()))
        except Exception as error:  # an optional column: say why it is missing
            print(f"# {name}: not measured ({type(error).__name__}: {error})")
    return loaded


def per_op_ns(seconds, n):
    return seconds / n * 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer ops and runs (a smoke test)")
    options = parser.parse_args()
    record_ops = 10_000 if options.quick else 100_000
    chain_ops = 1_000 if options.quick else 10_000
    runs = 2 if options.quick else 5

    peers = load_peers()
    print(f"# Python {sys.version.split()[0]}, numpy {np.__version__}, best of {runs} runs")
    print()
    print("| workload | " + " | ".join(name for name, _ in peers) + " |")
    print("| --- |" + " --- |" * len(peers))

    row = []
    for name, workloads in peers:
        if "record" in workloads:
            workloads["record"](record_ops // 10)  # warm up
            best = min(workloads["record"](record_ops) for _ in range(runs))
            row.append(f"{per_op_ns(best, record_ops):.0f} ns")
        else:
            row.append("eager")
    print(f"| recording `x = x + 1`, per op ({record_ops:,} ops, nothing computed) | "
          + " | ".join(row) + " |")

    row = []
    numpy_time = None
    times = {}
    for name, workloads in peers:
        workloads["chain"](chain_ops)  # compiles, warms caches
        times[name] = best_of(runs, lambda: workloads["chain"](chain_ops))
        if name == "numpy":
            numpy_time = times[name]
    for name, _ in peers:
        text = f"{per_op_ns(times[name], chain_ops):.0f} ns"
        if numpy_time is not None and name != "numpy":
            text += f" ({times[name] / numpy_time:.2f}x numpy)"
        row.append(text)
    print(f"| chain of {chain_ops:,} `x = x + 1` on 1000 float32, per op, one wait | "
          + " | ".join(row) + " |")
    print()

    print("| np.asarray(t) of a computed float32 tensor | time per call |")
    print("| --- | --- |")
    sizes = [1 << 10, 1 << 20] + ([] if options.quick else [1 << 24])
    for size in sizes:
        t = lz.ones((size,)) * 2
        t.wait_to_read()
        calls = 1000
        seconds = best_of(runs, lambda: [np.asarray(t) for _ in range(calls)])
        print(f"| {size:,} elements | {seconds / calls * 1e6:.2f} us |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
