"""The bottom layer: plumbing every other layer uses, importing nothing from the package.

``jit`` (Numba helpers: twins, thread counts, schedules), ``threads`` (the machine's cores, Numba's and the
broad phase's thread pools), ``scratch`` (per-thread scratch buffers), ``blas_threads`` (OpenBLAS/MKL thread
counts for dense algebra).
"""
