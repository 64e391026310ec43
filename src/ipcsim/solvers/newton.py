"""The solver base: one projected Newton loop on the barrier-augmented incremental potential, shared by every
integrator (implicit Euler, Newmark, quasi-static) and every body kind (x = J q).

    E(q) = w_i/2 (q - q_hat)^T M (q - q_hat) + w_p (Psi(q) + kappa B(J q) + D(J q) - f_ext . q) [+ E_d(q)]
           [+ E_beta(q)]      (E_d: IPC's dampingRatio; E_beta: the bodies' stiffness damping, ``stiffness_damping``)

q (n, 3) [m] are the node positions (``Model``), J the model's map to the collision surface
(``Model.surface_map``), M its mass (``Model.mass_matrix``), the integrator (``ipcsim.solvers.integrators``)
supplies q_hat, (w_i, w_p) and the velocity/acceleration update. The terms are objects
(``ipcsim.solvers.terms``) built per step with their frozen data (lagged friction, damping), so the energy
the line search evaluates is a pure function of q and of the step's ``IncrementalPotential``.

B is the barrier potential on the collision surface (the h^2 factor multiplies the barrier too, 001 §4), in the
convergent formulation by default (area weights, improved max approximator, physical barrier scaled by
1/dhat^3) with a fixed kappa [Pa] (docs/contact.md). D is IPC's lagged friction potential: its normal forces
lambda_k are the barrier forces kappa * s * |db/dd| lagged at the start of the step.

Each Newton iteration: PSD-projected Hessian, direct solve for p over the free coordinates (the solver's own
``linear.Factorization``), step bound alpha_max from additive CCD on the surface (J q -> J (q + p): straight
lines, since J is linear) and the inversion bound (``ElasticAssembler.max_step``: the tets of bodies with
inversion "prevent", and neo-Hookean ones), one trajectory broad phase whose
candidates every line-search trial reuses (001 §3), then backtracking until the energy decreases (refined by
bisection when a trial was rejected, ``line_search.backtrack``). Prescribed
nodes (obstacles, Dirichlet sets) take part in the trajectory: while they are short of their targets, p holds
their remaining displacement and the unknowns' linearised response, and the CCD/inversion-bounded step is taken
without energy backtracking (E changes with the prescribed positions, so it is no merit function then); once
they have arrived the usual projected Newton runs. Convergence: ||p||_inf / h < tol * bbox_diagonal (IPC's), and
with friction a tighter bound at the friction stencils (``NewtonSolver._small``).
At the end of a step the contact force -grad(kappa B) and the friction force -grad D on each collision body
are read out (``StepStats.body_forces`` [N], one more barrier and friction gradient; timed in time_contact).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..contact.barrier_potential import barrier_potential, barrier_potential_gradient
from ..contact.barrier_sign import warn_negative_barrier
from ..contact.collisions import build_collisions
from ..contact.formulation import ConvergentSwitch
from ..contact.friction import FrictionCollisions, FrictionPotential, increment_effect
from ..contact.stiffness import minimum_distance_squared, softer_side_stiffness, surface_youngs_modulus
from ..model import Model, State
from ..runtime.blas_threads import blas_threads, dense_threads
from . import validation
from .elastic import ElasticAssembler
from .friction_params import FrictionParameters, stencil_mu
from .integrators import LaggedRayleighDamping, check_damping_ratio
from .line_search import LINE_SEARCH_REFINEMENTS, CandidateSkin, backtrack, collision_free_bound
from ..linalg.factorization import Factorization, compute_ordering, resolve_backend
from ..linalg.pardiso import pardiso_available
from .reduction import FreePattern, PatternCache
from .stiffness_damping import StiffnessDamping
from .terms import (BarrierTerm, DampingTerm, ElasticEnergyTerm, ExternalWorkTerm, FrictionTerm,
                    IncrementalPotential, InertiaTerm, StiffnessDampingTerm)
from .step_stats import StepStats
from .warm_start import newton_start


@dataclass
class ContactParameters(ConvergentSwitch):
    """dhat [m]: barrier activation distance; kappa [Pa]: barrier stiffness, the same for every contact; None:
    per contact, 0.1 x the Young's modulus of its softer side (obstacles and planes are rigid), so a soft body
    touching a stiff one gets the soft body's barrier (docs/contact.md, "Mixed stiffness").

    convergent: area weighting + improved max approximator + physical barrier (002); False gives IPC 2020's
    unweighted barrier (kappa then has units Pa/m^3... prefer the default).
    """

    dhat: float = 1e-3
    kappa: float | None = None
    convergent: bool = True


@dataclass
class _StepSetup:
    """What a step freezes before its Newton solves: the predictor q_hat (n, 3) [m], the prescribed mask (n,),
    their targets (n, 3) [m], external forces f_ext (n, 3) [N], the weights, the lagged damping and the terms
    added with ``NewtonSolver.add_term``."""

    q_hat: np.ndarray
    prescribed: np.ndarray
    target: np.ndarray
    f_ext: np.ndarray
    weights: tuple
    damping: LaggedRayleighDamping | None
    extra_terms: list


#: the broad phases' skin, as a fraction of dhat (``line_search.CandidateSkin``). Measured on the plate rack (clean,
#: embedded, 300 steps, warm start), with the kept candidates forgotten at each step: 675 broad phases -> 310 at
#: 0.25 (366 queries answered by the kept candidates), CCD 12.0 -> 9.0 ms a step, CPU 33.5 -> 30.3 ms a step; at
#: 0.5 (304 builds) the larger candidate sets' narrow phases cost what the fewer builds save. Teddy grasp (low):
#: 587 -> 249 broad phases. Kept from step to step and reused after a common translation: 249 -> 134 on the
#: teddy grasp (163 answers after a translation: the lift carries the teddy and the bubbles as one), CCD 0.242 ->
#: 0.210 s over its 200 steps (medians of 10 runs in turn); 310 -> 250 on the plate rack. At 0.5 and 1.0 the
#: grasp needs 115 and 58 broad phases and runs no faster.
CANDIDATE_SKIN = 0.25

#: with friction, the stop rule's bound at friction stencils is at most this fraction of eps_v (``velocity_tolerance``)
FRICTION_TOL_FRACTION = 0.1


def velocity_tolerance(tol: float, bbox: float, friction: FrictionParameters | None) -> float:
    """The Newton stop rule's friction bound [m/s]: tol [1/s] x the simulated bodies' bounding-box diagonal bbox [m]
    (IPC's rule), and with friction at most ``FRICTION_TOL_FRACTION`` x eps_v [m/s]. It holds at the friction
    stencils only (``NewtonSolver._small``: their normal relative increments / h, and their friction force change,
    at most what a tangential velocity change of this bound makes); every other increment / h is held to tol x bbox.

    Why the cap: near stick the lagged friction is a spring of stiffness ~ 2 mu lambda / (eps_v h) per contact
    (the smoothed Coulomb law's slope), so a Newton increment there is at most ~ eps_v h times the relative force
    residual, and a bound tol * bbox above eps_v accepts an iterate whose friction force is wrong by O(mu lambda):
    measured, a 10 cm block on a 20 deg slope with mu = 0.2 (it must slide at g (sin - mu cos) = 1.51 m/s^2)
    stayed stuck at the default tol = 1e-2 (bound 1.7e-3 m/s > eps_v = 1e-3 m/s), one Newton iteration a step.
    Only there: a stencil's lagged friction force depends on its tangential relative displacement alone, and the
    next lagging reads lambda from its distances (the tangential part alone left that slope 1.7 % slow).
    """
    bound = float(tol) * float(bbox)
    if friction is not None:
        bound = min(bound, FRICTION_TOL_FRACTION * float(friction.eps_v))
    return bound


def free_coordinates(prescribed: np.ndarray) -> np.ndarray:
    """(3n,) bool: the coordinates of the unknowns given the prescribed-node mask (n,)."""
    return ~np.repeat(np.asarray(prescribed, bool), 3)


class NewtonSolver:
    """Advances a Model's State by one step of its integrator with IPC contact (no intersection, no inversion),
    lagged friction, prescribed motions, Neumann loads and optional lagged Rayleigh damping.

    Subclasses choose the integrator (``ImplicitEulerSolver``, ``NewmarkSolver``, ``QuasiStaticSolver``).

    Args:
        model: the scene; integrator: an object of ``ipcsim.solvers.integrators``; contact: barrier parameters;
        friction: None or ``FrictionParameters``; tol: Newton tolerance (relative to the bounding-box diagonal,
        per second of step); max_newton_iterations; linear_backend: see ``linear.Factorization``;
        damping_ratio: IPC's dampingRatio in [0, 1] (0: no damping, see ``integrators``); the bodies' own
        stiffness damping (``Model.damping_stiffness``) is added as ``terms.StiffnessDampingTerm``;
        sanity_check: run ``ipcsim.model.sanity.check_scene`` on the state of the first step; warm_start: start
        from the CCD-bounded extrapolation x^t + h v^t, prescribed nodes on their targets (``warm_start``).
    """

    def __init__(self, model: Model, integrator, contact: ContactParameters | None = None, tol: float = 1e-2,
                 max_newton_iterations: int = 1000, linear_backend: str = "auto",
                 friction: FrictionParameters | None = None, sanity_check: bool = True,
                 damping_ratio: float = 0.0, warm_start: bool = False):
        self.model = model
        self.integrator = integrator
        self.contact = contact or ContactParameters()
        self.kappa, self.vertex_stiffness = self.contact.kappa, None
        if self.kappa is None:
            jm = model.surface_map
            e_s = surface_youngs_modulus(model.tets, model.youngs_modulus, model.n_vertices, jm.nodes, jm.weights)
            self.kappa, self.vertex_stiffness = softer_side_stiffness(e_s)
        self.friction = friction if friction is not None and friction.enabled else None
        self.damping_ratio = check_damping_ratio(damping_ratio)
        self.tol = tol
        self.warm_start = bool(warm_start)
        self.max_newton_iterations = max_newton_iterations
        self.linear_backend = linear_backend
        self.linear = Factorization(linear_backend)
        self.elastic = ElasticAssembler(model)
        self.stiffness_damping = StiffnessDamping(model, self.elastic)
        if self.stiffness_damping.enabled and integrator.quasi_static:
            raise ValueError("a body's damping_stiffness needs a dynamic integrator (quasi-static steps have no "
                             "velocity)")
        self.patterns = PatternCache()
        #: broad phases kept for later queries inside their boxes, from step to step (``line_search.CandidateSkin``)
        self.candidate_skin = CandidateSkin(CANDIDATE_SKIN * self.contact.dhat)
        sim = ~model.is_obstacle
        self._bbox = float(np.linalg.norm(np.ptp(model.rest_positions[sim], axis=0)))
        #: run ``ipcsim.model.sanity.check_scene`` at the next step (set False when the caller has checked the scene)
        self.check_on_first_step = bool(sanity_check)
        self.term_factories: list = []  # extra energy terms (``add_term``)
        self._orderings = {}  # packed free mask -> pardiso ordering of the contact-free H_ff (``_ordering_for``)
        self._last_static = None  # (parameters, xs, active set) of the last ``_static_collisions``
        self._last_ordering = (None, None)  # (free mask object, its ordering) of the last ``_ordering_for``
        self._mu_tables = None  # friction coefficients between collision bodies and of planes (``_friction_term``)
        self._own = None  # (all nodes?, ids of the nodes not carrying a fine surface) (``_increment``), on first use
        self.warned_negative_barrier = False  # ``contact.barrier_sign``: once per solver

    def _increment(self, p: np.ndarray, jp: np.ndarray | None = None) -> float:
        """||p||_inf [m] of the stopping rule, measured where the bodies are: a node's own displacement for
        full-space bodies, the collision surface's J p for the nodes that only carry a fine surface (embedded and
        affine bodies, whose cage nodes sit outside the body and move further than any of its points). For a
        model of full-space bodies it is max |p| over all nodes (IPC's rule). jp: J p (n_surface, 3) [m] if known."""
        if self._own is None:  # nodes measured by their own displacement (all but the cage nodes)
            jm = self.model.surface_map
            own = np.ones(self.model.n_vertices, bool)
            if not jm.is_selection:
                mapped = ~((jm.weights[:, 0] == 1.0) & np.all(jm.weights[:, 1:] == 0.0, axis=1))
                own[jm.nodes[mapped][jm.weights[mapped] != 0.0]] = False
            self._own = (bool(own.all()), np.flatnonzero(own))
        everywhere, own = self._own
        if everywhere:
            return float(np.abs(p).max())
        jp = self.model.surface_map.apply(p) if jp is None else jp
        return float(max(np.abs(p[own]).max() if len(own) else 0.0, np.abs(jp).max()))

    @property
    def velocity_tol(self) -> float:
        """The stop rule's bound [m/s] at the friction stencils (``velocity_tolerance``, ``_small``)."""
        return velocity_tolerance(self.tol, self._bbox, self.friction)

    @property
    def free_velocity_tol(self) -> float:
        """The stop rule's bound on every node's ||p||_inf / h [m/s]: tol x bbox diagonal (IPC's rule)."""
        return velocity_tolerance(self.tol, self._bbox, None)

    def _small(self, p: np.ndarray, h: float, potential: IncrementalPotential, ev) -> bool:
        """The stop rule for the Newton increment p (n, 3) [m] of a step of size h [s] at the iterate ev:

        - every node: ||p||_inf / h < tol x bbox (IPC's rule; measured where the bodies are, ``_increment``);
        - with friction, at each stencil with w mu lambda != 0 (the lagged ``FrictionCollisions``), when
          ``velocity_tol`` (min(tol x bbox, 0.1 eps_v)) is the tighter bound: the increment changes the stencil's
          friction force by less than 2 velocity_tol / eps_v of w mu lambda (what a tangential velocity change of
          velocity_tol makes at stick, the force's steepest; a sliding contact, whose force only turns, passes
          with a larger increment), and the normal part of its relative increment / h is below velocity_tol
          (the next lagging's lambda is read from those distances).
        """
        jp = self.model.surface_map.apply(p)
        if self._increment(p, jp) / h >= self.free_velocity_tol:
            return False
        vt = self.velocity_tol
        fric = potential.term(FrictionTerm) if self.friction else None
        if fric is None or len(fric.collisions) == 0 or vt >= self.free_velocity_tol:
            return True
        fc = fric.collisions
        active = (fc.mu * fc.normal_force * fc.weight) != 0.0
        if not active.any():
            return True
        force, normal = increment_effect(fc, ev.xs - fric.xs_lag, jp, fric.potential.eps_u)
        return bool(np.max(normal[active]) < vt * h and np.max(force[active]) < 2.0 * vt / fric.potential.eps_v)

    def add_term(self, factory) -> None:
        """Add an energy term to every step: ``factory(state_in, h, weights)`` returns an ``EnergyTerm`` (or None)
        for the step from state_in of size h [s] with the integrator's weights (w_i, w_p); it is summed with the
        built-in terms by the same Newton loop (e.g. an affine body's orthogonality energy, an actuation)."""
        self.term_factories.append(factory)

    @property
    def quasi_static(self) -> bool:
        """True for a quasi-static integrator (no inertia; the integrator's own ``quasi_static``)."""
        return self.integrator.quasi_static

    # ------------------------------------------------------------------ history, surface, collisions
    def forget_history(self) -> None:
        """Drop the caches kept across steps (the surface entries of the free-dof sparsity pattern, the factor
        and its reusable ordering): their explicit zeros and orderings change the round-off, and each step must
        be a function of its input state alone so that a run resumed from a checkpoint equals an uninterrupted
        one. Kept: the base pattern (elastic block and diagonal) and an analysis of it made with the model's own
        ordering (``_ordering_for``), both functions of the model and the free mask alone, which give the bits
        of fresh ones and save the step's first symbolic analysis; that analysis also serves a new step whose
        pattern (contact entries included) equals it, for the same reason (``pardiso.PardisoSPD``); and the broad
        phase's kept candidates (``candidate_skin``): a query they answer gets a superset of its pairs, from which
        the narrow phases find the bits of a fresh broad phase. Called at the start of every ``step``."""
        self.patterns.clear()
        self.linear.reset(keep_analysis=True)

    def _ordering_for(self, free: np.ndarray):
        """The factorization's fill-reducing ordering of the contact-free Newton matrix H_ff (elastic pattern and
        diagonal) for this free mask, computed once per mask: it depends on the model and the mask only, so
        steps stay history-free, and no step pays for a nested dissection. None where the backend has none."""
        if self._last_ordering[0] is free:  # the same mask object: the Newton iterations of a solve
            return self._last_ordering[1]
        n_free = int(np.count_nonzero(free))
        backend = resolve_backend(self.linear_backend, n_free, self.linear.dense_below)
        if backend not in ("pardiso", "supernodal") or not pardiso_available():
            self._last_ordering = (free, None)
            return None
        key = np.packbits(free).tobytes()
        if key not in self._orderings:
            e = self.elastic.pattern
            base = FreePattern(e.indptr, e.indices, free)
            data = np.full(base.nnz, 1e-3)
            data[base.diagonal] = 1.0
            if len(self._orderings) >= 4:
                self._orderings.pop(next(iter(self._orderings)))
            self._orderings[key] = compute_ordering(base.csr(data))
        self._last_ordering = (free, self._orderings[key])
        return self._orderings[key]

    def _surface(self, x: np.ndarray) -> np.ndarray:
        """Collision-surface positions J x (n_surface, 3) [m] of node positions x (n, 3) [m]."""
        return self.model.surface_map.apply(x)

    def _build_args(self) -> dict:
        return dict(self.contact.formulation.collision_args, vertex_stiffness=self.vertex_stiffness)

    def _barrier_term(self, weight: float) -> BarrierTerm:
        m = self.model
        return BarrierTerm(m.collision_mesh, m.surface_map, self.contact.dhat, self.kappa, self.contact.convergent,
                           weight, vertex_stiffness=self.vertex_stiffness)

    def _static_collisions(self, xs: np.ndarray):
        """The active set at surface positions xs (n_surface, 3) [m] (static broad phase inflated by dhat / 2).

        The last one is kept with a copy of its positions: a step's end state is the next step's start, where
        the friction lagging asks for the same set again (a pure function of xs and the parameters, so the
        kept set is the one a fresh build would give)."""
        mesh = self.model.collision_mesh
        key = (self.contact.dhat, self.contact.convergent)
        last = self._last_static
        if last is not None and last[0] == key and np.array_equal(last[1], xs):
            return last[2]
        candidates = self.candidate_skin.candidates(mesh, xs, None, inflation_radius=0.5 * self.contact.dhat)
        coll = build_collisions(mesh, xs, self.contact.dhat, candidates=candidates, **self._build_args())
        self._last_static = (key, np.array(xs, np.float64), coll)
        return coll

    def _keep_static(self, ev) -> None:
        """Keep the active set of the evaluation ev (at the step's end) as the static one at ev.xs: it was built
        by the same ``build_collisions`` call at the same positions from the line search's trajectory candidates,
        a superset of the static ones (the trajectory boxes hold the static boxes of every point of the segment,
        both inflated by dhat / 2), and its stencils are canonically ordered (``collisions.merge``): the same set
        a static broad phase would give, without building it again."""
        coll = ev.collisions
        if coll is not None and coll.dhat == self.contact.dhat and ev.candidates is not None:
            key = (self.contact.dhat, self.contact.convergent)
            self._last_static = (key, np.array(ev.xs, np.float64), coll)

    # ------------------------------------------------------------------ the potential
    def _setup(self, state_in: State, h: float, control) -> _StepSetup:
        m = self.model
        t0, t1 = state_in.t, state_in.t + h
        q_hat = self.integrator.predictor(state_in.x, state_in.v, state_in.a, h)
        prescribed = control.prescribed_mask(m.fixed, t0, t1)
        target = control.targets(state_in.x, t0, t1)
        gravity = m.mass_matrix.apply(np.broadcast_to(m.gravity, state_in.x.shape))
        f_ext = gravity + control.external_forces(m.n_vertices, t1)
        damping = None
        if self.damping_ratio > 0.0:
            k_t = self.elastic.hessian_at(state_in.x)
            damping = LaggedRayleighDamping.from_ratio(k_t, state_in.x, self.damping_ratio, h)
        weights = self.integrator.weights(h)
        extra = [t for t in (f(state_in, h, weights) for f in self.term_factories) if t is not None]
        if self.stiffness_damping.enabled:  # per-body beta K v (``stiffness_damping``), K lagged at x^t
            extra.insert(0, StiffnessDampingTerm(self.stiffness_damping.damping(state_in.x, h, weights[1])))
        return _StepSetup(q_hat, prescribed, target, f_ext, weights, damping, extra)

    def _friction_term(self, x_t: np.ndarray, x_lag: np.ndarray, h: float, weight: float) -> FrictionTerm:
        """Friction lagged at node positions x_lag (n, 3) [m]: lambda, closest points and tangent frames frozen
        there (IPC's lagging); tangential displacements are measured from the step's start x_t (n, 3) [m]."""
        fr, mesh, jmap = self.friction, self.model.collision_mesh, self.model.surface_map
        xs = jmap.apply(x_lag)
        coll = self._static_collisions(xs)
        if self._mu_tables is None:
            self._mu_tables = (fr.body_table(int(mesh.body.max()) + 1), fr.plane_table(len(mesh.planes)))
        mu = stencil_mu(coll.kind, coll.vertices, coll.primitives, mesh.body, *self._mu_tables)
        fc = FrictionCollisions.build(coll, mesh, xs, self.kappa, mu, dhat=self.contact.dhat,
                                      **self.contact.formulation.potential_args)
        return FrictionTerm(fc, FrictionPotential(fr.eps_v, h), jmap.apply(x_t), jmap, weight)

    def _potential(self, setup: _StepSetup, friction: FrictionTerm | None) -> IncrementalPotential:
        m = self.model
        wi, wp = setup.weights
        terms = [InertiaTerm(m.mass_matrix, setup.q_hat, wi), ElasticEnergyTerm(self.elastic, wp),
                 ExternalWorkTerm(setup.f_ext, wp),
                 self._barrier_term(wp)]
        if friction is not None:
            terms.append(friction)
        if setup.damping is not None:
            terms.append(DampingTerm(setup.damping))
        terms.extend(setup.extra_terms)
        return IncrementalPotential(terms, m.surface_map, self.patterns)

    def potential(self, state: State, dt: float, control=None, x_lag: np.ndarray | None = None
                  ) -> IncrementalPotential:
        """The incremental potential of the step of size dt [s] from state (its terms with the step's frozen
        data), friction lagged at x_lag (n, 3) [m] (default state.x). For tests, benchmarks and tools: E, its
        gradient and Hessian at any q via ``potential.energy(potential.evaluation(q, candidates))``."""
        control = self.model.control if control is None else control
        setup = self._setup(state, float(dt), control)
        fric = None
        if self.friction:
            fric = self._friction_term(state.x, state.x if x_lag is None else x_lag, float(dt), setup.weights[1])
        return self._potential(setup, fric)

    def consistent_acceleration(self, state: State, control=None) -> np.ndarray:
        """a = M^-1 f(x) (n, 3) [m/s^2] at the state's positions and time: gravity, Neumann loads, elastic and
        barrier forces (friction is zero at rest); 0 on prescribed and massless nodes. Assign it to ``state.a``
        before the first Newmark step for a consistent start (the default a = 0 is IPC's)."""
        m = self.model
        control = m.control if control is None else control
        f = m.mass_matrix.apply(np.broadcast_to(m.gravity, state.x.shape)) + control.external_forces(m.n_vertices,
                                                                                                      state.t)
        ge, _ = self.elastic.gradient_and_hessian(state.x)
        f -= ge.reshape(-1, 3)
        xs = self._surface(state.x)
        coll = self._static_collisions(xs)
        if len(coll):
            barrier = self._barrier_term(1.0)
            ev = IncrementalPotential([], m.surface_map).evaluation(state.x)
            ev.collisions = coll
            g = np.zeros(state.x.size)
            barrier.add_to(ev, g, _NoHessian())
            f -= g.reshape(-1, 3)
        free = ~control.prescribed_mask(m.fixed, state.t, state.t)
        return m.mass_matrix.solve_free(f, free)

    # ------------------------------------------------------------------ the step
    def step(self, state_in: State, state_out: State, control=None, dt: float | None = None) -> StepStats:
        """One step of size dt [s] from state_in into state_out under ``control`` (None: the model's own):
        positions, then velocities and accelerations by the integrator. OpenBLAS runs on one thread meanwhile on
        machines with fewer than 4 cores (``runtime.blas_threads.dense_threads``): its threaded dot products (over
        10,000 dofs) leave its workers spinning on the cores that the Numba and MKL threads need (IPC's
        12_matOnBoard, 19,200 dofs, 2 cores: 1.13 -> 0.62-0.67 s a step)."""
        with blas_threads(dense_threads()):
            return self._step(state_in, state_out, control, dt)

    def _step(self, state_in: State, state_out: State, control, dt) -> StepStats:
        if dt is None:
            if isinstance(control, (int, float, np.floating)):
                raise TypeError("step(state_in, state_out, control, dt): pass the time step as dt (control=None "
                                "uses the model's own Control)")
            raise TypeError("step() needs the time step dt [s]")
        m = self.model
        control = m.control if control is None else control
        stats = StepStats(kappa=self.kappa)
        t_start = time.perf_counter()
        h = float(dt)
        if not (h > 0.0 and math.isfinite(h)):
            raise ValueError(f"time step must be positive and finite, got {dt}")
        if self.check_on_first_step:
            from ..model.sanity import check_scene

            check_scene(m, state_in, self.contact.dhat)
            self.check_on_first_step = False
        self.forget_history()
        setup = self._setup(state_in, h, control)
        if self.quasi_static:
            from ..model.sanity import check_quasi_static_support

            check_quasi_static_support(m, state_in.x, setup.prescribed, self.contact.dhat)
        x, candidates = newton_start(self, state_in, setup, h, stats)  # x^t, or the warm start
        e = 0.0
        for lag in range(self.friction.max_solves if self.friction else 1):
            fric = None
            if self.friction:
                fric = self._friction_term(state_in.x, state_in.x if lag == 0 else x, h, setup.weights[1])
                stats.n_friction = len(fric.collisions)
            stats.lagging_iterations = lag + 1
            x, e, ev, started_converged = self._newton(self._potential(setup, fric), x, setup, h, stats, candidates)
            candidates = None
            if lag > 0 and started_converged and self.friction.lagging_iterations == 0:
                break  # the re-lagged problem was solved where it started: the lagging converged
        xs = ev.xs
        self._keep_static(ev)
        coll = self._static_collisions(xs)
        stats.n_contacts = len(coll)
        if len(coll):
            stats.min_distance = math.sqrt(minimum_distance_squared(coll, m.collision_mesh, xs))
        t0 = time.perf_counter()
        stats.body_forces = self.body_forces(xs, coll, fric)
        if len(coll):
            stats.barrier_energy = barrier_potential(coll, m.collision_mesh, xs, stiffness=self.kappa,
                                                     **self.contact.formulation.potential_args)
        stats.time_contact += time.perf_counter() - t0
        if not self.warned_negative_barrier:
            self.warned_negative_barrier = warn_negative_barrier(stats.barrier_energy, self.contact.formulation,
                                                                 f"t = {float(state_in.t) + h:.6g} s: ")
        stats.energy = e
        stats.n_inverted, stats.min_volume_ratio = self.elastic.inversion_stats(x)
        v, a = self.integrator.update(state_in.x, state_in.v, state_in.a, x, setup.q_hat, h, setup.prescribed)
        state_out.x, state_out.v, state_out.a, state_out.t = x, v, a, state_in.t + h
        stats.time_other = (time.perf_counter() - t_start - stats.time_contact - stats.time_linear_solve
                            - stats.time_ccd - stats.time_line_search)
        return stats

    def body_forces(self, xs: np.ndarray, coll, friction: FrictionTerm | None = None) -> np.ndarray:
        """(n_collision_bodies, 2, 3) [N]: per collision body b the contact force [b, 0] = -grad (kappa B) and
        the friction force [b, 1] = -grad D (``friction``'s lagged potential, zeros when None) at the surface
        positions xs (n_surface, 3) [m], summed over the surface vertices of b (``collision_mesh.body``).
        coll: the active set at xs. The gradients are not weighted by the integrator (h^2), so they are forces
        in N; a stencil's gradient sums to zero over its vertices, so two bodies get opposite forces (Newton's
        third law) and a half space's push lands in the row of the body touching it."""
        mesh = self.model.collision_mesh
        body = np.asarray(mesh.body, np.int64)
        n = int(body.max()) + 1 if len(body) else 0
        out = np.zeros((n, 2, 3))
        if len(coll):
            g = barrier_potential_gradient(coll, mesh, xs, stiffness=self.kappa,
                                           **self.contact.formulation.potential_args)
            out[:, 0] = -_sum_by_body(g, body, n)
        if friction is not None and len(friction.collisions):
            g = friction.potential.gradient(friction.collisions, xs - friction.xs_lag)
            out[:, 1] = -_sum_by_body(g, body, n)
        return out

    def _direction(self, potential, ev, x, setup, free, stats):
        """The Newton direction p (n, 3) [m] at x, whether the prescribed nodes have arrived and the slope
        grad E . p [J] (E's derivative along p at alpha = 0, for ``line_search.backtrack``)."""
        grad, hess, t_contact = potential.gradient_hessian(ev)
        stats.time_contact += t_contact
        t0 = time.perf_counter()
        p = (setup.target - x).ravel()
        p[free] = 0.0
        arrived = not np.any(p)
        rhs = -grad[free]
        if not arrived:
            rhs -= hess.prescribed_coupling(free, p)
        if free.any():
            self.linear.factor(hess.free_block(free), self._ordering_for(free))
            p[free] = self.linear.solve(rhs)
            if not np.all(np.isfinite(p)):
                raise ValueError("Newton system is singular (non-finite search direction)")
        stats.time_linear_solve += time.perf_counter() - t0
        return p.reshape(-1, 3), arrived, float(grad @ p)

    def _newton(self, potential: IncrementalPotential, x, setup: _StepSetup, h: float, stats: StepStats,
                candidates=None):
        """Projected Newton from x; prescribed nodes are driven to their targets along the trajectory. Returns
        (x, energy, evaluation, started_converged): the last flag says the first increment already met the
        tolerance (the friction lagging's convergence test). candidates: the warm start's (``newton_start``)."""
        mesh, dhat = self.model.collision_mesh, self.contact.dhat
        free = free_coordinates(setup.prescribed)
        ev = potential.evaluation(x, candidates)
        # the active set at the start: usually the one the previous step ended with (``_keep_static``), which the
        # friction lagging has just asked for, so no broad phase runs here (the same set a fresh one would give)
        if candidates is None:  # else built on the warm start's trajectory candidates, as a line-search trial's
            ev.collisions = self._static_collisions(ev.xs)
        ev.derivatives_follow = True  # the first direction is computed here: elasticity in one pass
        e = potential.energy(ev)
        stats.converged = False
        started_converged = False
        for it in range(self.max_newton_iterations):
            p, arrived, slope = self._direction(potential, ev, x, setup, free, stats)
            stats.newton_iterations += 1
            # IPC's criterion; but the first direction is always taken, else a body whose per-step velocity
            # change is below tol (g h < tol * bbox at small h) would never leave rest
            small = arrived and self._small(p, h, potential, ev)
            if it == 0:
                started_converged = small
            if small and it > 0:
                stats.converged = True
                break
            t0 = time.perf_counter()
            xs0, xs1 = ev.xs, self._surface(x + p)
            candidates, alpha = collision_free_bound(mesh, xs0, xs1, dhat, self.candidate_skin)
            alpha = min(alpha, self.elastic.max_step(x, p, setup.prescribed))
            stats.time_ccd += time.perf_counter() - t0
            t0 = time.perf_counter()
            if arrived:
                ev, e_new, alpha = self._line_search(potential, x, p, alpha, e, slope, candidates, stats)
                x = ev.x
            else:
                stats.prescribed_iterations += 1
                x = x + alpha * p
                if alpha >= 1.0:
                    x[setup.prescribed] = setup.target[setup.prescribed]  # exact arrival (no round-off drift)
                ev = potential.evaluation(x, candidates)
                e_new = potential.energy(ev)
            stats.time_line_search += time.perf_counter() - t0
            if validation.hook is not None:  # tests: check the accepted update (xs0 -> ev.xs) independently
                validation.hook(mesh, xs0, ev.xs)
            e = e_new
            stats.history.append((it, alpha, e))
            if small:
                stats.converged = True
                break
            if alpha <= 0.0:  # nothing moved (a tet held at the inversion bound's floor): every later iteration
                break         # would repeat this one; the step ends unconverged
        return x, e, ev, started_converged

    def _line_search(self, potential, x, p, alpha, e, slope, candidates, stats):
        """``line_search.backtrack`` from the CCD/inversion bound alpha on the energy e at x, slope grad E . p
        (bisections: this module's ``LINE_SEARCH_REFINEMENTS``). Returns (evaluation, energy, alpha)."""
        def evaluate(a):
            ev = potential.evaluation(x + a * p, candidates)
            return ev, potential.energy(ev)

        found = backtrack(evaluate, e, alpha, LINE_SEARCH_REFINEMENTS, slope=slope)
        stats.line_search_steps += found.trials
        return found.point, found.energy, found.alpha


def _sum_by_body(g: np.ndarray, body: np.ndarray, n: int) -> np.ndarray:
    """(n, 3): the vertex-major surface gradient g (3 n_surface,) summed per body id body (n_surface,)."""
    g = g.reshape(-1, 3)
    return np.stack([np.bincount(body, weights=g[:, k], minlength=n) for k in range(3)], axis=1)


class _NoHessian:
    """A Hessian sink that drops what is added (gradient-only evaluations)."""

    def add_surface(self, weight, h):
        pass

    def add_full(self, weight, h):
        pass
