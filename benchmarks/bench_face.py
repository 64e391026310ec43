"""The face solver's per-frame timing table (issue #14 item 6; 000 Table 1) and the Woodbury speedup.

The ICT face (``face.ict.build_face``; large: 51,840 vertices, 279,180 tets) with the automatic x2
(``face.regions.collision_aware_vertices``: the nodes of the tets that embed the collision proxy, so no contact
leaves it), over a contiguous window of the shipped 50-frame sequence in which the lips touch. The frames before
the window are solved once ('woodbury') and every configuration starts from that same equilibrium
(``FacePDSolver.start_from``). All configurations are built first; then each frame is run by all of them back
to back, so that changes of the machine's load during the run hit them alike:

* o: no collision handling ('direct': the constant factor of K only);
* triangle: PCG preconditioned by the constant factor of K (000 Eq. 5);
* square: dense Schur complement on x2 (000 Eq. 6-8; a dense 3 n2 x 3 n2 Cholesky per global step, so only on the
  first ``--square-frames`` frames of the window, said in the table);
* diamond: Woodbury update on the n_c touched vertices (000 Eq. 9-11);
* triangle and diamond again with the barrier stiffness kappa x10 (000: CG nearly doubles, the direct method not);
* with ``--device gpu``: square gpu and diamond gpu, the same solvers with their dense algebra on the GPU (CuPy;
  ``face.dense_device``; square gpu on every window frame), warmed up by one global solve each when built.

Printed: ms per frame (IPC, G-step, CCD, LS, Misc, Total as 000 Table 1), global steps per frame, n1, n2, mean n_c;
then the ratios triangle/diamond (total and G-step) and diamond at 10 kappa / diamond (with ``--device gpu`` also
the CPU / GPU ratios and the GPU runs' distance from diamond's states). The last line reads
``woodbury speedup: X``, X = total frame time of triangle over diamond (both on the CPU).

    python benchmarks/bench_face.py [--size large|small] [--start 3] [--frames 5] [--square-frames 1]
                                    [--pcg-rtol 1e-12] [--model face.npz] [--save face.npz] [--device cpu|gpu]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

KEYS = ("ipc", "global", "ccd", "line_search", "misc", "total")
HEAD = ("IPC", "G-step", "CCD", "LS", "Misc", "Total")


def load_model(size: str, path: str | None, save: str | None):
    """The face: read from an .npz written by ``face.data.save_face`` if path is given, else built."""
    from ipcsim.face.data import load_face, read_face, save_face

    t0 = time.perf_counter()
    model = read_face(path) if path else load_face(size)
    print(f"face {'read from ' + path if path else size}: {len(model.rest)} vertices, {len(model.tets)} tets, "
          f"{len(model.bone)} bone, proxy {len(model.proxy_vertices)} vertices ({time.perf_counter() - t0:.1f} s)",
          flush=True)
    if save:
        save_face(model, save)
    return model


def make_solver(model, name: str, kappa_scale: float = 1.0, pcg_rtol: float = 1e-12, device: str = "cpu"):
    """(FacePDSolver, seconds to build it): name 'o' (no collision) or a global-step solver name; pcg_rtol: the
    relative residual of 'pcg'; device: where 'schur' / 'woodbury' run their dense algebra ('cpu', 'gpu')."""
    from ipcsim.face.solver import FaceContact, FacePDSolver

    t0 = time.perf_counter()
    if name == "o":
        solver = FacePDSolver(model, "direct", FaceContact(enabled=False))
    else:
        kappa = float(np.mean(model.stiffness)) * kappa_scale  # FaceContact's default, scaled
        solver = FacePDSolver(model, name, FaceContact(kappa=kappa), pcg_rtol=pcg_rtol, device=device)
    if device != "cpu":
        warm_up(solver)
    return solver, time.perf_counter() - t0


def warm_up(solver) -> None:
    """One global solve with a small contact block on the first x2 vertices, so that the device's kernels are
    compiled and its libraries loaded before the first timed frame."""
    import scipy.sparse as sp

    g = solver.solver
    dofs = (3 * g.x2[:4, None] + np.arange(3)).ravel()
    b = sp.csr_matrix((np.ones(len(dofs)), (dofs, dofs)), shape=(3 * g.nf, 3 * g.nf))
    g.solve(b, np.ones((g.nf, 3)))


#: (label, solver name or 'o', kappa scale, device) in the order they run each frame.
CONFIGS = (("o", "o", 1.0, "cpu"), ("triangle", "pcg", 1.0, "cpu"), ("square", "schur", 1.0, "cpu"),
           ("diamond", "woodbury", 1.0, "cpu"), ("triangle k x10", "pcg", 10.0, "cpu"),
           ("diamond k x10", "woodbury", 10.0, "cpu"))
#: added by --device gpu
GPU_CONFIGS = (("square gpu", "schur", 1.0, "gpu"), ("diamond gpu", "woodbury", 1.0, "gpu"))


def run_interleaved(model, x0, weights, square_frames: int, pcg_rtol: float = 1e-12, configs=CONFIGS) -> dict:
    """Every configuration of configs built, started from x0 (n, 3) [m], then the frames weights (k, K) run frame
    by frame, each frame by every configuration back to back (square: only the first square_frames), so that a
    change of the machine's load over the run hits them alike. Returns {label: (FrameStats list, solver)}."""
    runs = {}
    for label, name, scale, device in configs:
        solver, t_build = make_solver(model, name, scale, pcg_rtol, device)
        solver.start_from(x0)
        runs[label] = ([], solver)
        print(f"  {label}: built in {t_build:.1f} s", flush=True)
    for i, w in enumerate(weights):
        line = []
        for label, *_ in configs:
            if label == "square" and i >= square_frames:
                continue
            stats, solver = runs[label]
            stats.append(solver.frame(w))
            line.append(f"{label} {stats[-1].time_total:.1f} s/{stats[-1].iterations}")
        print(f"  frame {i}: " + ", ".join(line), flush=True)
    return runs


