"""Interchangeable global-step solvers of Projective Dynamics with IPC contact (000 §3): all solve

    (K (x) I_3 + B) p = r                                                         (000 Eq. 4)

over the free vertices, with K (nf, nf) the constant scalar PD matrix (``energies.shape_targeting``: the
Hessian of the shape-targeting surrogate is K (x) I_3; factorising the nf x nf K instead of the 3nf x 3nf
matrix is a third of the size and ~1/27 of the work), B (3nf, 3nf) the PSD-projected barrier Hessian W^T H_B W
(vertex-major, dof 3a + r), supported on the few vertices of active contact stencils, and r, p (nf, 3).

    solver = make_global_solver("woodbury")       # 'direct' | 'pcg' | 'schur' | 'woodbury'
    solver.prepare(K_free, x2)                    # once: K (nf, nf) SPD CSR; x2 (n2,) free-vertex ids
    p = solver.solve(B, r)                        # per iteration; B None (no contact) or (3nf, 3nf) CSR PSD

* 'direct' (000 Table 1's o without contact; also the reference): K is factorised once; with contact the sparse
  K (x) I_3 + B is factorised at every solve.
* 'pcg' (triangle, 000 Eq. 5): conjugate gradients on K (x) I_3 + B preconditioned by the constant factor of K,
  to a relative residual ``rtol`` (default 1e-12: the steps then agree with the direct ones to ~1e-10).
* 'schur' (square, 000 Eq. 6-8): the free vertices are split into x1 (collision-agnostic) and x2 (collision-aware,
  every vertex a contact can reach); K11 is factorised once and the dense Schur complement
  S = K22 - K21 K11^-1 K12 (n2, n2) computed once (Sigma = S (x) I_3); each solve Cholesky-factorises the dense
  Sigma_hat = Sigma + B22 (3n2, 3n2), then back-substitutes: p2 = Sigma_hat^-1 (r2 - K21 K11^-1 r1),
  p1 = K11^-1 (r1 - K12 p2).
* 'woodbury' (diamond, 000 Eq. 9-11): as 'schur' with S^-1 (n2, n2) inverted once; per solve only the n_c
  vertices touched by B (U selects their 3 n_c dofs, B_c = U^T B U) enter a low-rank update
      Sigma_hat^-1 = Sigma^-1 - Sigma^-1 U (I + B_c U^T Sigma^-1 U)^-1 B_c U^T Sigma^-1
  (a (3 n_c)^2 LU). This form needs no B_c^-1: 000 Eq. 11's (B_c^-1 + U^T Sigma^-1 U)^-1 fails for the
  rank-deficient B_c a barrier gives (a point-triangle stencil has rank <= 5 of 12); both are the same matrix
  when B_c is invertible.

Contact outside x2: 'schur' and 'woodbury' need B to vanish on x1. If a barrier touches an x1 vertex (x2 chosen
too small), the solve falls back to the 'direct' path for that call and counts it in ``fallbacks`` (the step is
still exact); grow x2 (``regions.collision_aware_vertices``) to avoid it.

Device: ``make_global_solver("woodbury", device="gpu")`` (or 'schur') runs the dense algebra (S or S^-1 resident
after ``prepare``, the per-solve Cholesky or low-rank update) on an NVIDIA GPU through CuPy; the sparse K11
factor, the condensation and the fallback stay on the CPU (``dense_device``). 'direct' and 'pcg' take only
device 'cpu' (ValueError otherwise). The default 'cpu' takes exactly the steps it took before the option.

Statistics: n1, n2 (vertices), last_nc (vertices touched by the last B), fallbacks, and for 'pcg' iterations
(of the last solve) and total_iterations.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..runtime.blas_threads import blas_threads, dense_threads
from ..linalg.factorization import Factorization
from .dense_device import SchurDense, WoodburyDense, dense_backend
from .dense_device import vertex_dofs as _dofs

__all__ = ["GlobalSolver", "DirectSolver", "PCGSolver", "SchurSolver", "WoodburySolver", "make_global_solver",
           "touched_vertices", "SOLVERS"]


def touched_vertices(b) -> np.ndarray:
    """Sorted vertex ids (k,) whose dofs have a non-zero entry in b (3nf, 3nf) CSR (None: none)."""
    if b is None or b.nnz == 0:
        return np.zeros(0, np.int64)
    b = sp.csr_matrix(b)
    rows = np.repeat(np.arange(b.shape[0]), np.diff(b.indptr))
    nz = rows[b.data != 0.0]
    return np.unique(nz // 3).astype(np.int64)


class GlobalSolver:
    """Base: ``prepare(k_free, x2)`` once, then ``solve(b, rhs)`` (module doc). backend: ``linear.Factorization``
    backend of the sparse factors; device: where the dense steps run, 'cpu' (default), 'gpu' (CuPy) or a
    ``dense_device.DenseBackend`` ('schur' and 'woodbury' only; the others take 'cpu')."""

    name = "base"
    #: Whether the solver has dense steps that a ``device`` can run ('schur', 'woodbury').
    has_dense_steps = False

    def __init__(self, backend: str = "auto", device="cpu"):
        if device != "cpu" and not self.has_dense_steps:
            raise ValueError(f"{self.name}: device {device!r}: only the 'schur' and 'woodbury' global steps have "
                             f"dense algebra to move; '{self.name}' runs on the CPU (device 'cpu')")
        self.dense_backend = dense_backend(device)  # imports CuPy for 'gpu' (DeviceError without CuPy or a GPU)
        self.device = self.dense_backend.name
        self.backend = backend
        self.threads = dense_threads()  # BLAS threads of the dense steps (``blas_threads``)
        self.k = None
        self.n1 = self.n2 = 0
        self.last_nc = 0
        self.fallbacks = 0
        self._kfac = None
        self._kron = None

    @property
    def nf(self) -> int:
        """Number of free vertices."""
        return self.k.shape[0]

    def prepare(self, k_free, x2=None) -> "GlobalSolver":
        """Factorise what stays constant. k_free (nf, nf) SPD [N/m]; x2 (n2,) int: collision-aware free vertices
        (used by 'schur'/'woodbury'; the others report n1 = nf - n2 for the statistics). Returns self."""
        self.k = sp.csr_matrix(k_free, dtype=np.float64)
        self.k.sort_indices()
        x2 = np.zeros(0, np.int64) if x2 is None else np.unique(np.asarray(x2, np.int64))
        if x2.size and (x2[0] < 0 or x2[-1] >= self.nf):
            raise ValueError(f"x2 must hold free-vertex ids in 0..{self.nf - 1}")
        self.x2 = x2
        self.n2, self.n1 = len(x2), self.nf - len(x2)
        self._kron = None
        with blas_threads(self.threads):
            self._kfac = Factorization(self.backend).factor(self.k)
            self._prepare()
        return self

    def _prepare(self) -> None:
        pass

    def kron(self) -> sp.csr_matrix:
        """K (x) I_3 (3nf, 3nf) CSR, vertex-major."""
        if self._kron is None:
            self._kron = sp.kron(self.k, sp.identity(3), format="csr")
        return self._kron

    def solve_k(self, rhs: np.ndarray) -> np.ndarray:
        """K^-1 rhs for rhs (nf, 3): the contact-free step."""
        return self._kfac.solve(np.asarray(rhs, np.float64).reshape(self.nf, 3))

    def direct(self, b, rhs: np.ndarray) -> np.ndarray:
        """(K (x) I_3 + b)^-1 rhs by a sparse factorisation of the whole matrix (the reference)."""
        a = self.kron() + sp.csr_matrix(b)
        return Factorization(self.backend).factor(a).solve(rhs.reshape(-1)).reshape(-1, 3)

    def solve(self, b, rhs: np.ndarray) -> np.ndarray:
        """p (nf, 3) with (K (x) I_3 + b) p = rhs (nf, 3) [N]; b None or (3nf, 3nf) CSR PSD [N/m]."""
        rhs = np.asarray(rhs, np.float64).reshape(self.nf, 3)
        touched = touched_vertices(b)
        self.last_nc = len(touched)
        with blas_threads(self.threads):
            if not len(touched):
                return self.solve_k(rhs)
            return self._solve(sp.csr_matrix(b), rhs, touched)

    def _solve(self, b, rhs, touched):  # pragma: no cover - interface
        raise NotImplementedError


class DirectSolver(GlobalSolver):
    """'direct': K factorised once; with contact the whole sparse system at every solve."""

    name = "direct"

    def _solve(self, b, rhs, touched):
        return self.direct(b, rhs)


class PCGSolver(GlobalSolver):
    """'pcg' (000 Eq. 5): CG preconditioned by the constant factor of K (applied as K^-1 (x) I_3).

    rtol: stop when ||r_k|| <= rtol ||rhs|| (Euclidean); max_iterations: then RuntimeError."""

    name = "pcg"

    def __init__(self, backend: str = "auto", rtol: float = 1e-12, max_iterations: int = 10_000, device="cpu"):
        super().__init__(backend, device)
        self.rtol, self.max_iterations = float(rtol), int(max_iterations)
        self.iterations = 0
        self.total_iterations = 0

    def _solve(self, b, rhs, touched):
        kmat = self.k

        def apply(v):  # (K (x) I_3 + B) v for v (nf, 3)
            return kmat @ v + (b @ v.ravel()).reshape(-1, 3)

        x = np.zeros_like(rhs)
        r = rhs.copy()
        z = self.solve_k(r)
        d = z.copy()
        rz = float(np.sum(r * z))
        stop = self.rtol * float(np.linalg.norm(rhs))
        for it in range(1, self.max_iterations + 1):
            q = apply(d)
            alpha = rz / float(np.sum(d * q))
            x += alpha * d
            r -= alpha * q
            if float(np.linalg.norm(r)) <= stop:
                self.iterations = it
                self.total_iterations += it
                return x
            z = self.solve_k(r)
            rz_new = float(np.sum(r * z))
            d = z + (rz_new / rz) * d
            rz = rz_new
        raise RuntimeError(f"PCG did not reach rtol {self.rtol:g} in {self.max_iterations} iterations")


class SchurSolver(GlobalSolver):
    """'schur' (000 Eq. 6-8): K11 factorised once, dense S = K22 - K21 K11^-1 K12 once, a dense Cholesky of
    Sigma + B22 (3 n2, 3 n2) per solve (on ``device``: ``dense_device.SchurDense``)."""

    name = "schur"
    has_dense_steps = True
    #: The dense step's class (``dense_device``), built from S on the solver's backend by ``prepare``.
    dense_step = SchurDense

    #: Columns of K12 solved at once while forming S (bounds the dense n1 x block scratch).
    BLOCK = 256

    def _prepare(self) -> None:
        if self.n2 == 0:
            raise ValueError(f"{self.name}: x2 is empty")
        mask = np.zeros(self.nf, bool)
        mask[self.x2] = True
        self.x1 = np.flatnonzero(~mask)
        self.pos2 = np.full(self.nf, -1, np.int64)  # free vertex -> its row in x2 (-1: in x1)
        self.pos2[self.x2] = np.arange(self.n2)
        k = self.k
        self.k12 = k[self.x1][:, self.x2].tocsc()
        self.k21 = self.k12.T.tocsr()
        s = k[self.x2][:, self.x2].toarray()
        if self.n1:
            self._k11 = Factorization(self.backend).factor(k[self.x1][:, self.x1].tocsr())
            for lo in range(0, self.n2, self.BLOCK):
                hi = min(self.n2, lo + self.BLOCK)
                y = self._k11.solve(self.k12[:, lo:hi].toarray())
                s[:, lo:hi] -= self.k21 @ y
        self.s = 0.5 * (s + s.T)
        self.dense = self.dense_step(self.dense_backend, self.s)  # S or S^-1, resident on the device from here

    def _k11_solve(self, r1):
        return self._k11.solve(r1) if self.n1 else r1

    def _condense(self, rhs):
        """(r1, K11^-1 r1, r2 - K21 K11^-1 r1)."""
        r1, r2 = rhs[self.x1], rhs[self.x2]
        y1 = self._k11_solve(r1)
        return r1, y1, r2 - self.k21 @ y1 if self.n1 else r2

    def _assemble(self, rhs, r1, p2):
        p = np.empty_like(rhs)
        p[self.x2] = p2
        if self.n1:
            p[self.x1] = self._k11_solve(r1 - self.k12 @ p2)
        return p

    def _inside_x2(self, touched) -> bool:
        return bool(np.all(self.pos2[touched] >= 0))

    def _solve(self, b, rhs, touched):
        if not self._inside_x2(touched):
            self.fallbacks += 1
            return self.direct(b, rhs)
        r1, _, r2 = self._condense(rhs)
        dof = _dofs(touched)
        p2 = self.dense.solve(self.pos2[touched], b[dof][:, dof].toarray(), r2)  # B_c (3nc, 3nc) dense
        return self._assemble(rhs, r1, p2)


class WoodburySolver(SchurSolver):
    """'woodbury' (000 Eq. 9-11): S^-1 once; per solve a low-rank update on the n_c touched vertices (on
    ``device``: ``dense_device.WoodburyDense``)."""

    name = "woodbury"
    dense_step = WoodburyDense


SOLVERS = {"direct": DirectSolver, "pcg": PCGSolver, "schur": SchurSolver, "woodbury": WoodburySolver}


def make_global_solver(name: str, **kwargs) -> GlobalSolver:
    """A global-step solver by name: 'direct', 'pcg', 'schur' or 'woodbury' (module doc); kwargs go to its
    constructor (backend; device for 'schur' / 'woodbury'; rtol / max_iterations for 'pcg')."""
    if name not in SOLVERS:
        raise ValueError(f"unknown global-step solver {name!r}; choose from {', '.join(SOLVERS)}")
    return SOLVERS[name](**kwargs)
