"""The FinRay pusher's old shape, whose sliver faces drive the convergent barrier negative (docs/contact.md, "A
negative barrier potential"): shared by tests/contact/test_barrier_sign.py and tests/solvers/test_negative_barrier.py."""
import numpy as np


def two_ring_cylinder(radius, length, n=24):
    """The old FinRay pusher: a closed cylinder along z with only its two end rings, so its side faces are
    length x (2 pi radius / n) slivers: (vertices (2 n + 2, 3) [m], faces (4 n, 3))."""
    a = 2.0 * np.pi * np.arange(n) / n
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a)])
    v = np.concatenate([np.column_stack([ring, np.full(n, -length / 2)]),
                        np.column_stack([ring, np.full(n, length / 2)]),
                        [[0.0, 0.0, -length / 2], [0.0, 0.0, length / 2]]])
    i = np.arange(n)
    j = (i + 1) % n
    return v, np.concatenate([np.column_stack([i, j, n + j]), np.column_stack([i, n + j, n + i]),
                              np.column_stack([np.full(n, 2 * n), j, i]),
                              np.column_stack([np.full(n, 2 * n + 1), n + i, n + j])])
