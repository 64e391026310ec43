"""A simulation's bits must not depend on what ran earlier in the process.

MKL's threading layer is process-wide and chosen at MKL's first call; the layers give different round-off. Left
to mkl_rt it was Intel OpenMP when pardiso ran before any Numba parallel kernel (a ``FacePDSolver`` factorises
first) and GNU OpenMP otherwise, and the 20_pencilStickSlip IPC sample's first step then ended unconverged after
1000 Newton iterations instead of converging in 23. ``linalg.pardiso`` pins the layer before MKL's first call.
Each check runs in a fresh interpreter: the layer cannot change once chosen.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ipcsim.linalg.pardiso import pardiso_available

pytestmark = pytest.mark.skipif(not pardiso_available(), reason="needs pypardiso (MKL)")

SAMPLES = Path(__file__).resolve().parents[1] / "scene" / "ipc_samples"

_PARDISO_FIRST = """
import numpy as np, scipy.sparse as sp
from ipcsim.linalg.factorization import Factorization
n = 400
a = sp.diags([-np.ones(n - 1), 4.0 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
Factorization("pardiso").factor(a).solve(np.ones(n))  # MKL's first call, before any Numba parallel kernel
"""


def _run(code: str, env_drop=("MKL_THREADING_LAYER",)) -> str:
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_pardiso_first_still_gets_the_pinned_gnu_threading_layer():
    out = _run(_PARDISO_FIRST + """
libs = {line.split()[-1].rsplit("/", 1)[-1] for line in open("/proc/self/maps") if "libmkl" in line}
print(sorted(libs))
""")
    assert "libmkl_gnu_thread" in out, out
    assert "libmkl_intel_thread" not in out, out


def test_pencil_sample_converges_after_an_earlier_pardiso_call(tmp_path, shared_data):
    (tmp_path / "input").symlink_to(shared_data / "ipc" / "input")
    script = tmp_path / "20_pencilStickSlip.txt"
    script.write_text((SAMPLES / script.name).read_text())
    out = _run(_PARDISO_FIRST + f"""
import warnings
from ipcsim.scene import load_scene
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    sim = load_scene({str(script)!r}).build()
    sim.solver.max_newton_iterations = 200
    sim.solver.linear_backend = "pardiso"  # this check is about MKL (its rows are below 'auto''s supernodal bound)
    sim.solver.linear = Factorization("pardiso")
    new = sim.state.copy()
    s = sim.solver.step(sim.state, new, None, sim.dt)
print("RESULT", s.newton_iterations, s.converged)
""")
    line = [l for l in out.splitlines() if l.startswith("RESULT")][-1].split()
    assert line[2] == "True", out
    assert int(line[1]) == 23, out  # the bits of a process whose Numba kernels ran first
