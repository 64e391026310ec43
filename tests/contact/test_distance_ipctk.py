"""Parity with ipctk (the C++ ipc-toolkit) on 1000 random configurations per function: types equal,
squared distances, gradients and Hessians to 1e-10 relative."""
import ipctk
import numpy as np
import pytest

import ipcsim.contact.distance as D
from _distance_configs import rel_err

N_CONFIGS = 1000
RTOL = 1e-10


def configs(k, seed):
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-2, 2, size=N_CONFIGS)  # lengths from 1 cm to 100 m
    return rng.normal(size=(N_CONFIGS, k, 3)) * scale[:, None, None]


def assert_parity(mine, theirs, what):
    err = rel_err(mine, theirs)
    assert err <= RTOL, f"{what}: relative difference {err:.2e}"


@pytest.mark.parametrize("name,k", [("point_point", 2), ("point_line", 3), ("point_plane", 4), ("line_line", 4)])
def test_raw_distances_match_ipctk(name, k):
    f, g, h = (getattr(D, name + "_distance_squared" + s) for s in ("", "_gradient", "_hessian"))
    F, G, H = (getattr(ipctk, name + "_distance" + s) for s in ("", "_gradient", "_hessian"))
    for i, x in enumerate(configs(k, seed=k)):
        assert_parity(f(*x), F(*x), f"{name} #{i} value")
        assert_parity(g(*x), G(*x), f"{name} #{i} gradient")
        assert_parity(h(*x), H(*x), f"{name} #{i} hessian")


@pytest.mark.parametrize("name,k,enum", [("point_edge", 3, "PointEdgeDistanceType"),
                                         ("point_triangle", 4, "PointTriangleDistanceType"),
                                         ("edge_edge", 4, "EdgeEdgeDistanceType")])
def test_typed_distances_match_ipctk(name, k, enum):
    enum = getattr(ipctk, enum)
    f, g, h = (getattr(D, name + "_distance_squared" + s) for s in ("", "_gradient", "_hessian"))
    F, G, H = (getattr(ipctk, name + "_distance" + s) for s in ("", "_gradient", "_hessian"))
    classify, classify_ref = getattr(D, name + "_distance_type"), getattr(ipctk, name + "_distance_type")
    seen = set()
    for i, x in enumerate(configs(k, seed=10 + k)):
        dtype = classify(*x)
        assert dtype == int(classify_ref(*x)), f"{name} #{i}: type"
        seen.add(dtype)
        ref_type = enum(dtype)
        assert_parity(f(*x, dtype), F(*x, ref_type), f"{name} #{i} value (type {dtype})")
        assert_parity(g(*x, dtype), G(*x, ref_type), f"{name} #{i} gradient (type {dtype})")
        assert_parity(h(*x, dtype), H(*x, ref_type), f"{name} #{i} hessian (type {dtype})")
    n_types = {"point_edge": 3, "point_triangle": 7, "edge_edge": 9}[name]
    assert seen == set(range(n_types)), f"{name}: random configurations missed types {set(range(n_types)) - seen}"