def summary(stats: list) -> dict:
    """Per-frame means: times [ms], iterations, mean n_c (over all global steps), fallbacks, converged frames."""
    n = len(stats)
    row = {k: 1e3 * sum(getattr(s, "time_" + k) for s in stats) / n for k in KEYS}
    its = sum(s.iterations for s in stats)
    row["its"] = its / n
    row["nc"] = sum(s.nc_mean * s.iterations for s in stats) / max(its, 1)
    row["frames"] = n
    row["converged"] = sum(s.converged for s in stats)
    row["fallbacks"] = sum(s.fallbacks for s in stats)
    row["pcg"] = sum(s.pcg_iterations for s in stats) / n
    row["contacts"] = stats[-1].n_contacts
    return row


def print_table(rows: dict, n1: int, n2: int) -> None:
    print(f"\nper frame [ms]; n1 = {n1}, n2 = {n2}")
    print(f"{'config':<16}{'frames':>7}" + "".join(f"{h:>10}" for h in HEAD)
          + f"{'its':>8}{'n_c':>8}{'pcg its':>9}{'conv':>6}{'fallb':>6}")
    for label, r in rows.items():
        print(f"{label:<16}{r['frames']:>7}" + "".join(f"{r[k]:>10.0f}" for k in KEYS)
              + f"{r['its']:>8.1f}{r['nc']:>8.1f}{r['pcg']:>9.0f}{r['converged']:>6}{r['fallbacks']:>6}", flush=True)


def print_ratios(rows: dict, first: dict, runs: dict) -> None:
    """The closing lines: triangle / diamond, square / diamond on its frames, kappa x10 (the CPU runs)."""
    load = os.getloadavg()
    dev = np.abs(runs["triangle"][1].x - runs["diamond"][1].x).max()
    print(f"\nfinal states: |triangle - diamond|_inf = {dev:.2e} m; load average at the end {load[0]:.1f} "
          f"(1 min), {load[1]:.1f} (5 min)")
    tri, dia = rows["triangle"], rows["diamond"]
    tri10, dia10 = rows["triangle k x10"], rows["diamond k x10"]
    sq_ratio = first["square"]["total"] / first["diamond"]["total"]
    print(f"total triangle / diamond: {tri['total'] / dia['total']:.2f} (target >= 5; 000: about 3)")
    print(f"G-step triangle / diamond: {tri['global'] / dia['global']:.2f} (target >= 10; 000: 5-7)")
    print(f"total square / diamond on its frame(s): {sq_ratio:.2f}")
    print(f"kappa x10: diamond {dia10['total'] / dia['total']:.2f} x its time (target <= 1.1), "
          f"triangle {tri10['total'] / tri['total']:.2f} x; PCG iterations per frame {tri['pcg']:.0f} -> "
          f"{tri10['pcg']:.0f}; G-step diamond {dia10['global'] / dia['global']:.2f} x, "
          f"triangle {tri10['global'] / tri['global']:.2f} x")


