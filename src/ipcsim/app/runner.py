"""The run loop behind ``ipcsim run`` / ``ipcsim demo``: steps a Simulation to its end time and fills the
output directory (layout in docs/output.md):

    OUT/scene.json                 the fully resolved scene (``Scene.data``)
    OUT/frames/surface_%05d.ply    collision surface of the whole scene, frame 0 = initial state
    OUT/frames/volume_%05d.vtu     tet meshes with J = det F and body id per tet (output.volume)
    OUT/stats.csv                  one row per step (``STATS_COLUMNS``), rewritten with every checkpoint
    OUT/forces.csv                 one row per step and collision body (``FORCES_COLUMNS``): the contact and
                                   friction forces [N] on it at the end of the step (``StepStats.body_forces``),
                                   rewritten with stats.csv
    OUT/checkpoint.npz             state to resume from (x, v, a if present, t, step, frame)

Every file is written atomically (``ipcsim.io.frames``). A run resumed from its checkpoint reproduces the
frames of an uninterrupted run bit for bit: the state (positions, velocities, acceleration, time) is the whole
memory of a step (``NewtonSolver.step`` starts by dropping the caches it keeps across steps), and
stats.csv and forces.csv are cut back to the checkpoint's step.
"""
from __future__ import annotations

import csv
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import frames as io_frames
from ..io.output import (CHECKPOINT, FRAME_GLOBS, RunError, default_output_dir, frame_path, list_frames,  # noqa: F401
                         prepare_output, scene_fingerprint)
from ..scene.simulation import Simulation

STATS_COLUMNS = ("step", "time", "newton_iterations", "line_search_steps", "n_contacts", "min_distance", "kappa",
                 "wall_seconds", "energy", "time_contact", "time_linear_solve", "time_ccd", "time_line_search",
                 "time_other", "converged", "n_friction", "lagging_iterations", "prescribed_iterations", "n_inverted",
                 "min_volume_ratio", "barrier_energy")
#: forces.csv: per step and collision body (``name`` from ``Simulation.body_names`` then ``obstacle_names``), the
#: contact force (barrier, half spaces included) and the friction force on it [N] at the end of the step
FORCES_COLUMNS = ("step", "time", "body", "name", "contact_x", "contact_y", "contact_z", "friction_x", "friction_y",
                  "friction_z")
class InversionWarning(UserWarning):
    """A tet of a simulated body is degenerate or inverted (det F <= 0) at the end of a step (once per run)."""


@dataclass
class RunOptions:
    """How to run: out_dir (created by ``prepare_output``); every, volume, checkpoint_every as the scene's
    output dict; resume: continue from OUT/checkpoint.npz; progress: tqdm bar on stderr;
    fingerprint: identifies the scene up to its end time and output options (checked on resume);
    scene_checked: the caller has run ``sanity.check_scene`` on sim.state, so the solver's own check before its
    first step (``NewtonSolver.check_on_first_step``) is not repeated."""

    out_dir: Path
    every: int = 1
    volume: bool = False
    checkpoint_every: int = 10
    resume: bool = False
    progress: bool = True
    fingerprint: str = ""
    scene_checked: bool = False

    @classmethod
    def from_output(cls, out_dir, output: dict, **kw) -> "RunOptions":
        """Options from a scene's "output" dict (missing keys: defaults)."""
        return cls(Path(out_dir), every=int(output.get("every", 1)), volume=bool(output.get("volume", False)),
                   checkpoint_every=int(output.get("checkpoint_every", 10)), **kw)


@dataclass
class RunResult:
    """Summary of a run: out_dir; steps: total steps of the scene; first_step: 0, or the checkpoint's step on
    resume; frames: frame files in OUT/frames; wall_seconds: this invocation [s]; final_time [s];
    unconverged_steps: steps of this invocation whose Newton solve hit max_newton_iterations."""

    out_dir: Path
    steps: int
    first_step: int
    frames: int
    wall_seconds: float
    final_time: float
    unconverged_steps: tuple = ()


