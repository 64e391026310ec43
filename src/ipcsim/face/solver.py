"""Quasi-static actuated face: Projective Dynamics with IPC on an embedded collision proxy (000 Algorithm 1).

Per frame (expression weights w, ``FaceModel.blend``: targets A_i and bone positions), from the previous frame's
equilibrium x (n, 3) [m], minimise

    E(x) = sum_i w_i min_R ||F_i(x) - R A_i||_F^2  +  kappa B(W x)                          (000 Eq. 1, 3)

over the free (non-bone) vertices; B is the project's barrier potential (``contact.barrier_potential``,
convergent formulation by default: area weights, improved max approximator, physical barrier 1/dhat^3, kappa a
pressure [Pa]) on the proxy s = W x (p, 3) [m] (``FaceModel.proxy_map``). Each iteration (000 Algorithm 1):

1. local step: R_i = polar rotation of F_i A_i for all tets (``energies.shape_targeting.local_step``); the PD
   gradient sum 2 w_i G_i^T (G_i x - vec(R_i A_i)) equals grad E (envelope theorem);
2. constraint set on s (static broad phase at the frame's first iterate, afterwards the set the line search
   built at the accepted point), barrier gradient W^T grad B(s) and PSD-projected Hessian W^T H_B(s) W
   ('analytic' per-stencil projection), restricted to the free dofs;
3. global step: (K (x) I_3 + B_ff) p = -g (000 Eq. 4) by the chosen ``global_step`` solver ('direct', 'pcg',
   'schur', 'woodbury': the same p up to round-off);
4. stop when ||p||_inf < tol * (proxy bounding-box diagonal at rest);
5. CCD on (W x, W (x + p)) (additive CCD; W is linear, so straight vertex paths), alpha_max;
6. backtracking line search from alpha_max on the true energy E (halving until E does not increase, then
   bisections of [accepted, rejected] keeping the lowest E: the Newton loop's ``solvers.line_search``); the
   trajectory candidates of step 5 serve every trial's active set (exact along the segment).

Bones (Dirichlet): the bone vertices go from their previous positions to the frame's targets along the
trajectory, as ``NewtonSolver`` drives prescribed nodes: while they are short of their targets, the direction
holds their remaining displacement d_b and the free vertices' linearised response
p_f = -(K_ff (x) I + B_ff)^-1 (g_f + (K_fb (x) I + B_fb) d_b) (the same global-step solver), and the CCD-bounded
step is taken without energy backtracking (E changes with the prescribed positions, so it is no merit function
then). The proxy therefore never crosses itself on the way, however far the bone moves in a frame (a
collision-free bone motion arrives in one such iteration; a blocked one in several, counted in
``bone_iterations``). Then the usual iterations run with the bone at its target.

    solver = FacePDSolver(model, "woodbury")          # or "direct", "pcg", "schur"; FaceContact(enabled=False)
    for w in model.sequence:
        stats = solver.frame(w)                       # solver.x: the frame's equilibrium (n, 3) [m]

Timings per frame (``FrameStats``) are split as 000 Table 1: IPC (constraint set, barrier gradient/Hessian with
PSD projection, pull-back through W), G-step (global solve), CCD (trajectory broad phase and step bound), LS
(line-search trials: their active sets and energies, the rejected trials' local steps), misc (the rest: the
local step and shape-targeting gradient of each accepted iterate, assembly).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..contact.barrier_potential import barrier_potential, barrier_potential_gradient, barrier_potential_hessian
from ..contact.broad_phase import build_candidates
from ..contact.collisions import build_collisions
from ..contact.formulation import ConvergentSwitch
from ..contact.intersection import find_intersections
from ..contact.stiffness import minimum_distance_squared
from ..energies import shape_targeting as st
from ..geometry.collision_mesh import CollisionMesh
from ..runtime.blas_threads import blas_threads, dense_threads
from ..solvers import validation
from ..solvers.line_search import backtrack, collision_free_bound
from .global_step import make_global_solver
from .regions import collision_aware_vertices, contact_prone_proxy


@dataclass
class FaceContact(ConvergentSwitch):
    """Contact on the proxy. enabled: False gives 000 Table 1's o (no collision handling); dhat [m] (None:
    dhat_rel times the proxy's rest bounding-box diagonal); kappa [Pa] (None: the mean shape-targeting
    stiffness); convergent: the convergent formulation (002) as in ``ContactParameters``."""

    enabled: bool = True
    dhat: float | None = None
    dhat_rel: float = 1e-3
    kappa: float | None = None
    convergent: bool = True


@dataclass
class FrameStats:
    """One frame. iterations: global steps (bone iterations included); bone_iterations: those moving the bone;
    line_search_steps: energy trials; converged; stalled: the line search found no decrease down to alpha 1e-12
    (E is flat to round-off there: the frame ends, not converged); energy [J] at the end; n_contacts: active
    stencils at the end; min_distance [m] (inf without contact); n1, n2: collision-agnostic / -aware free
    vertices; nc_mean, nc_max: free vertices touched by the barrier Hessian per global step; fallbacks: global
    steps solved directly because a contact reached x1; pcg_iterations: summed over the frame; times [s] as 000
    Table 1."""

    iterations: int = 0
    bone_iterations: int = 0
    line_search_steps: int = 0
    converged: bool = False
    stalled: bool = False
    energy: float = 0.0
    n_contacts: int = 0
    min_distance: float = math.inf
    n1: int = 0
    n2: int = 0
    nc_mean: float = 0.0
    nc_max: int = 0
    fallbacks: int = 0
    pcg_iterations: int = 0
    time_ipc: float = 0.0
    time_global: float = 0.0
    time_ccd: float = 0.0
    time_line_search: float = 0.0
    time_misc: float = 0.0
    time_total: float = 0.0
    history: list = field(default_factory=list)


@dataclass
class _Point:
    """An evaluated iterate: x (n, 3) [m], s = W x (p, 3) [m], the active set, the true energy E [J], the
    shape-targeting gradient (n, 3) [N], and the seconds its local step and shape-targeting gradient took (000
    Table 1 counts them as misc). The rotations are not kept (no later step reads them)."""

    x: np.ndarray
    s: np.ndarray
    coll: object
    energy: float
    grad: np.ndarray
    time_local: float = 0.0


class FacePDSolver:
    """000 Algorithm 1 on a ``FaceModel`` (module doc).

    Args:
        model: the ``FaceModel``; solver: global-step solver name ('direct', 'pcg', 'schur', 'woodbury') or a
        ``global_step.GlobalSolver``; contact: ``FaceContact``; tol: stopping rule relative to the proxy's rest
        bounding-box diagonal; max_iterations: per frame (global steps; the local-global iteration converges
        linearly: the large face's press_roll frames 40 and 44 need 206 and 254, ``docs/face_benchmark.md``);
        x2: collision-aware simulation-vertex ids (None: ``regions.collision_aware_vertices(model,
        rings=x2_rings)``); backend: ``linear.Factorization``
        backend; pcg_rtol: relative residual of 'pcg'; device: where the dense algebra of 'schur' / 'woodbury' runs,
        'cpu' (default) or 'gpu' (CuPy; ``global_step``, ``dense_device``: DeviceError without CuPy or a GPU).
    Attributes: x (n, 3) [m] the current equilibrium (the rest shape at construction), n1, n2.
    """

    def __init__(self, model, solver="woodbury", contact: FaceContact | None = None, tol: float = 1e-4,
                 max_iterations: int = 500, x2=None, x2_rings: int = 0, backend: str = "auto",
                 pcg_rtol: float = 1e-12, device: str = "cpu"):
        self.model = model
        self.contact = contact or FaceContact()
        self.tol, self.max_iterations = float(tol), int(max_iterations)
        n = len(model.rest)
        self.tets = np.ascontiguousarray(model.tets, np.int64)
        self.dm_inv, volume, grads = st.rest_shape(model.rest, self.tets)
        self._incidence = st.vertex_incidence(self.tets, n)  # the multi-threaded gradient's gather
        self.w = np.asarray(model.stiffness, np.float64) * volume
        k = st.scalar_hessian(n, model.tets, grads, self.w)
        self.bone = np.asarray(model.bone, np.int64)
        is_bone = np.zeros(n, bool)
        is_bone[self.bone] = True
        self.free = np.flatnonzero(~is_bone)
        self.k_fb = k[self.free][:, self.bone].tocsr()
        self.mesh = CollisionMesh.from_triangle_mesh(model.proxy_vertices, model.proxy_faces)
        self.bbox = self.mesh.bbox_diagonal()
        c = self.contact
        self.dhat = float(c.dhat) if c.dhat is not None else c.dhat_rel * self.bbox
        self.kappa = float(c.kappa) if c.kappa is not None else float(np.mean(model.stiffness))
        self._free_dofs, self._bone_dofs = _dofs(self.free), _dofs(self.bone)
        x2_all = collision_aware_vertices(model, rings=x2_rings) if x2 is None else np.asarray(x2, np.int64)
        free_index = np.full(n, -1, np.int64)
        free_index[self.free] = np.arange(len(self.free))
        x2_free = free_index[x2_all]
        self.x2 = x2_free[x2_free >= 0]
        if isinstance(solver, str):
            kw = {"rtol": pcg_rtol} if solver == "pcg" else {}
            self.solver = make_global_solver(solver, backend=backend, device=device, **kw)
        elif device != "cpu":
            raise ValueError("device applies to a global-step solver given by name (a solver object has its own)")
        else:
            self.solver = solver
        self.solver.prepare(k[self.free][:, self.free].tocsr(), self.x2)
        self.n1, self.n2 = self.solver.n1, self.solver.n2
        self.x = np.array(model.rest, np.float64)
        if self.contact.enabled:
            self.check_intersection_free()

    # ------------------------------------------------------------------ energy
    def _collisions(self, s, candidates):
        if not self.contact.enabled:
            return None
        return build_collisions(self.mesh, s, self.dhat, candidates=candidates,
                                **self.contact.formulation.collision_args)

    def _barrier_args(self) -> dict:
        return dict(stiffness=self.kappa, **self.contact.formulation.potential_args)

    def _evaluate(self, x, a, candidates) -> _Point:
        """The true energy and its shape-targeting gradient (one local step) at x; the active set from
        candidates (None: a static broad phase at W x)."""
        s = self.model.proxy_map.apply(x)
        coll = None
        if self.contact.enabled:
            if candidates is None:
                candidates = build_candidates(self.mesh, s, None, inflation_radius=0.5 * self.dhat)
            coll = self._collisions(s, candidates)
        t0 = time.perf_counter()
        e, g = st.energy_gradient(x, self.tets, self.dm_inv, a, self.w, self._incidence)
        t_local = time.perf_counter() - t0
        if coll is not None and len(coll):
            e += barrier_potential(coll, self.mesh, s, **self._barrier_args())
        return _Point(x, s, coll, e, g, t_local)

    def _contact_terms(self, pt: _Point, arrived: bool):
        """(barrier gradient on the nodes (n, 3) [N], B_ff (3nf, 3nf), B_fb (3nf, 3nb) CSR [N/m]); None's
        without an active set; B_fb None once the bone has arrived (only its motion needs it)."""
        if pt.coll is None or not len(pt.coll):
            return None, None, None
        args = self._barrier_args()
        gb = barrier_potential_gradient(pt.coll, self.mesh, pt.s, **args)
        hb = barrier_potential_hessian(pt.coll, self.mesh, pt.s, project="analytic", **args)
        w = self.model.proxy_map
        g = w.pull_gradient(gb).reshape(-1, 3)
        b_ff = w.pull_hessian(hb, self._free_dofs, self._free_dofs)
        b_fb = w.pull_hessian(hb, self._free_dofs, self._bone_dofs) if len(self.bone) and not arrived else None
        return g, b_ff, b_fb

    # ------------------------------------------------------------------ one frame
    def check_intersection_free(self, x=None) -> None:
        """ValueError naming an intersecting proxy edge-face pair at x (default: the current state)."""
        s = self.model.proxy_map.apply(self.x if x is None else x)
        hits = find_intersections(self.mesh, s, max_count=1)
        if len(hits):
            raise ValueError(f"the collision proxy intersects itself (edge {hits[0, 0]}, face {hits[0, 1]})")

    def start_from(self, x) -> None:
        """Set the state the next frame starts from: x (n, 3) [m] (copied), e.g. another solver's equilibrium, so
        that several solvers run the same frames from the same state; refused (ValueError) when the shape is wrong
        or, with contact, when its proxy intersects itself."""
        x = np.array(x, np.float64)
        if x.shape != self.x.shape:
            raise ValueError(f"start state must have shape {self.x.shape}, got {x.shape}")
        if self.contact.enabled:
            self.check_intersection_free(x)
        self.x = x

    def frame(self, weights) -> FrameStats:
        """Solve the frame with expression weights (K,) from the current state; updates ``x``. OpenBLAS runs on one
        thread meanwhile where the machine has fewer than 4 cores (``runtime.blas_threads.dense_threads``): its
        threaded level-1 calls (the slopes' dot products over all vertices) leave its workers spinning on the
        cores the Numba and MKL threads need (large face, 2 cores, pucker_funnel frames 0-11 by diamond:
        2,439 -> 1,601 ms a frame)."""
        with blas_threads(dense_threads()):
            return self._frame(weights)

    def _frame(self, weights) -> FrameStats:
        t_start = time.perf_counter()
        a, target = self.model.blend(weights)
        stats = FrameStats(n1=self.n1, n2=self.n2)
        pcg0 = getattr(self.solver, "total_iterations", 0)
        fb0 = self.solver.fallbacks
        t0 = time.perf_counter()
        pt = self._evaluate(self.x, a, None)
        stats.time_ipc += time.perf_counter() - t0 - pt.time_local  # the frame's first constraint set
        ncs = []
        for it in range(self.max_iterations):
            d_bone = target - pt.x[self.bone]
            arrived = not np.any(d_bone)
            p, slope = self._direction(pt, d_bone, arrived, stats)
            ncs.append(self.solver.last_nc)
            stats.iterations += 1
            if arrived and np.max(np.abs(p), initial=0.0) < self.tol * self.bbox:
                stats.converged = True
                break
            candidates, alpha = self._ccd(pt, p, stats)
            new, alpha = self._advance(pt, p, a, alpha, arrived, candidates, target, stats, slope)
            if new is None:
                stats.stalled = True
                break
            if validation.hook is not None and self.contact.enabled:  # tests: check the accepted update
                validation.hook(self.mesh, pt.s, new.s)
            pt = new
            stats.history.append((it, alpha, pt.energy))
        self.x = pt.x
        stats.energy = pt.energy
        self._finish(pt, stats, ncs, pcg0, fb0)
        stats.time_total = time.perf_counter() - t_start
        stats.time_misc = (stats.time_total - stats.time_ipc - stats.time_global - stats.time_ccd
                           - stats.time_line_search)
        return stats

    def _direction(self, pt: _Point, d_bone, arrived: bool, stats: FrameStats) -> tuple[np.ndarray, float]:
        """The global step p (n, 3) [m] at pt (bone rows: their remaining displacement) and the slope grad E . p
        [J] (E's derivative along p at alpha = 0: the shape-targeting and barrier gradients, for
        ``line_search.backtrack``)."""
        t0 = time.perf_counter()
        gc, b_ff, b_fb = self._contact_terms(pt, arrived)
        stats.time_ipc += time.perf_counter() - t0
        rhs = -pt.grad[self.free]
        if gc is not None:
            rhs -= gc[self.free]
        if not arrived:
            rhs -= self.k_fb @ d_bone
            if b_fb is not None:
                rhs -= (b_fb @ d_bone.ravel()).reshape(-1, 3)
        t0 = time.perf_counter()
        p = np.zeros_like(pt.x)
        p[self.free] = self.solver.solve(b_ff, rhs)
        p[self.bone] = d_bone
        stats.time_global += time.perf_counter() - t0
        slope = float(np.vdot(pt.grad, p)) + (float(np.vdot(gc, p)) if gc is not None else 0.0)
        return p, slope

    def _ccd(self, pt: _Point, p, stats: FrameStats):
        """(trajectory candidates or None, alpha_max): the largest collision-free fraction of the step p."""
        if not self.contact.enabled:
            return None, 1.0
        t0 = time.perf_counter()
        candidates, alpha = collision_free_bound(self.mesh, pt.s, self.model.proxy_map.apply(pt.x + p), self.dhat)
        stats.time_ccd += time.perf_counter() - t0
        return candidates, alpha

    def _advance(self, pt: _Point, p, a, alpha, arrived, candidates, target, stats: FrameStats, slope=None):
        """(the next iterate, its step fraction): the line search from alpha on E (``line_search.backtrack``, with
        the slope grad E . p [J]) when the bone has arrived (None when no trial down to alpha <
        ``line_search.MIN_ALPHA`` decreases E), else the CCD-bounded bone step."""
        t0 = time.perf_counter()
        if arrived:
            def evaluate(step):
                trial = self._evaluate(pt.x + step * p, a, candidates)
                return trial, trial.energy

            found = backtrack(evaluate, pt.energy, alpha, slope=slope)
            stats.line_search_steps += found.trials
            new, alpha = (found.point if found.decreased else None), found.alpha
        else:
            stats.bone_iterations += 1
            x = pt.x + alpha * p
            if alpha >= 1.0:
                x[self.bone] = target  # exact arrival
            new = self._evaluate(x, a, candidates)
        # the accepted point's local step and gradient start the next iteration: misc, not line search
        stats.time_line_search += time.perf_counter() - t0 - (new.time_local if new is not None else 0.0)
        return new, alpha

    def _finish(self, pt: _Point, stats: FrameStats, ncs, pcg0, fb0) -> None:
        stats.nc_mean = float(np.mean(ncs)) if ncs else 0.0
        stats.nc_max = int(max(ncs)) if ncs else 0
        stats.fallbacks = self.solver.fallbacks - fb0
        stats.pcg_iterations = getattr(self.solver, "total_iterations", 0) - pcg0
        if pt.coll is not None and len(pt.coll):
            stats.n_contacts = len(pt.coll)
            stats.min_distance = math.sqrt(minimum_distance_squared(pt.coll, self.mesh, pt.s))

    def run(self, sequence=None) -> tuple[list, list]:
        """Frames of an animation (frames, K) (None: the model's ``sequence``), each from the previous one's
        equilibrium. Returns (positions: list of (n, 3) [m], stats: list of ``FrameStats``)."""
        seq = self.model.sequence if sequence is None else sequence
        xs, stats = [], []
        for w in np.asarray(seq, np.float64):
            stats.append(self.frame(w))
            xs.append(self.x.copy())
        return xs, stats


def _dofs(vertices: np.ndarray) -> np.ndarray:
    """(3k,) vertex-major dofs of vertices (k,)."""
    return (3 * np.asarray(vertices, np.int64)[:, None] + np.arange(3)).ravel()



def predict_collision_aware_vertices(model, radius: float, rings: int = 1, sequence=None,
                                     tol: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """An automatic x2 smaller than the whole proxy's footprint (000 marks it by hand): solve the animation
    (frames, K) (None: the model's sequence) once without collision handling (PD with the constant factor only:
    cheap), keep the proxy vertices that come within radius [m] of another proxy primitive in some frame (or cross
    it: ``regions.contact_prone_proxy``), and take the nodes of their tets grown by ``rings``.

    Penetrating parts of the contact-free run can be deeper than radius, and the contact run deforms differently,
    so a later contact may still leave this x2: the Schur/Woodbury steps then solve directly (exact, counted in
    ``FrameStats.fallbacks``). Returns (x2 simulation-vertex ids, the contact-prone proxy vertex ids)."""
    pd = FacePDSolver(model, "direct", FaceContact(enabled=False), tol=tol, x2=np.zeros(0, np.int64))
    xs, _ = pd.run(sequence)
    near = contact_prone_proxy(model, pd.mesh, xs, radius)
    return collision_aware_vertices(model, proxy=near, rings=rings), near
