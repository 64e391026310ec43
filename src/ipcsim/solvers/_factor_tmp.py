"""TEMPORARY adapter until linear.Factorization lands."""
from .linear import forget_history, pardiso_solver, resolve_backend, solve_spd


class Factorization:
    def __init__(self, backend="auto"):
        self.backend = backend
        self._a = None
        self._ordering = None

    def reset(self):
        forget_history()

    def compute_ordering(self, a):
        if resolve_backend(self.backend) != "pardiso":
            return None
        return pardiso_solver().compute_ordering(a)

    def factor(self, a, ordering=None):
        self._a, self._ordering = a, ordering

    def solve(self, b):
        return solve_spd(self._a, b, self.backend, self._ordering)