def step_count(end_time: float, dt: float) -> int:
    """Number of steps of size dt [s] that reach end_time [s] (the last step may overshoot by < dt; a ratio
    within 1e-9 of an integer counts as that integer)."""
    check_positive("end time", end_time)
    check_positive("time step", dt)
    return max(1, math.ceil(end_time / dt - 1e-9))


def check_positive(what: str, value) -> float:
    """value as a float, or RunError unless it is a finite number > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise RunError(f"{what} must be a positive number, got {value!r}") from None
    if not (v > 0.0 and math.isfinite(v)):
        raise RunError(f"{what} must be a positive finite number, got {value!r}")
    return v


class _Output:
    """Writes the frames, stats.csv and checkpoints of one run."""

    def __init__(self, sim: Simulation, opts: RunOptions):
        self.sim, self.opts = sim, opts
        model = sim.model
        mesh = model.collision_mesh
        self.faces = np.asarray(mesh.faces, np.int64)
        self.vertex_body = np.asarray(mesh.body, np.int64)
        self.n_body_vertices = int(np.count_nonzero(~np.asarray(model.is_obstacle, bool)))
        self.tet_body = _tet_bodies(model)
        self.body_names = collision_body_names(sim)
        self.rows: list[list] = []
        self.force_rows: list[list] = []
        self.warned_inversion = False

    def frame(self, index: int, state) -> None:
        """Write frame ``index`` of ``state``."""
        out = self.opts.out_dir
        io_frames.write_ply(frame_path(out, "surface", index), self.sim.model.surface_positions(state.x),
                            self.faces, self.vertex_body)
        if self.opts.volume and len(self.sim.model.tets):
            m = self.sim.model
            x = state.x[:self.n_body_vertices]
            io_frames.write_volume_vtu(frame_path(out, "volume", index), x, m.tets,
                                       {"J": io_frames.tet_jacobians(state.x, m.tets, m.dm_inv),
                                        "body": self.tet_body})

    def add_stats(self, step: int, t: float, st, wall: float) -> None:
        """Append the row of one step (StepStats ``st``); the file is rewritten with each checkpoint and when
        the run ends or stops."""
        row = {"step": step, "time": repr(float(t)), "wall_seconds": f"{wall:.6f}"}
        for c in STATS_COLUMNS:
            if c not in row:
                v = getattr(st, c, "")
                row[c] = int(v) if isinstance(v, (bool, np.bool_)) else (repr(float(v)) if isinstance(
                    v, (float, np.floating)) else v)
        self.rows.append([row[c] for c in STATS_COLUMNS])
        n = len(self.body_names)
        forces = getattr(st, "body_forces", None)
        if forces is None or np.shape(forces) != (n, 2, 3):  # a solver without the readout: not measured
            forces = np.full((n, 2, 3), np.nan)
        for b, name in enumerate(self.body_names):
            self.force_rows.append([step, row["time"], b, name] + [repr(float(f)) for f in forces[b].ravel()])

    def warn_inversion(self, step: int, state, st, bar=None) -> None:
        """Warn (``InversionWarning``, once per run) at the first step whose stats count an inverted tet, naming
        the body, the tet (its index in the body and in the model) and its det F; bar: the progress bar, cleared
        for the warning's line."""
        if self.warned_inversion or not getattr(st, "n_inverted", 0):
            return
        self.warned_inversion = True
        m = self.sim.model
        j = io_frames.tet_jacobians(state.x, m.tets, m.dm_inv)
        e = int(np.argmin(j))
        b = int(self.tet_body[e])
        local = e - int(np.flatnonzero(self.tet_body == b)[0])
        name = self.body_names[b] if 0 <= b < len(self.body_names) else f"body{b}"
        if bar is not None:
            bar.clear()
        warnings.warn(f"step {step} (t = {float(state.t):.6g} s): {st.n_inverted} tet(s) inverted, the deepest "
                      f"tet {local} of body {b} ({name!r}; model tet {e}) with det F = {j[e]:.3g}; see the "
                      "n_inverted and min_volume_ratio columns of stats.csv", InversionWarning, stacklevel=2)
        if bar is not None:
            bar.refresh()

    def load_stats(self, up_to_step: int) -> None:
        """Read the rows of stats.csv and forces.csv of an earlier run with step <= up_to_step (resume);
        RunError if some are missing."""
        self.rows = self._read_rows("stats.csv", STATS_COLUMNS, up_to_step)
        self.force_rows = self._read_rows("forces.csv", FORCES_COLUMNS, up_to_step)
        per_step = {"stats.csv": (self.rows, 1), "forces.csv": (self.force_rows, len(self.body_names))}
        for name, (rows, n) in per_step.items():
            if len(rows) != up_to_step * n:
                raise RunError(f"cannot resume: {name} in {str(self.opts.out_dir)!r} holds {len(rows) // max(n, 1)} "
                               f"of the {up_to_step} steps before the checkpoint")

    def _read_rows(self, name: str, columns: tuple, up_to_step: int) -> list:
        """The rows of OUT/name with step <= up_to_step ([] when the file is absent or has another header)."""
        path = self.opts.out_dir / name
        if not path.is_file():
            return []
        with open(path, newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None or tuple(header) != columns:
                return []
            return [r for r in reader if r and int(r[0]) <= up_to_step]

    def write_stats(self) -> None:
        """Rewrite OUT/stats.csv and OUT/forces.csv from the rows held."""
        io_frames.write_csv(self.opts.out_dir / "stats.csv", STATS_COLUMNS, self.rows)
        io_frames.write_csv(self.opts.out_dir / "forces.csv", FORCES_COLUMNS, self.force_rows)

    def checkpoint(self, state, step: int, frames: int) -> None:
        """Write OUT/checkpoint.npz: the state after ``step`` steps, ``frames`` frames written so far."""
        arrays = dict(x=state.x, v=state.v, t=np.float64(state.t), step=np.int64(step), frame=np.int64(frames),
                      dt=np.float64(self.sim.dt), every=np.int64(self.opts.every),
                      fingerprint=np.str_(self.opts.fingerprint))
        a = getattr(state, "a", None)
        if a is not None:
            arrays["a"] = a
        self.write_stats()
        io_frames.save_npz(self.opts.out_dir / CHECKPOINT, **arrays)


def collision_body_names(sim: Simulation) -> list[str]:
    """The name of every collision body (``collision_mesh.body`` ids: the simulated bodies, then the obstacles):
    ``sim.body_names`` then ``sim.obstacle_names``, "body<i>" where a name is missing."""
    body = np.asarray(sim.model.collision_mesh.body, np.int64)
    n = int(body.max()) + 1 if len(body) else 0
    names = [str(x) for x in list(sim.body_names) + list(sim.obstacle_names)]
    return [names[i] if i < len(names) else f"body{i}" for i in range(n)]


def _tet_bodies(model) -> np.ndarray:
    """(m,) int64 body id of each tet."""
    if len(model.tets) == 0:
        return np.zeros(0, np.int64)
    from ..model.sanity import vertex_body

    return vertex_body(model)[model.tets[:, 0]]


def load_checkpoint(sim: Simulation, opts: RunOptions):
    """(state, step, frames) from OUT/checkpoint.npz, checked against the simulation; RunError if it does not
    belong to this scene (other fingerprint, time step, frame spacing or vertex count)."""
    path = opts.out_dir / CHECKPOINT
    if not path.is_file():
        raise RunError(f"cannot resume: no {CHECKPOINT} in {str(opts.out_dir)!r} (run without --resume)")
    try:
        with np.load(path, allow_pickle=False) as z:
            ck = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot resume: {path} is unreadable ({exc})") from None
    if str(ck.get("fingerprint", "")) != opts.fingerprint:
        raise RunError(f"cannot resume: {path} belongs to a different scene (only the end time and output "
                       f"options may change on --resume)")
    if float(ck["dt"]) != float(sim.dt) or int(ck["every"]) != opts.every:
        raise RunError(f"cannot resume: {path} was written with dt = {float(ck['dt'])} s and output.every = "
                       f"{int(ck['every'])}; this run has dt = {sim.dt} s, every = {opts.every}")
    if ck["x"].shape != sim.state.x.shape:
        raise RunError(f"cannot resume: {path} holds {len(ck['x'])} vertices, the scene {len(sim.state.x)}")
    state = sim.state.copy()
    state.x, state.v, state.t = ck["x"].copy(), ck["v"].copy(), float(ck["t"])
    if "a" in ck and hasattr(state, "a"):
        state.a = ck["a"].copy()
    return state, int(ck["step"]), int(ck["frame"])


def _step(sim, state, new, bar):
    """One solver step from state into new; the warnings it raises (a negative barrier, a bad start) are shown
    after the progress bar is cleared, so they get a line of their own, then the bar is redrawn."""
    with warnings.catch_warnings(record=True) as caught:
        st = sim.solver.step(state, new, None, sim.dt)
    if caught and bar is not None:
        bar.clear()
    for w in caught:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if caught and bar is not None:
        bar.refresh()
    return st


def _progress_bar(opts: RunOptions, n_steps: int, first: int, name: str):
    if not opts.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=n_steps, initial=first, desc=name, unit="step", file=sys.stderr, dynamic_ncols=True,
                leave=True, bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                       "[{elapsed}<{remaining}{postfix}]")


