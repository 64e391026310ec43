"""Procedural wire dish rack (Embedded IPC §IV-B's plate-in-rack scene): thin closed wire tubes, tetrahedralised.

Every wire and bar is a straight tube of polygonal cross-section (``sides`` vertices on a circle of radius d / 2,
the circumscribed circle: the polygon spans the wire diameter d across its corners) with flat end caps, meshed
into tets around its centre line (so an affine body gets its volume and mass from tets, not from a voxel grid that
a 3 mm wire would slip through). The rack is the union of separate tubes that never touch: each layer rests on
the one below with a clearance ``gap``, like welded wires with the weld left out. Layout (y up, metres):

- rungs: ``n_slots + 1`` bars along z lying on the table (y in [0, bar_diameter]), one under each divider;
- rails: two bars along x at z = +-bar_spacing / 2 lying on the rungs; a plate in a slot stands on them;
- dividers: at each rung, two vertical wires at z = +-wire_spacing / 2 standing on it, up to ``wire_height``.

The slots are the ``n_slots`` gaps between neighbouring dividers, ``slot_width`` wide between the wires' surfaces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .surface import boundary_faces, tet_signed_volumes


def _frame(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors (3,) completing the unit ``axis`` (3,) to a right-handed orthonormal frame."""
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)


def tube_tet_mesh(start, end, diameter: float, sides: int = 8, segment_length: float = 0.01):
    """A closed straight tube from ``start`` to ``end`` (3,) [m] meshed into positive tets.

    Each of the ceil(L / segment_length) segments is ``sides`` wedges (centre line, two neighbouring corners)
    split into 3 tets with the diagonals chosen the same way in every wedge, so the mesh is conforming. Returns
    (vertices ((segments + 1) (sides + 1), 3) [m]: per ring its centre then its corners, tets (3 sides segments,
    4)).
    """
    p0, p1 = np.asarray(start, np.float64), np.asarray(end, np.float64)
    length = float(np.linalg.norm(p1 - p0))
    if not (length > 0 and diameter > 0 and sides >= 3):
        raise ValueError(f"tube: needs a positive length, diameter and >= 3 sides (got {length}, {diameter}, {sides})")
    axis = (p1 - p0) / length
    e1, e2 = _frame(axis)
    segments = max(1, int(np.ceil(length / segment_length - 1e-9)))
    angles = 2.0 * np.pi * np.arange(sides) / sides
    ring = 0.5 * diameter * (np.cos(angles)[:, None] * e1 + np.sin(angles)[:, None] * e2)
    centres = p0 + np.linspace(0.0, 1.0, segments + 1)[:, None] * (p1 - p0)
    vertices = np.concatenate([np.vstack([c, c + ring]) for c in centres])
    stride = sides + 1
    tets = []
    for k in range(segments):
        c0, c1 = k * stride, (k + 1) * stride
        for j in range(sides):
            a0, b0 = c0 + 1 + j, c0 + 1 + (j + 1) % sides
            a1, b1 = a0 + stride, b0 + stride
            # diagonals c0-a1, c0-b1 on the shared radial quads, a0-b1 on the outer quad
            tets += [(c0, c1, a1, b1), (c0, a0, b0, b1), (c0, a0, b1, a1)]
    tets = np.asarray(tets, np.int64)
    neg = tet_signed_volumes(vertices, tets) < 0
    tets[neg] = tets[neg][:, [0, 2, 1, 3]]
    return vertices, tets


@dataclass
class WireRack:
    """A generated rack: vertices (n, 3) [m], tets (t, 4), its closed outward surface triangles (f, 3) (over the
    same vertex array; the centre-line vertices inside the tubes are used by tets only), per tet the tube it
    belongs to (t,), the slots' centres (n_slots, 3) [m] (x between two dividers, y = the rails' top, z = 0),
    the dividers' x (n_slots + 1,) [m] and the parameters it was built from."""

    vertices: np.ndarray
    tets: np.ndarray
    triangles: np.ndarray
    tube: np.ndarray
    slot_centers: np.ndarray
    divider_x: np.ndarray
    params: dict


