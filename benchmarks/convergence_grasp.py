"""Time-step convergence study of the teddy grasp (issue #12 item 7; Embedded IPC 004 §IV-A2, Fig. 6-8).

For each mode of ``ipcsim.demos.teddy_grasp`` (full, medium, low): a reference run with a small step h_ref (default
5e-4 s) and runs with the coarser steps h (default 0.005, 0.01, 0.02 s), all from the same initial state over the
same end time (default 4 s: squeeze, lift, hold). Every run records the positions of the teddy's fine collision
surface (collision body 0, ``model.collision_mesh.body == 0``; the bubbles' vertices are NOT included, they are
mostly position-controlled, as in the paper's Fig. 6) at the common sample times t_k = k * 0.02 s, k = 1..K
(t = 0 is excluded: all runs start there). Samples are taken by integer step index, every round(0.02 / h)
steps, and every h must divide 0.02 s and the end time (checked), so no sample time is off by rounding.

Error (per run, against its own mode's reference; x: teddy surface positions (N_v, 3) [m]):

    E(h)       = 1/K sum_k sqrt( 1/N_v sum_v |x_h(t_k)_v - x_ref(t_k)_v|^2 )     [m]  time-averaged RMS (primary)
    E_paper(h) = sqrt( 1/K sum_k 1/N_v sum_v |x_h(t_k)_v - x_ref(t_k)_v|^2 )     [m]  004's formula, same samples
    E_004(h)   = sqrt( 1/(T/h) sum_i 1/N_v sum_v |x_h(i h)_v - x_ref(i h)_v|^2 )  [m]  004's formula over every step
                                                                                      i = 1..T/h of the run itself

For E_004 every run also records the teddy after each of its steps, or, when its h is below the largest step that
every coarse h is a multiple of (the reference), at the multiples of that step (``common_step``, ``step_grid``);
runs saved without these samples give E_004 = None.

The observed order between consecutive h is log(E_i / E_j) / log(h_i / h_j); the "convergence order" printed
last is the least-squares slope of log E against log h over all coarse h. Wall-clock times are the whole run
from t = 0, on whatever machine runs it (say its load); before a mode's first run, an untimed warm-up run
(h = 0.02 s up to 2 s, --no-warmup skips it) compiles or loads every Numba kernel, so no run's time includes
compilation.

Output (--out DIR, default convergence_out/): per run ``<mode>_h<h>[_tol<tol>][_lag<N>].npz`` (samples, sample
times, wall, Newton iterations, unconverged steps, smallest contact distance) - existing runs with the same end
time, tolerance and friction lagging are reused unless --rerun; use one --out per end time, tolerance and lagging,
since results.json holds one entry per mode; ``results.json`` (every number of the tables, per mode with its
reference h; runs of other modes already there are kept) and the figures ``convergence_error.png`` (E(h) log-log
with a first-order reference line), ``convergence_wall.png`` (wall-clock time against h, the reference included),
``convergence_error_wall.png`` (E against wall time, Fig. 8) and ``convergence_error_time.png`` (the RMS error at
each sample time), or under --figures DIR. --plot-only redraws the figures and tables from results.json without
simulating.

Usage: python benchmarks/convergence_grasp.py [--modes low,medium,full] [--ref-dt 5e-4]
       [--dts 0.005,0.01,0.02] [--end-time 4] [--tol 1e-2] [--friction-lagging 1] [--out DIR] [--figures DIR]
       [--rerun] [--plot-only]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

SAMPLE_INTERVAL = 0.02  # [s], the common sample spacing: every h of the study divides it
DEMO_TOL = 1e-2  # the demo's Newton tolerance (GraspParameters.tol): ||p||_inf / h < tol * bbox diagonal
DEMO_LAGGING = 1  # the demo's lagged friction solves per step (GraspParameters.friction_lagging; 0: until converged)


def steps_per(interval: float, dt: float, what: str = "the sample interval") -> int:
    """The integer number of steps of size dt [s] in interval [s]; ValueError unless dt divides it (to 1e-9
    relative)."""
    k = int(round(interval / dt))
    if k < 1 or abs(k * dt - interval) > 1e-9 * interval:
        raise ValueError(f"dt = {dt:g} s does not divide {what} ({interval:g} s)")
    return k


def sample_steps(end_time: float, dt: float, interval: float = SAMPLE_INTERVAL) -> np.ndarray:
    """(K,) int: the step indices (1-based: after that many steps) of the sample times interval, 2 interval, ...,
    end_time for step dt; ValueError unless dt divides interval and interval divides end_time."""
    every = steps_per(interval, dt)
    n_samples = steps_per(end_time, interval, "the end time")
    return every * np.arange(1, n_samples + 1)


def step_grid(end_time: float, dt: float, fine: float) -> np.ndarray:
    """(T / max(dt, fine),) int: the step indices (1-based) of E_004's samples for a run with step dt: every step
    when dt >= fine (``common_step`` of the study's coarse h), else the steps landing on fine, 2 fine, ..., end_time
    (ValueError unless dt divides fine and fine divides end_time)."""
    n_steps = steps_per(end_time, dt, "the end time")
    if dt >= fine:
        return np.arange(1, n_steps + 1)
    every = steps_per(fine, dt, "the common step of the coarse h")
    steps_per(end_time, fine, "the end time")
    return np.arange(every, n_steps + 1, every)


def common_step(dts, ref_dt: float) -> float:
    """The largest step [s] that every h in dts is a multiple of, itself a multiple of ref_dt (E_004's sample
    grid: each run's every step lands on a sample of the reference); ValueError unless ref_dt divides every h."""
    k = [steps_per(h, ref_dt, f"h = {h:g}") for h in dts]
    return math.gcd(*k) * ref_dt


def record(step, positions, n_steps: int, at: np.ndarray) -> np.ndarray:
    """Call step() n_steps times and positions() after the steps listed in at (ascending, 1-based); returns the
    stacked positions (len(at), ...)."""
    at = np.asarray(at)
    if len(at) and (at[-1] > n_steps or np.any(np.diff(at) <= 0) or at[0] < 1):
        raise ValueError("sample steps must be ascending within 1..n_steps")
    out, j = [], 0
    for i in range(1, n_steps + 1):
        step()
        if j < len(at) and at[j] == i:
            out.append(np.array(positions(), dtype=float))
            j += 1
    return np.stack(out) if out else np.zeros((0,))


def rms_per_sample(x_h: np.ndarray, x_ref: np.ndarray) -> np.ndarray:
    """(K,) [m]: for samples (K, N_v, 3), the RMS over vertices of |x_h - x_ref| at each sample time."""
    if x_h.shape != x_ref.shape:
        raise ValueError(f"sample shapes differ: {x_h.shape} vs {x_ref.shape}")
    return np.sqrt(np.mean(np.sum((x_h - x_ref) ** 2, axis=-1), axis=-1))


def time_averaged_error(x_h: np.ndarray, x_ref: np.ndarray) -> float:
    """E(h) [m]: the mean over sample times of the RMS over vertices of |x_h - x_ref| (module docstring)."""
    return float(np.mean(rms_per_sample(x_h, x_ref)))


def paper_error(x_h: np.ndarray, x_ref: np.ndarray) -> float:
    """E_paper(h) [m]: 004's sqrt of the time mean of the vertex mean of |x_h - x_ref|^2 (module docstring)."""
    return float(np.sqrt(np.mean(rms_per_sample(x_h, x_ref) ** 2)))


def step_error(rec: dict, ref: dict) -> float | None:
    """E_004(h) [m] of the run record rec against the reference record ref (module docstring): 004's formula over
    every step of rec, the reference read at the same times; None when either lacks its step samples. ValueError
    when the reference has no sample at one of rec's step times."""
    if "step_samples" not in rec or "step_samples" not in ref:
        return None
    times, ref_times = np.asarray(rec["step_times"]), np.asarray(ref["step_times"])
    idx = np.searchsorted(ref_times, times - 1e-9)
    if np.any(idx >= len(ref_times)) or not np.allclose(ref_times[np.minimum(idx, len(ref_times) - 1)], times,
                                                         rtol=0, atol=1e-9):
        raise ValueError(f"the reference has no sample at some step times of h={rec['dt']:g}")
    return paper_error(np.asarray(rec["step_samples"]), np.asarray(ref["step_samples"])[idx])


def observed_orders(hs, errors) -> list:
    """Orders log(E_i / E_{i+1}) / log(h_i / h_{i+1}) between consecutive (h, E) pairs sorted by h (None
    where an error is not positive)."""
    pairs = sorted(zip(hs, errors))
    out = []
    for (h0, e0), (h1, e1) in zip(pairs, pairs[1:]):
        out.append(math.log(e1 / e0) / math.log(h1 / h0) if e0 > 0 and e1 > 0 else None)
    return out


def fitted_order(hs, errors) -> float:
    """The least-squares slope of log E against log h (nan with fewer than two positive errors)."""
    pts = [(math.log(h), math.log(e)) for h, e in zip(hs, errors) if e > 0]
    if len(pts) < 2:
        return float("nan")
    lh, le = np.array(pts).T
    return float(np.polyfit(lh, le, 1)[0])


def run_grasp(mode: str, dt: float, end_time: float, tol: float = DEMO_TOL, fine: float = SAMPLE_INTERVAL,
              lagging: int = DEMO_LAGGING) -> dict:
    """Simulate the grasp in one mode with step dt from t = 0 to end_time (friction lagging ``lagging``),
    recording the teddy's surface at the sample times and at E_004's (``step_grid`` with the coarse h's common
    step fine [s]; one untimed step first: Numba's cache); returns the run's record (samples (K, N_v, 3) [m],
    times (K,) [s], step_samples (S, N_v, 3) [m], step_times (S,) [s], wall [s], ...)."""
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

    params = GraspParameters(mode=mode, dt=dt, end_time=end_time, tol=tol, friction_lagging=lagging)
    sim, _ = teddy_grasp(params)
    sim.solver.step(sim.state, sim.state.copy(), None, dt)  # untimed: loads the Numba cache
    sim, _ = teddy_grasp(params)  # a fresh solver and state
    model = sim.model
    teddy = model.collision_mesh.body == 0
    at = sample_steps(end_time, dt)
    fine_at = step_grid(end_time, dt, fine)
    every = np.union1d(at, fine_at)
    n_steps = steps_per(end_time, dt, "the end time")
    run = {"state": sim.state, "iterations": 0, "unconverged": 0, "min_distance": math.inf}

    def step():
        new = run["state"].copy()
        st = sim.solver.step(run["state"], new, None, dt)
        run["state"] = new
        run["iterations"] += st.newton_iterations
        run["unconverged"] += not st.converged
        run["min_distance"] = min(run["min_distance"], st.min_distance)

    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    got = record(step, lambda: model.surface_positions(run["state"].x)[teddy], n_steps, every)
    wall = time.perf_counter() - t0
    samples, step_samples = got[np.isin(every, at)], got[np.isin(every, fine_at)]
    return {"mode": mode, "dt": dt, "end_time": end_time, "tol": tol, "friction_lagging": lagging,
            "samples": samples, "times": at * dt,
            "step_samples": step_samples, "step_times": fine_at * dt,
            "wall": wall, "steps": n_steps, "iterations": run["iterations"], "unconverged": run["unconverged"],
            "min_distance": run["min_distance"], "n_vertices": int(teddy.sum()),
            "load": [load0, os.getloadavg()[0]]}


def warm_up(mode: str, end_time: float) -> None:
    """Untimed: simulate the mode with h = 0.02 s up to min(end_time, 2 s), through the first contacts with the
    bubbles, so that every Numba kernel is compiled or loaded from the cache before any run is timed."""
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

    t = min(end_time, 2.0)
    sim, _ = teddy_grasp(GraspParameters(mode=mode, dt=SAMPLE_INTERVAL, end_time=t))
    state = sim.state
    for _ in range(int(round(t / SAMPLE_INTERVAL))):
        new = state.copy()
        sim.solver.step(state, new, None, SAMPLE_INTERVAL)
        state = new


def run_path(out: Path, mode: str, dt: float, tol: float = DEMO_TOL, lagging: int = DEMO_LAGGING) -> Path:
    return out / (f"{mode}_h{dt:g}" + (f"_tol{tol:g}" if tol != DEMO_TOL else "")
                  + (f"_lag{lagging}" if lagging != DEMO_LAGGING else "") + ".npz")


def load_or_run(out: Path, mode: str, dt: float, end_time: float, rerun: bool, tol: float = DEMO_TOL,
                fine: float = SAMPLE_INTERVAL, lagging: int = DEMO_LAGGING) -> dict:
    """The run's record from its npz in out (same end time, tolerance, friction lagging and E_004 grid) or a
    fresh run (E_004's grid: fine [s], ``run_grasp``), saved there; prints a line."""
    path = run_path(out, mode, dt, tol, lagging)
    if path.exists() and not rerun:
        with np.load(path) as f:
            rec = {k: f[k].item() if f[k].ndim == 0 else f[k] for k in f.files}
        rec.setdefault("tol", DEMO_TOL)
        rec.setdefault("friction_lagging", DEMO_LAGGING)
        grid = step_grid(end_time, dt, fine) * dt
        same_grid = "step_times" not in rec or (len(rec["step_times"]) == len(grid)
                                                and np.allclose(rec["step_times"], grid, rtol=0, atol=1e-9))
        if (abs(rec["end_time"] - end_time) < 1e-12 and rec["tol"] == tol and rec["friction_lagging"] == lagging
                and same_grid):
            print(f"{mode:>6} h={dt:g}: reusing {path}", flush=True)
            return rec
    rec = run_grasp(mode, dt, end_time, tol, fine=fine, lagging=lagging)
    np.savez_compressed(path, **rec)
    print(f"{mode:>6} h={dt:g}: {rec['steps']} steps in {rec['wall']:.1f} s, {rec['iterations']} Newton it, "
          f"{rec['unconverged']} unconverged, min distance {rec['min_distance']:.2e} m, "
          f"load {rec['load'][0]:.2f}->{rec['load'][1]:.2f}", flush=True)
    return rec


def _stats(rec: dict) -> dict:
    keys = ("wall", "steps", "iterations", "unconverged", "min_distance")
    return {"h": float(rec["dt"]), **{k: float(rec[k]) if k in ("wall", "min_distance") else int(rec[k])
                                      for k in keys}, "load": [float(v) for v in rec["load"]]}


def study_mode(out: Path, mode: str, ref_dt: float, dts, end_time: float, rerun: bool,
               tol: float = DEMO_TOL, lagging: int = DEMO_LAGGING) -> dict:
    """Reference and coarse runs of one mode; returns its results.json entry."""
    fine = common_step(dts, ref_dt)
    ref = load_or_run(out, mode, ref_dt, end_time, rerun, tol, fine, lagging)
    runs = []
    for dt in sorted(dts):
        rec = load_or_run(out, mode, dt, end_time, rerun, tol, fine, lagging)
        if not np.allclose(rec["times"], ref["times"], rtol=0, atol=1e-9):
            raise RuntimeError(f"{mode}: sample times of h={dt:g} differ from the reference's")
        runs.append({**_stats(rec), "E": time_averaged_error(rec["samples"], ref["samples"]),
                     "E_paper": paper_error(rec["samples"], ref["samples"]), "E_004": step_error(rec, ref),
                     "rms": [float(v) for v in rms_per_sample(rec["samples"], ref["samples"])]})
    hs, es = [r["h"] for r in runs], [r["E"] for r in runs]
    e004 = [r["E_004"] for r in runs]
    order_004 = fitted_order(hs, e004) if all(e is not None for e in e004) else None
    return {"reference": _stats(ref), "end_time": end_time, "tol": tol, "friction_lagging": lagging,
            "n_vertices": int(ref["n_vertices"]),
            "order_004": order_004,
            "times": [float(t) for t in ref["times"]],
            "n_samples": len(ref["times"]), "runs": runs, "orders": observed_orders(hs, es),
            "order": fitted_order(hs, es)}


def print_table(mode: str, res: dict) -> None:
    ref = res["reference"]
    print(f"\n{mode}: reference h={ref['h']:g} s ({ref['steps']} steps, {ref['wall']:.1f} s wall, "
          f"{ref['iterations']} Newton it, {ref['unconverged']} unconverged), end time {res['end_time']:g} s, "
          f"Newton tol {res.get('tol', DEMO_TOL):g}, {_lagging_words(res)}, "
          f"{res['n_vertices']} teddy surface vertices, {res['n_samples']} samples")
    print(f"{'h [s]':>8} {'E(h) [m]':>10} {'E_paper':>10} {'E_004':>10} {'order':>6} {'wall [s]':>9} "
          f"{'Newton':>7} {'unconv':>6} {'min d [m]':>9}")
    orders = [None] + list(res["orders"])
    for r, o in zip(res["runs"], orders):
        os_ = f"{o:6.2f}" if o is not None else f"{'-':>6}"
        e004 = f"{r['E_004']:10.3e}" if r.get("E_004") is not None else f"{'-':>10}"
        print(f"{r['h']:8g} {r['E']:10.3e} {r['E_paper']:10.3e} {e004} {os_} {r['wall']:9.1f} "
              f"{r['iterations']:7d} {r['unconverged']:6d} {r['min_distance']:9.2e}")


def plot(results: dict, figures: Path) -> list:
    """Write the three PNGs (module docstring) under figures; returns their paths."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figures.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in (("convergence_error.png", _draw_error), ("convergence_wall.png", _draw_wall),
                       ("convergence_error_wall.png", _draw_error_wall), ("convergence_error_time.png", _draw_time)):
        fig = Figure(figsize=(5.0, 4.0), tight_layout=True)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        draw(ax, results)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.savefig(figures / name, dpi=120)
        paths.append(figures / name)
    return paths


def _lagging_words(res: dict) -> str:
    lagging = res.get("friction_lagging", DEMO_LAGGING)
    return "friction lagged until converged" if lagging == 0 else f"friction lagged {lagging}x"


def _label(mode: str, res: dict) -> str:
    tol, lagging = res.get("tol", DEMO_TOL), res.get("friction_lagging", DEMO_LAGGING)
    return (f"{mode} (ref h={res['reference']['h']:g}, T={res['end_time']:g} s" + (f", tol {tol:g}" if tol != DEMO_TOL
            else "") + (f", {_lagging_words(res)}" if lagging != DEMO_LAGGING else "") + ")")


def _draw_error(ax, results: dict) -> None:
    hs_all = []
    for mode, res in results.items():
        hs, es = [r["h"] for r in res["runs"]], [r["E"] for r in res["runs"]]
        ax.loglog(hs, es, "o-", label=f"{_label(mode, res)}: order {res['order']:.2f}")
        hs_all += hs
    if hs_all:
        h = np.array([min(hs_all), max(hs_all)])
        e0 = min(r["E"] for res in results.values() for r in res["runs"] if r["h"] == h[0])
        ax.loglog(h, e0 * h / h[0], "k--", label="first order")
    ax.set_xlabel("time step h [s]")
    ax.set_ylabel("E(h): time-averaged RMS error [m]")
    ax.set_title("teddy grasp: convergence in h")


def _draw_wall(ax, results: dict) -> None:
    for mode, res in results.items():
        runs = sorted([res["reference"]] + res["runs"], key=lambda r: r["h"])
        ax.loglog([r["h"] for r in runs], [r["wall"] for r in runs], "o-", label=_label(mode, res))
    ax.set_xlabel("time step h [s]")
    ax.set_ylabel("wall-clock time [s]")
    ax.set_title("teddy grasp: wall-clock time")


def _draw_error_wall(ax, results: dict) -> None:
    for mode, res in results.items():
        ax.loglog([r["wall"] for r in res["runs"]], [r["E"] for r in res["runs"]], "o-", label=_label(mode, res))
        for r in res["runs"]:
            ax.annotate(f"{r['h']:g}", (r["wall"], r["E"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("wall-clock time [s]")
    ax.set_ylabel("E(h) [m]")
    ax.set_title("teddy grasp: error against cost")


def _draw_time(ax, results: dict) -> None:
    styles = ("-", "--", ":", "-.")
    for i, (mode, res) in enumerate(results.items()):
        for j, r in enumerate(res["runs"]):
            ax.semilogy(res["times"], r["rms"], styles[j % 4], color=f"C{i}", lw=1, label=f"{mode} h={r['h']:g}")
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("RMS error at t [m]")
    ax.set_title("teddy grasp: error along the run")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default="low,medium,full")
    ap.add_argument("--ref-dt", type=float, default=5e-4)
    ap.add_argument("--dts", default="0.005,0.01,0.02")
    ap.add_argument("--end-time", type=float, default=4.0)
    ap.add_argument("--tol", type=float, default=DEMO_TOL,
                    help="Newton tolerance (GraspParameters.tol, relative to the bbox diagonal per second)")
    ap.add_argument("--friction-lagging", type=int, default=DEMO_LAGGING, metavar="N",
                    help="lagged friction solves per step (GraspParameters.friction_lagging): 1, 004's and the "
                         "demo's; 0: until converged")
    ap.add_argument("--out", type=Path, default=Path("convergence_out"))
    ap.add_argument("--figures", type=Path, default=None, help="where the PNGs go (default: --out)")
    ap.add_argument("--rerun", action="store_true", help="simulate again even where a run's npz exists")
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up run of each mode")
    ap.add_argument("--plot-only", action="store_true", help="redraw figures and tables from results.json")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rpath = args.out / "results.json"
    results = json.loads(rpath.read_text()) if rpath.exists() else {}
    modes = [m for m in args.modes.split(",") if m]
    if not args.plot_only:
        dts = [float(s) for s in args.dts.split(",") if s]
        for mode in modes:
            saved = [run_path(args.out, mode, h, args.tol, args.friction_lagging).exists()
                     for h in [args.ref_dt, *dts]]
            if (args.rerun or not all(saved)) and not args.no_warmup:
                warm_up(mode, args.end_time)
            results[mode] = study_mode(args.out, mode, args.ref_dt, dts, args.end_time, args.rerun, args.tol,
                                       args.friction_lagging)
            rpath.write_text(json.dumps(results, indent=1))
    shown = {m: results[m] for m in modes if m in results}
    for mode, res in shown.items():
        print_table(mode, res)
    for p in plot(shown, args.figures or args.out):
        print(f"wrote {p}")
    for mode, res in shown.items():
        if res.get("order_004") is not None:
            print(f"convergence order, 004's E over every step ({mode}): {res['order_004']:.2f}")
    for mode, res in shown.items():
        print(f"convergence order ({mode}): {res['order']:.2f}")


if __name__ == "__main__":
    main()
