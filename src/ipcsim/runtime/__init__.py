"""The bottom layer: plumbing every other layer uses, importing nothing from the package.

``jit`` (Numba helpers: twins, thread counts, schedules), ``kernel_cache`` (cached kernels go stale when any file
compiled into them changes), ``threads`` (the machine's cores, Numba's and the broad phase's thread pools),
``scratch`` (per-thread scratch buffers), ``blas_threads`` (OpenBLAS/MKL thread counts for dense algebra).
"""
