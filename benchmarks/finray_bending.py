"""The fin-ray check of issue 24: tip displacement and contact force of a clamped FinRay finger pushed at mid-flank
by a 5 mm cylinder (10 mm in 4 quasi-static steps), full space against embedded cages.

    NUMBA_NUM_THREADS=1 PYTHONPATH=src python benchmarks/finray_bending.py

Positive tip dx: the tip bends towards the cylinder (the fin-ray effect)."""
import time

from ipcsim.scene.finray_push import finray_push

CASES = [("full space", None), ("conforming cage 0.9 mm", ("conforming", dict(resolution=0.0009))),
         ("conforming cage 1.2 mm", ("conforming", dict(resolution=0.0012))),
         ("conforming cage 1.5 mm", ("conforming", dict(resolution=0.0015))),
         ("voxel cage 2 mm", ("voxel", 0.002)), ("voxel cage 5 mm", ("voxel", 0.005))]

if __name__ == "__main__":
    ref = None
    for name, cage in CASES:
        t0 = time.perf_counter()
        r = finray_push(cage)
        dx, fx = r.tip[-1, 0], r.force[-1, 0]
        ref = ref or (dx, fx)
        print(f"{name:24s} nodes {r.n_nodes:5d}  tip dx {dx * 1e3:+7.3f} mm ({dx / ref[0] - 1:+6.0%})  "
              f"force x {fx:6.3f} N ({fx / ref[1] - 1:+6.0%})  inverted {r.n_inverted}  "
              f"{time.perf_counter() - t0:5.1f} s", flush=True)
