"""Active set of two parallel 100x100-vertex sheets 0.5 dhat apart (every vertex right above a vertex,
edges crossing at end points, collinear edges: the distance types are decided on ties) against ipctk."""
import ipctk
import numpy as np
import pytest

from _ipctk_compare import ipcsim_stencil_dict, ipctk_candidates, ipctk_collisions, ipctk_stencil_dict
from _sheets import sheets_mesh

from ipcsim.contact.collisions import build_collisions
from ipcsim.contact.collisions_data import EE, EV, FV, VV

DHAT = 1e-3


@pytest.fixture(scope="module")
def sheets():
    mesh, x = sheets_mesh(100, 0.5 * DHAT)
    reference, _ = ipctk_collisions(mesh, x, DHAT)
    return mesh, x, reference


def _by_kind(stencils, kind):
    return {k: w for k, w in stencils.items() if k[0] == kind}


def test_sheets_active_set_equals_ipctk_on_its_candidates(sheets):
    """Fed ipctk's candidate pairs (same pair orientation), every stencil, type and weight agrees."""
    mesh, x, reference = sheets
    col = build_collisions(mesh, x, DHAT, candidates=ipctk_candidates(mesh, x, DHAT))
    assert [col.count(k) for k in (VV, EV, EE, FV)] == [len(reference.vv_collisions), len(reference.ev_collisions),
                                                         len(reference.ee_collisions), len(reference.fv_collisions)]
    assert col.count(EV) > 0
    ours, theirs = ipcsim_stencil_dict(col, mesh), ipctk_stencil_dict(reference, mesh)
    assert ours.keys() == theirs.keys()
    keys = sorted(ours)
    np.testing.assert_allclose([ours[k] for k in keys], [theirs[k] for k in keys], rtol=1e-12)


def test_sheets_own_broad_phase_vertex_stencils_equal_ipctk(sheets):
    """With ipcsim's own broad phase the candidate pairs are the same but can be oriented the other way;
    ipc-toolkit's classifier is not symmetric on ties, so only the orientation-independent part is
    compared: the set of vertex-vertex stencils and the edge-vertex stencils with their weights."""
    mesh, x, reference = sheets
    col = build_collisions(mesh, x, DHAT)
    ours, theirs = ipcsim_stencil_dict(col, mesh), ipctk_stencil_dict(reference, mesh)
    assert col.count(EV) == len(reference.ev_collisions) > 0
    assert _by_kind(ours, "ev") == pytest.approx(_by_kind(theirs, "ev"), rel=1e-12)
    assert _by_kind(ours, "vv").keys() == _by_kind(theirs, "vv").keys()