def wire_rack(n_slots: int = 3, slot_width: float = 0.024, wire_diameter: float = 0.0035,
              wire_height: float = 0.1, wire_spacing: float = 0.09, bar_diameter: float = 0.004,
              bar_spacing: float = 0.05, depth: float = 0.1, gap: float = 5e-4, sides: int = 8,
              segment_length: float = 0.01) -> WireRack:
    """The wire rack of the module docstring, its lowest point at y = 0, centred on x = z = 0.

    slot_width [m]: clear gap between the wires of two neighbouring dividers; wire_diameter, bar_diameter [m]:
    of the vertical wires and of the rungs and rails; wire_height [m]: the wires' top above the table;
    wire_spacing, bar_spacing [m]: z distance between a divider's two wires, between the two rails; depth [m]:
    the rungs' length along z; gap [m]: clearance between stacked tubes; sides: corners of a tube's
    cross-section; segment_length [m]: longest tube segment.
    """
    rb, rw = 0.5 * bar_diameter, 0.5 * wire_diameter
    if n_slots < 1 or slot_width <= 0 or gap <= 0:
        raise ValueError(f"wire_rack: needs n_slots >= 1, slot_width > 0, gap > 0 (got {n_slots}, {slot_width}, {gap})")
    if abs(0.5 * wire_spacing - 0.5 * bar_spacing) <= rw + rb + gap:
        raise ValueError("wire_rack: the wires would touch the rails (|wire_spacing - bar_spacing| / 2 too small)")
    if 0.5 * wire_spacing + rw >= 0.5 * depth or 0.5 * bar_spacing + rb >= 0.5 * depth:
        raise ValueError("wire_rack: depth must exceed the wires' and the rails' spacing (they stand on the rungs)")
    pitch = slot_width + wire_diameter
    divider_x = (np.arange(n_slots + 1) - 0.5 * n_slots) * pitch
    rung_y = rb
    top_of_rungs = bar_diameter
    rail_y = top_of_rungs + gap + rb
    wire_bottom = top_of_rungs + gap
    if wire_height <= wire_bottom + wire_diameter:
        raise ValueError(f"wire_rack: wire_height {wire_height} m is below the rungs")
    x_end = divider_x[-1] + rb + gap + wire_diameter
    segments = []  # (start, end, diameter)
    for x in divider_x:
        segments.append(((x, rung_y, -0.5 * depth), (x, rung_y, 0.5 * depth), bar_diameter))
    for z in (-0.5 * bar_spacing, 0.5 * bar_spacing):
        segments.append(((-x_end, rail_y, z), (x_end, rail_y, z), bar_diameter))
    for x in divider_x:
        for z in (-0.5 * wire_spacing, 0.5 * wire_spacing):
            segments.append(((x, wire_bottom, z), (x, wire_height, z), wire_diameter))
    vertices, tets, tube = [], [], []
    offset = 0
    for i, (a, b, d) in enumerate(segments):
        v, t = tube_tet_mesh(a, b, d, sides, segment_length)
        vertices.append(v)
        tets.append(t + offset)
        tube.append(np.full(len(t), i))
        offset += len(v)
    vertices, tets = np.concatenate(vertices), np.concatenate(tets)
    rails_top = rail_y + rb
    centres = np.stack([0.5 * (divider_x[:-1] + divider_x[1:]), np.full(n_slots, rails_top), np.zeros(n_slots)], 1)
    params = dict(n_slots=n_slots, slot_width=slot_width, wire_diameter=wire_diameter, wire_height=wire_height,
                  wire_spacing=wire_spacing, bar_diameter=bar_diameter, bar_spacing=bar_spacing, depth=depth,
                  gap=gap, sides=sides, segment_length=segment_length, n_tubes=len(segments))
    return WireRack(vertices, tets, boundary_faces(vertices, tets), np.concatenate(tube), centres, divider_x, params)
