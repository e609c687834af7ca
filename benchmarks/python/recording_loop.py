#!/usr/bin/env python3
"""Records `x = x + 1` N times and exits at once: a loop to count under callgrind.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=build/release/python valgrind --tool=callgrind \\
        [--cache-sim=yes] python benchmarks/python/recording_loop.py N [--drjit]

Run it for two values of N (20000 and 120000, say): the difference of the totals over the
difference of N is what one recorded op costs, with start-up and teardown cancelled out
(os._exit skips freeing the chain). With --drjit the loop runs on Dr.Jit's LLVM backend instead,
the peer that records as lazuli does. OPENBLAS_NUM_THREADS=1 keeps numpy's BLAS threads from
spinning into the counts.
"""

import os
import sys


def increments(x, n):
    for _ in range(n):
        x = x + 1
    return x


def main():
    n = int(sys.argv[1])
    if "--drjit" in sys.argv[2:]:
        for candidate in ("/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
                          "/usr/lib/llvm-15/lib/libLLVM.so"):
            if os.path.exists(candidate):
                os.environ.setdefault("DRJIT_LIBLLVM_PATH", candidate)
        import drjit as dr
        from drjit.llvm import Float

        x = dr.ones(Float, 1000)
        dr.make_opaque(x)  # a literal would fold `x + 1` into a new literal, recording nothing
    else:
        import lazuli as lz

        lz.set_max_pending_nodes(0)  # nothing is evaluated
        x = lz.ones((1000,))
    warm = increments(x, 1000)  # the first ops fill caches and pools
    del warm
    chain = increments(x, n)  # noqa: F841  (held until the exit)
    os._exit(0)


if __name__ == "__main__":
    main()