def run(sim: Simulation, opts: RunOptions, scene_data: dict | None = None) -> RunResult:
    """Step ``sim`` to its end time, writing frames every ``opts.every`` steps, a stats.csv row (and a forces.csv
    row per collision body) per step and a checkpoint (with stats.csv and forces.csv) every
    ``opts.checkpoint_every`` steps and at the end. With ``opts.resume`` continue from OUT/checkpoint.npz
    (frames after the checkpoint and stats/forces rows after its step are redone).
    scene_data: the resolved scene written to OUT/scene.json (None: no scene.json)."""
    t_start = time.perf_counter()
    if opts.every < 1 or opts.checkpoint_every < 1:
        raise RunError(f"output.every and output.checkpoint_every must be >= 1, got {opts.every}, "
                       f"{opts.checkpoint_every}")
    n_steps = step_count(sim.end_time, sim.dt)
    if opts.resume:
        state, first, frames = load_checkpoint(sim, opts)
        if first > n_steps:
            raise RunError(f"cannot resume: the checkpoint is at step {first}, past the end ({n_steps} steps of "
                           f"{sim.dt} s)")
    out = _Output(sim, opts)
    if opts.resume:
        out.load_stats(first)
    prepare_output(opts.out_dir, scene_data, opts.resume)
    if opts.resume:
        out.write_stats()
        for pattern in FRAME_GLOBS:  # frames written after the checkpoint by an interrupted run
            for f in (opts.out_dir / "frames").glob(pattern):
                if int(f.stem.split("_")[-1]) >= frames:
                    f.unlink()
    else:
        state, first, frames = sim.state.copy(), 0, 0
        out.frame(0, state)
        frames = 1
        out.checkpoint(state, 0, frames)
    if opts.scene_checked and hasattr(sim.solver, "check_on_first_step"):
        sim.solver.check_on_first_step = False
    bar = _progress_bar(opts, n_steps, first, sim.name)
    unconverged = []
    try:
        for k in range(first + 1, n_steps + 1):
            t0 = time.perf_counter()
            new = state.copy()
            st = _step(sim, state, new, bar)
            state = new
            wall = time.perf_counter() - t0
            if k % opts.every == 0:
                out.frame(k // opts.every, state)
                frames = k // opts.every + 1
            out.add_stats(k, state.t, st, wall)
            out.warn_inversion(k, state, st, bar)
            if not st.converged:
                unconverged.append(k)
            if k % opts.checkpoint_every == 0 or k == n_steps:
                out.checkpoint(state, k, frames)
            if bar is not None:
                bar.set_postfix_str(f"t={state.t:.4g}s newton={st.newton_iterations} contacts={st.n_contacts}",
                                    refresh=False)
                bar.update(1)
    finally:
        out.write_stats()
        if bar is not None:
            bar.close()
    return RunResult(opts.out_dir, n_steps, first, frames, time.perf_counter() - t_start, float(state.t),
                     tuple(unconverged))
