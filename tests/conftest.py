"""Settings shared by every test process.

One BLAS / OpenMP thread per process: pytest-xdist already runs one worker per core, and further
threads only contend for the cores (on two shared cores a test of 300 small L-BFGS fits took 0.2 s
with one thread and up to 21 s with the default count).
"""

from threadpoolctl import threadpool_limits

_ONE_THREAD = threadpool_limits(limits=1)
