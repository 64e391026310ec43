"""``ipcsim info``'s report of a built JSON scene or IPC script: bodies (vertex, tet and surface counts, materials,
sizes), obstacles, half spaces, grippers, time, contact and friction parameters, and the sanity check."""
from __future__ import annotations

import os


def describe(sim, data: dict) -> tuple[str, bool]:
    """Text describing a built scene (bodies with vertex/tet counts and materials, obstacles, half spaces,
    time, contact and friction parameters) and its sanity check; returns (text, check passed)."""
    import numpy as np

    from .runner import step_count
    from ..model.sanity import check_scene, vertex_body

    m, mesh = sim.model, sim.model.collision_mesh
    vb = vertex_body(m)
    tet_body = vb[m.tets[:, 0]] if len(m.tets) else np.zeros(0, int)
    face_body = mesh.body[mesh.faces[:, 0]] if mesh.n_faces else np.zeros(0, int)
    c, f = data.get("contact", {}), data.get("friction", {})
    integ = data.get("integrator", {})
    lines = [f"scene {sim.name}: {m.n_vertices} vertices, {len(m.tets)} tets, {mesh.n_faces} surface triangles",
             f"  time: end {sim.end_time:g} s, dt {sim.dt:g} s ({step_count(sim.end_time, sim.dt)} steps), "
             f"integrator {integ.get('type', 'implicit_euler')}",
             f"  gravity {[float(g) for g in m.gravity]} m/s^2",
             f"  contact: dhat {c.get('dhat', getattr(sim.solver.contact, 'dhat', float('nan'))):g} m, "
             f"kappa {getattr(sim.solver, 'kappa', float('nan')):g} Pa"
             f"{_kappa_rule(sim.solver)}, convergent {c.get('convergent', True)}",
             f"  friction: mu {f.get('mu', 0.0):g}, eps_v {f.get('eps_v', float('nan')):g} m/s, "
             f"lagging iterations {f.get('lagging_iterations', 1) or 'until converged'}"
             + "".join(f", {p['bodies'][0]}/{p['bodies'][1]} mu {p['mu']:g}" for p in f.get("pairs", [])),
             f"  bodies ({len(data.get('bodies', []))}):"]
    for i, b in enumerate(data.get("bodies", [])):
        mat = b.get("material", {})
        sel = vb == i
        ext = np.ptp(sim.state.x[sel], axis=0) if sel.any() else np.zeros(3)
        if "affine" in b:
            elastic = f"affine (ABD) stiffness {b['affine'].get('stiffness', float('nan')):g} Pa"
        else:
            elastic = (f"{mat.get('model', 'NH')} E {mat.get('youngs_modulus', float('nan')):g} Pa nu "
                       f"{mat.get('poisson_ratio', float('nan')):g}")
            if "embedding" in b:
                elastic = "embedded, " + elastic
        lines.append(f"    [{i}] {b.get('name', f'body{i}')}: {int(sel.sum())} vertices, "
                     f"{int(np.sum(tet_body == i))} tets, {int(np.sum(face_body == i))} surface triangles, "
                     f"{elastic} density {mat.get('density', float('nan')):g} "
                     f"kg/m^3, size {ext[0]:.4g} x {ext[1]:.4g} x {ext[2]:.4g} m"
                     + ("" if b.get("self_contact", True) else ", no self contact"))
    n_bodies = len(data.get("bodies", []))
    obstacles = data.get("obstacles", [])
    carried = {a["obstacle"]: g["name"] for g in data.get("grippers", []) for a in g["attachments"] if "obstacle" in a}
    lines.append(f"  obstacles ({len(obstacles)}):")
    for j, o in enumerate(obstacles):
        sel = mesh.body == n_bodies + j
        moving = any(np.any(np.asarray(o.get(k) or [0.0]) != 0) for k in ("velocity", "angular_velocity"))
        kind = "keyframed" if o.get("keyframes") else ("kinematic" if moving else "static")
        kind = f"carried by gripper {carried[o.get('name')]}" if o.get("name") in carried else kind
        n_seg = int(np.sum(mesh.body[mesh.edges[mesh.codim_edges, 0]] == n_bodies + j))
        lines.append(f"    [{j}] {o.get('name', f'obstacle{j}')}: {int(sel.sum())} collision vertices, "
                     f"{int(np.sum(face_body == n_bodies + j))} triangles, {n_seg} segments, {kind}"
                     + ("" if o.get("friction") is None else f", friction {o['friction']:g}"))
    halves = data.get("half_spaces", [])
    lines.append(f"  half spaces ({len(halves)}):")
    for h in halves:
        lines.append(f"    origin {h.get('origin')} normal {h.get('normal')} friction {h.get('friction', 0.0)}")
    for i, g in enumerate(data.get("grippers", [])):
        parts = [f"{a.get('body', a.get('obstacle'))} (side {a['side']}" + (")" if "body" in a else ", obstacle)")
                 for a in g["attachments"]]
        lines.append(f"  gripper [{i}] {g['name']}: trajectory {os.path.basename(g['trajectory'])}, axis "
                     f"{g['axis']}, carries {', '.join(parts)}")
    report = check_scene(m, sim.state, getattr(sim.solver.contact, "dhat", None), raise_on_error=False,
                         warn=False)
    lines.append("  sanity check: " + ("ok" if report.ok else f"{len(report.errors)} error(s)"))
    lines += [f"    error: {e}" for e in report.errors] + [f"    warning: {w}" for w in report.warnings]
    return "\n".join(lines), report.ok


def _kappa_rule(solver) -> str:
    """' (per contact: ...)' when the solver scales kappa by each contact's softer side."""
    stiffness = getattr(solver, "vertex_stiffness", None)
    if stiffness is None:
        return ""
    import numpy as np

    e = np.asarray(stiffness)
    return f" for the stiffest body (per contact: its softer side, down to {e[np.isfinite(e)].min():.3g} x)"
