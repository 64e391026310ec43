"""OpenBLAS on one thread inside a Newton step and a face frame on machines with fewer than 4 cores
(``runtime.blas_threads.dense_threads``), its previous count back afterwards. Its threaded dot products (over
10,000 entries) left its workers spinning on the cores the Numba and MKL threads use: IPC's 12_matOnBoard
(19,200 dofs) took 1.13 s a step on 2 cores against 0.62-0.67 s with OpenBLAS on one thread, the large face's
pucker_funnel frames 0-11 2,435 ms a frame against 1,597 ms (benchmarks/bench_mat_on_board.py,
benchmarks/bench_face_table.py)."""
import numpy as np
import pytest

import ipcsim.face.solver as face_solver
import ipcsim.solvers.newton as newton
from ipcsim.model import ModelBuilder, box_tet_mesh
from ipcsim.runtime import blas_threads as bt
from ipcsim.solvers.integrator_solvers import ContactParameters, make_solver
from ipcsim.solvers.validation import validate_updates


@pytest.fixture
def two_openblas_threads():
    """Every loaded OpenBLAS at 2 threads for the test (restored after); skips nothing: NumPy's wheels ship it."""
    controls = bt._controls()
    assert controls, "no OpenBLAS found in this process"
    previous = [get() for _, get in controls]
    for setter, _ in controls:
        setter(2)
    yield controls
    for (setter, _), p in zip(controls, previous):
        setter(p)


def _counts_seen(run):
    """The OpenBLAS thread counts seen at every accepted solver update while run() runs."""
    seen = []
    with validate_updates(lambda mesh, xs0, xs1: seen.append(tuple(get() for _, get in bt._controls()))):
        run()
    return seen


@pytest.mark.parametrize("cores, inside", [(2, 1), (8, 2)])
def test_a_newton_step_runs_openblas_on_one_thread_on_small_machines(two_openblas_threads, monkeypatch, cores,
                                                                     inside):
    monkeypatch.setattr(bt, "cpu_cores", lambda: cores)
    b = ModelBuilder()
    v, t = box_tet_mesh((0.05, 0.05, 0.05), (1, 1, 1))
    b.add_body(v, t, translation=(0.0, 0.001, 0.0), velocity=(0.0, -1.0, 0.0), youngs_modulus=1e6)
    b.add_ground(0.0)
    model, state = b.finalize()
    solver = make_solver(model, ContactParameters(dhat=1e-3))
    seen = _counts_seen(lambda: solver.step(state, state.copy(), None, 0.01))
    assert seen and all(c == (inside,) * len(c) for c in seen)
    assert all(get() == 2 for _, get in two_openblas_threads)
    assert newton.dense_threads is bt.dense_threads


def test_a_face_frame_runs_openblas_on_one_thread_on_small_machines(two_openblas_threads, monkeypatch):
    from ipcsim.face.data import load_face

    small_face = load_face("small")
    monkeypatch.setattr(bt, "cpu_cores", lambda: 2)
    solver = face_solver.FacePDSolver(small_face, "woodbury")
    seen = _counts_seen(lambda: [solver.frame(w) for w in small_face.sequence[:5]])
    assert seen and all(c == (1,) * len(c) for c in seen)
    assert all(get() == 2 for _, get in two_openblas_threads)
