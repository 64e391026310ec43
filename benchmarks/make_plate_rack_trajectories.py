"""Write the plate-rack demo's two scripted gripper trajectories (issue 24, item 5) in the recorder's CSV format
(``time, x, y, z, qw, qx, qy, qz, width``) into src/ipcsim/data/trajectories/ (or the directory given), and the scene as JSON files with its meshes (examples/scenes/plate_rack_{clean,offset}.json,
examples/meshes/plate_rack/*.msh):

    PYTHONPATH=src python benchmarks/make_plate_rack_trajectories.py [DIR]

The waypoints and the scene geometry are in ``ipcsim.demos.plate_rack_scene`` (``waypoints``, ``scene_geometry``)."""
import sys
from pathlib import Path

from ipcsim.demos.plate_rack_scene import write_example, write_trajectories

if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "src/ipcsim/data/trajectories"
    out.mkdir(parents=True, exist_ok=True)
    for p in write_trajectories(out) + write_example(Path(__file__).parents[1] / "examples"):
        print(p)
