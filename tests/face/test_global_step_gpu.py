"""The global step's dense algebra on a device (``face.dense_device``, issue #14 item 8).

Always run: the GPU code path (lower Cholesky + triangular solves, written against an array module) on numpy
gives the CPU solvers' steps; a missing CuPy or GPU is a clear DeviceError. Run where CuPy sees a CUDA GPU (skipped
elsewhere): 'schur' and 'woodbury' on the GPU give the CPU steps on random systems and on frames of the small face,
with S / S^-1 resident on the GPU."""
import contextlib
import sys
import types

import numpy as np
import pytest
import scipy.linalg as sla
from test_global_step import _random_contacts, _random_k, _reference

from ipcsim.face.dense_device import DeviceError, dense_backend, numpy_gpu_twin
from ipcsim.face.global_step import make_global_solver, touched_vertices

DENSE = ["schur", "woodbury"]


def _rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _agreement(device, seeds=(0, 1, 2), scales=(1e-2, 1.0, 1e3, 1e6)) -> dict:
    """{(name, seed, scale, count): relative difference of the device's step from the CPU solver's, and from the
    dense reference}, over random systems (test_global_step's: 240 vertices, n2 = 50, 1-12 rank-5 stencils)."""
    out = {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        n = 240
        k = _random_k(rng, n)
        x2 = rng.choice(n, 50, replace=False)
        cpu = {name: make_global_solver(name).prepare(k, x2) for name in DENSE}
        dev = {name: make_global_solver(name, device=device).prepare(k, x2) for name in DENSE}
        for scale in scales:
            for count in (1, 3, 12):
                b = _random_contacts(rng, n, x2, count, scale)
                r = rng.standard_normal((n, 3))
                ref = _reference(k, b, r)
                for name in DENSE:
                    p = dev[name].solve(b, r)
                    assert dev[name].last_nc == len(touched_vertices(b)) and dev[name].fallbacks == 0
                    out[name, seed, scale, count] = (_rel(p, cpu[name].solve(b, r)), _rel(p, ref))
    return out


def _worst(errors: dict, scales) -> tuple:
    """(largest difference from the CPU solver, largest from the dense reference) over the given scales."""
    rows = [v for key, v in errors.items() if key[2] in scales]
    return max(e for e, _ in rows), max(e for _, e in rows)


def test_gpu_code_path_on_numpy_gives_the_cpu_steps():
    errors = _agreement(numpy_gpu_twin())
    # measured, against the CPU solver / the dense reference: <= 1.1e-12 / 7.6e-13 up to scale 1e3; at scale 1e6
    # (barrier 1e6 x the stiffness of K: ill-conditioned) 8.7e-10 / 7.7e-10, where the CPU solvers themselves are
    # up to 6e-10 from the reference (test_global_step): lower vs upper Cholesky, numpy's vs SciPy's LU, round-off
    to_cpu, to_ref = _worst(errors, (1e-2, 1.0, 1e3))
    assert to_cpu < 1e-10 and to_ref < 1e-10, (to_cpu, to_ref)
    to_cpu, to_ref = _worst(errors, (1e6,))
    assert to_cpu < 1e-8 and to_ref < 1e-8, (to_cpu, to_ref)


@pytest.mark.parametrize("name", DENSE)
def test_gpu_code_path_on_numpy_without_contact_and_with_a_fallback(rng, name):
    n = 150
    k = _random_k(rng, n)
    s = make_global_solver(name, device=numpy_gpu_twin()).prepare(k, np.arange(30))
    assert s.device == "gpu-twin" and isinstance(s.dense.s if name == "schur" else s.dense.sinv, np.ndarray)
    r = rng.standard_normal((n, 3))
    assert _rel(s.solve(None, r), _reference(k, None, r)) < 1e-12
    b = _random_contacts(rng, n, np.arange(25, 40), 3, 1e3)  # reaches x1: solved directly, on the CPU
    assert _rel(s.solve(b, r), _reference(k, b, r)) < 1e-10 and s.fallbacks == 1


def test_face_solver_on_the_gpu_code_path_gives_the_cpu_trajectory():
    from ipcsim.face.flaps import two_flaps
    from ipcsim.face.solver import FacePDSolver

    model = two_flaps(resolution=(6, 3, 2), frames=4)
    ref = FacePDSolver(model, "woodbury", tol=1e-6)
    xs_ref, st_ref = ref.run()
    for name in DENSE:
        solver = FacePDSolver(model, name, tol=1e-6, device=numpy_gpu_twin())
        xs, st = solver.run()
        assert [s.iterations for s in st] == [s.iterations for s in st_ref]
        assert max(np.abs(a - b).max() for a, b in zip(xs, xs_ref)) < 1e-12  # measured 1e-16 m (bbox 4 m)


# ----------------------------------------------------------------------------------------------- errors
def test_missing_cupy_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy now raises ImportError
    for make in (lambda: dense_backend("gpu"), lambda: make_global_solver("woodbury", device="gpu")):
        with pytest.raises(DeviceError, match=r"device 'gpu' needs CuPy, which cannot be imported .*"
                                              r"pip install 'ipcsim\[gpu\]'"):
            make()


def test_cupy_without_a_gpu_is_a_clear_error(monkeypatch):
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 0)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    with pytest.raises(DeviceError, match="CuPy finds no CUDA GPU"):
        dense_backend("gpu")


