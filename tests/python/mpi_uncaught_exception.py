"""A rank of an mpirun ended by an uncaught Python exception takes its group with it: rank 0,
waiting for it in a collective, ends at once instead of after LZ_DIST_TIMEOUT
(tests/python/CMakeLists.txt runs it on 2 ranks)."""
import lazuli as lz

lz.dist.init()
for step in range(10):
    if lz.dist.rank() == 1 and step == 5:
        raise RuntimeError("rank 1 gives up at step 5")
    lz.dist.all_reduce(lz.ones((4,)) * step).wait_to_read()