def print_gpu_ratios(rows: dict, first: dict, runs: dict) -> None:
    """CPU / GPU ratios of the G-step and total times, and how far the GPU runs end from diamond's states."""
    dia, dia_g = rows["diamond"], rows["diamond gpu"]
    sq, sq_g = first["square"], first["square gpu"]
    x = runs["diamond"][1].x
    dev = {k: np.abs(runs[k][1].x - x).max() for k in ("diamond gpu", "square gpu")}
    print(f"GPU: G-step diamond / diamond gpu: {dia['global'] / dia_g['global']:.2f}, total "
          f"{dia['total'] / dia_g['total']:.2f}; on square's frame(s) G-step square / square gpu: "
          f"{sq['global'] / sq_g['global']:.2f}, total {sq['total'] / sq_g['total']:.2f}")
    sq_all = rows["square gpu"]
    print(f"GPU: G-step per global step [ms]: diamond {dia['global'] / dia['its']:.2f}, diamond gpu "
          f"{dia_g['global'] / dia_g['its']:.2f}, square gpu {sq_all['global'] / sq_all['its']:.2f}")
    print(f"GPU: final states |diamond gpu - diamond|_inf = {dev['diamond gpu']:.2e} m, "
          f"|square gpu - diamond|_inf = {dev['square gpu']:.2e} m")


def gpu_name() -> str:
    """The GPU CuPy uses (DeviceError, one line, when CuPy or a GPU is missing)."""
    from ipcsim.face.dense_device import dense_backend

    cupy = dense_backend("gpu").xp
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="large", choices=("small", "large"))
    ap.add_argument("--model", help="read the face from this .npz (face.data.save_face) instead of building it")
    ap.add_argument("--save", help="write the built face to this .npz")
    ap.add_argument("--start", type=int, default=3, help="first frame of the window (lips touch from frame 3)")
    ap.add_argument("--frames", type=int, default=5, help="frames in the window")
    ap.add_argument("--square-frames", type=int, default=1, help="frames of the window run by square (dense Schur)")
    ap.add_argument("--pcg-rtol", type=float, default=1e-12, help="triangle's CG relative residual (the solver's "
                    "default 1e-12; looser values give fewer CG iterations and steps equal to round-off less)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"), help="gpu: also run square and diamond "
                    "with their dense algebra on the GPU (CuPy), side by side with the CPU configurations")
    args = ap.parse_args()
    configs = CONFIGS
    if args.device == "gpu":
        print(f"GPU: {gpu_name()}", flush=True)
        configs = CONFIGS + GPU_CONFIGS

    model = load_model(args.size, args.model, args.save)
    seq = model.sequence
    window = seq[args.start:args.start + args.frames]
    print(f"window: frames {args.start}-{args.start + len(window) - 1}; square on the first {args.square_frames}; "
          f"PCG rtol {args.pcg_rtol:g}", flush=True)

    # the common start state: the frames before the window, once; then one window frame to warm the kernels
    prep, t_build = make_solver(model, "woodbury")
    t0 = time.perf_counter()
    for w in seq[:args.start]:
        prep.frame(w)
    x0 = prep.x.copy()
    prep.frame(window[0])
    print(f"start state: frames 0-{args.start - 1} by woodbury ({time.perf_counter() - t0:.1f} s; solver built in "
          f"{t_build:.1f} s), n1 = {prep.n1}, n2 = {prep.n2}", flush=True)
    del prep

    runs = run_interleaved(model, x0, window, args.square_frames, args.pcg_rtol, configs)
    n1, n2 = runs["diamond"][1].n1, runs["diamond"][1].n2
    rows = {k: summary(v[0]) for k, v in runs.items()}
    print_table(rows, n1, n2)
    ns = args.square_frames
    first = {k: summary(v[0][:ns]) for k, v in runs.items()}
    print(f"\nthe first {ns} window frame(s) only (square's frames):")
    print_table(first, n1, n2)
    print_ratios(rows, first, runs)
    if args.device == "gpu":
        print_gpu_ratios(rows, first, runs)
    tri, dia = rows["triangle"], rows["diamond"]
    print(f"woodbury speedup: {tri['total'] / dia['total']:.2f}")


if __name__ == "__main__":
    main()