def _numpy_cupy(monkeypatch, calls: list):
    """A stand-in for CuPy built on numpy (the names ``dense_device`` uses, one GPU), put in sys.modules; calls
    records the linalg configurations entered through cupyx.errstate."""
    cupy = types.ModuleType("cupy")
    cupy.__dict__.update({k: v for k, v in np.__dict__.items() if not k.startswith("__")})
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: 1))
    cupy.linalg = types.SimpleNamespace(cholesky=np.linalg.cholesky, solve=np.linalg.solve)
    cupy.asnumpy = np.asarray

    @contextlib.contextmanager
    def errstate(**kw):
        calls.append(kw)
        yield

    cupyx = types.ModuleType("cupyx")
    cupyx.errstate = errstate
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.linalg = types.ModuleType("cupyx.scipy.linalg")
    cupyx.scipy.linalg.solve_triangular = sla.solve_triangular
    for name, module in (("cupy", cupy), ("cupyx", cupyx), ("cupyx.scipy", cupyx.scipy),
                         ("cupyx.scipy.linalg", cupyx.scipy.linalg)):
        monkeypatch.setitem(sys.modules, name, module)
    return cupy


@pytest.mark.parametrize("name", DENSE)
def test_gpu_backend_wiring_on_a_numpy_stand_in_for_cupy(monkeypatch, rng, name):
    """device 'gpu' imports cupy / cupyx.scipy.linalg lazily, keeps the dense matrix as the array module's array,
    raises on a failed Cholesky (cupyx.errstate) and gives the CPU steps."""
    calls = []
    fake = _numpy_cupy(monkeypatch, calls)
    n = 120
    k = _random_k(rng, n)
    s = make_global_solver(name, device="gpu").prepare(k, np.arange(40))
    assert s.device == "gpu" and s.dense.backend.xp is fake
    b = _random_contacts(rng, n, np.arange(40), 3, 1e3)
    r = rng.standard_normal((n, 3))
    assert _rel(s.solve(b, r), make_global_solver(name).prepare(k, np.arange(40)).solve(b, r)) < 1e-10
    assert calls and all(c == {"linalg": "raise"} for c in calls)


def test_bad_devices():
    with pytest.raises(ValueError, match="device must be one of 'cpu', 'gpu', got 'tpu'"):
        make_global_solver("schur", device="tpu")
    for name in ("direct", "pcg"):
        with pytest.raises(ValueError, match=f"{name}: device 'gpu': only the 'schur' and 'woodbury'"):
            make_global_solver(name, device="gpu")
    assert make_global_solver("woodbury").device == "cpu"


# ----------------------------------------------------------------------------------------------- on a GPU
@pytest.fixture(scope="module")
def cupy():
    """CuPy, where it imports and sees a CUDA GPU; else the test skips."""
    try:
        import cupy
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no CuPy, no driver
        pytest.skip(f"no CuPy with a CUDA GPU here ({type(exc).__name__}: {exc})")
    if count < 1:
        pytest.skip("CuPy finds no CUDA GPU")
    return cupy


def test_gpu_steps_agree_with_the_cpu(cupy):
    errors = _agreement("gpu")
    for scales in ((1e-2, 1.0, 1e3), (1e6,)):
        to_cpu, to_ref = _worst(errors, scales)
        print(f"GPU steps at barrier scales {scales}: worst relative difference from the CPU solvers {to_cpu:.2e}, "
              f"from the dense reference {to_ref:.2e}")
        assert to_cpu < 1e-8 and to_ref < 1e-8, (scales, to_cpu, to_ref)


@pytest.mark.parametrize("name", DENSE)
def test_gpu_keeps_the_dense_matrix_on_the_device(cupy, rng, name):
    """Fails if device 'gpu' silently ran on numpy."""
    s = make_global_solver(name, device="gpu").prepare(_random_k(rng, 100), np.arange(40))
    resident = s.dense.s if name == "schur" else s.dense.sinv
    assert s.device == "gpu" and isinstance(resident, cupy.ndarray) and resident.shape == (40, 40)
    assert s.dense.backend.xp is cupy


def test_gpu_face_frames_agree_with_the_cpu_and_are_intersection_free(cupy):
    """Sequence frames 0, 3, 6 of the small face (the lips press from frame 3), as ``ipcsim demo face``."""
    from ipcsim.face.data import load_face
    from ipcsim.face.solver import FacePDSolver

    model = load_face("small")
    frames = model.sequence[[0, 3, 6]]
    cpu = FacePDSolver(model, "woodbury")
    xs_cpu, st_cpu = cpu.run(frames)
    scale = max(np.linalg.norm(x - model.rest) for x in xs_cpu)  # [m]: the largest displacement (frame 0: none)
    for name in DENSE:
        gpu = FacePDSolver(model, name, device="gpu")
        assert isinstance(gpu.solver.dense.s if name == "schur" else gpu.solver.dense.sinv, cupy.ndarray)
        xs, st = gpu.run(frames)
        for x, x_cpu, s, s_cpu in zip(xs, xs_cpu, st, st_cpu, strict=True):
            err = np.linalg.norm(x - x_cpu) / scale
            print(f"{name} on the GPU: frame error {err:.2e} (relative to the largest displacement), {s.iterations} "
                  f"iterations, {1e3 * s.time_global:.0f} ms G-step (CPU woodbury {1e3 * s_cpu.time_global:.0f})")
            assert err < 1e-8 and s.converged and s.fallbacks == 0
            gpu.check_intersection_free(x)  # ValueError if the proxy intersects itself
        assert st[1].n_contacts > 0
