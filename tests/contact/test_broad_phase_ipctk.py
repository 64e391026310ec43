"""Broad phase against ipctk's ``Candidates.build`` (the oracle; ipctk is a test-only dependency)."""
from __future__ import annotations

import ipctk
import numpy as np
import pytest

from ipcsim.contact.broad_phase import build_candidates
from ipcsim.geometry import CollisionMesh, load_tet_mesh

from test_broad_phase import random_soup, two_sheets  # noqa: E402  (tests/contact is on sys.path)


def ipctk_sets(mesh: CollisionMesh, x0, x1, r) -> dict[str, set]:
    """ipctk's candidates, with ipcsim's obstacle exclusion applied (ipctk's mesh has no obstacle flags)."""
    cm = ipctk.CollisionMesh(mesh.rest_positions, mesh.edges.astype(np.int32), mesh.faces.astype(np.int32))
    c = ipctk.Candidates()
    if x1 is None:
        c.build(cm, x0, r)
    else:
        c.build(cm, x0, x1, r)
    v_obst, e_obst, f_obst = mesh.is_obstacle, mesh.edge_is_obstacle, mesh.face_is_obstacle
    return {
        "vf": {(k.vertex_id, k.face_id) for k in c.fv_candidates if not (v_obst[k.vertex_id] and f_obst[k.face_id])},
        "ee": {tuple(sorted((k.edge0_id, k.edge1_id))) for k in c.ee_candidates
               if not (e_obst[k.edge0_id] and e_obst[k.edge1_id])},
        "vv": {tuple(sorted((k.vertex0_id, k.vertex1_id))) for k in c.vv_candidates
               if not (v_obst[k.vertex0_id] and v_obst[k.vertex1_id])},
        "ev": {(k.edge_id, k.vertex_id) for k in c.ev_candidates if not (e_obst[k.edge_id] and v_obst[k.vertex_id])},
    }


def check_against_ipctk(mesh: CollisionMesh, x0, x1, r):
    ours = build_candidates(mesh, x0, x1, r).as_sets()
    theirs = ipctk_sets(mesh, x0, x1, r)
    # every ipctk pair closer than 2 r (static) must be ours: boxes inflated by r each overlap then
    if x1 is None:
        f, e = mesh.faces, mesh.edges
        for v, fi in theirs["vf"]:
            d2 = ipctk.point_triangle_distance(x0[v], *x0[f[fi]])
            assert d2 >= (2 * r) ** 2 or (v, fi) in ours["vf"]
        for a, b in theirs["ee"]:
            d2 = ipctk.edge_edge_distance(*x0[e[a]], *x0[e[b]])
            assert d2 >= (2 * r) ** 2 or (a, b) in ours["ee"]
    # on these inputs both box tests agree exactly
    for k in ("vf", "ee", "vv", "ev"):
        assert ours[k] == theirs[k], f"{k}: ipctk-only {len(theirs[k] - ours[k])}, ours-only {len(ours[k] - theirs[k])}"
    return ours


def test_sheets_match_ipctk():
    mesh = two_sheets(20, 0.5e-3)
    ours = check_against_ipctk(mesh, mesh.rest_positions, None, 1e-3)
    assert len(ours["vf"]) > 0 and len(ours["ee"]) > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_random_soup_matches_ipctk(seed):
    rng = np.random.default_rng(seed)
    mesh = random_soup(rng, planes=False)
    x0 = mesh.rest_positions
    check_against_ipctk(mesh, x0, None, 0.02)
    ours = check_against_ipctk(mesh, x0, x0 + rng.normal(0, 0.03, x0.shape), 0.02)
    assert len(ours["ev"]) > 0


def test_cow_heads_match_ipctk(shared_data):
    V, T = load_tet_mesh(shared_data / "ipc/input/tetMeshes/cow_head.msh")
    a = CollisionMesh.from_tet_mesh(V, T, body=0)
    b = CollisionMesh.from_tet_mesh(V + [0.3 * np.ptp(V[:, 0]), 0.0, 0.0], T, body=1)
    mesh = CollisionMesh.concatenate([a, b])
    r = 1e-3 * mesh.bbox_diagonal()
    ours = check_against_ipctk(mesh, mesh.rest_positions, None, r)
    assert any(mesh.body[v] != mesh.body[mesh.faces[f, 0]] for v, f in ours["vf"])
