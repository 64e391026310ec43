"""Import scene scripts of the IPC 2020 code (ipc-sim/IPC, ``.txt``) as ipcsim scene dicts (format v1).

``parse_script(path)`` reads a script (grammar: ``../shared/data/ipc/SCRIPT_FORMAT.md``) and returns the scene dict
of ``docs/scenes.md``: absolute mesh paths, IPC's defaults where the script is silent, validated by the scene
schema. The semantics follow IPC's own parser and scripter (src/Config.cpp, src/main.cpp, src/AnimScripter.cpp,
src/TimeStepper/Optimizer.cpp):

* ``shapes input N`` + N lines ``<mesh> x y z rx ry rz sx sy sz [extras]``: placement x = R (S p) + t with
  R = Rx(rx) Ry(ry) Rz(rz) [deg] (IPC's order; written as a 3x3 matrix when two or more angles are non-zero).
  Tet meshes (.msh) are bodies; .obj (triangles), .seg (edges), .pt (points) and tet shapes with
  ``linearVelocity``/``angularVelocity``/``meshSeq`` are kinematic obstacles (a tet obstacle collides by its
  boundary). ``angularVelocity`` is in deg/s (converted to rad/s); IPC rotates by Rx Ry Rz (w h) about the
  bounding-box center at each step start, written as center "bbox" (``BoundingBoxStepMotion``).
* extras: ``material rho E nu`` (used when rho, E > 0, else the defaults), ``initVel vx vy vz wx wy wz`` [m/s,
  deg/s] about the body's bounding-box center (rewritten about the vertex centroid: v_lin + w x (c - b)),
  ``DBC min3 max3 v3 w3 [t0 [t1]]`` and ``NBC min3 max3 a3 [t0 [t1]]``: boxes relative to the shape's bounding
  box in its mesh file (0..1 per axis), selecting boundary vertices only (written as a relative box when that
  selects the same vertices in ipcsim's convention, else as vertex indices). DBC angular velocities are in
  deg/s about the set's bounding-box center (center "bbox", like obstacles); NBC values are accelerations
  [m/s^2] (IPC adds -h^2 m_i a . x_i). Both act in the steps whose START time lies in [t0, t1) intersected with
  ``DBCTimeRange``/``NBCTimeRange``: exact on the step grid for Dirichlet sets (active in the steps inside
  their range); Neumann ranges are written half a step later, [t0 + h/2, t1 + h/2] (t0 = 0 kept), since
  ipcsim applies a load in the steps whose END time is in its range.
  ``meshSeq <folder>``: the obstacle follows ``<folder>/<i>.<ext>`` (world coordinates); IPC's step k (ending
  at (k+1) h) moves to file k, so the keyframes are [file 0, file 0, file 1, ...] with dt = h.
* ``dHat``, ``epsv`` are relative to the bounding-box diagonal of the tet shapes' rest positions (IPC's
  ``matSpaceBBoxSize2(3)``; IPC stores dHat squared, the distance is dHat x diagonal); written as absolute
  ``contact.dhat`` [m] and ``friction.eps_v`` [m/s] (``useAbsParameters``: taken as absolute). ``tol`` is
  relative to the same diagonal (ipcsim's solver tol); ``selfFric`` is ``friction.mu`` (contacts between shapes);
  ``ground mu y`` and ``halfSpace o n stiffness mu`` are half spaces, each with its own coefficient; ``meshCO``
  is a static obstacle placed like IPC's MeshCO, its coefficient ``obstacles[i].friction`` (IPC's rule: a
  collision object's coefficient for all its contacts).
* ``timeIntegration NM [beta gamma]`` -> newmark; ``dampingRatio`` (clamped to [0, 1]) / ``dampingStiff``
  (converted by dampingRatio = dampingStiff / (0.75 h^3)) -> integrator.damping_ratio; ``size`` and
  ``rotateModel`` are folded into every shape's transform (IPC's rotation center (max - min) / 2 kept).
* gravity: IPC's Optimizer uses 9.80665 m/s^2; this importer follows the project data README, -9.81 along y.

* ``script <type> [<count> <values>]``: IPC's animation scripts, mapped onto prescribed motions by
  ``ipc_animation`` (fall, twist, DCO..., see there; ``handleRatio`` sets their handle strips). Types without a
  mapping raise ``SceneError`` naming the type.

Commands that change nothing physical (view, zoom, warmStart, CCDMethod, ...) give an ``IPCScriptWarning`` naming
the line, and so do ``constraintSolver QP|SQP`` and ``timeStepper Newton`` (run as IPC's interior-point Newton).
``selfCollisionOff`` switches each body's self contact off (``bodies[i].self_contact``). Unsupported commands
(restart, ...) raise ``SceneError`` ``FILE:LINE: <command>: not supported (reason)``; malformed lines raise ``SceneError``
``FILE:LINE: <command>: expected '<form>', ...``; a file listing other scripts (IPC's batch lists) is refused as
such.
"""
from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

from ..errors import IPCScriptWarning, SceneError
from .ipc_animation import refusal
from .ipc_script_lines import MeshCO, ScriptLine, Shape, read_script_lines

__all__ = ["parse_script", "read_script_lines", "IPCScriptWarning", "ScriptLine"]


# commands ignored with a warning: name -> reason
_IGNORED = {
    "view": "viewer setting", "zoom": "viewer setting", "cameraTracking": "viewer setting",
    "playBackSpeed": "output/viewer setting", "appendStr": "output folder name", "disableCout": "console output",
    "warmStart": "Newton initial guess only", "CCDMethod": "ipcsim uses its own additive CCD",
    "ccdMethod": "ipcsim uses its own additive CCD", "CCDTolerance": "ipcsim uses its own additive CCD",
    "ccdTolerance": "ipcsim uses its own additive CCD", "exactCCD": "ipcsim uses its own additive CCD",
    "linearSolver": "linear-solver backend choice", "linSysSolver": "linear-solver backend choice",
    "kappaMinMultiplier": "ipcsim uses a fixed physical barrier stiffness",
    "minBarrierStiffnessScale": "ipcsim uses a fixed physical barrier stiffness",
    "useActiveSetConvergence": "only used by the QP/SQP solvers",
    "noActiveSetConvergence": "only used by the QP/SQP solvers", "constraintType": "only used by the QP/SQP solvers",
    "QPSolver": "only used by the QP/SQP solvers", "constraintOffset": "only used by the QP/SQP solvers",
    "resolution": "not read by IPC's own parser", "inexactSolve": "not read by IPC's own parser",
}
# commands that would change the simulation but ipcsim cannot do: name -> reason
_UNSUPPORTED = {
    "restart": "restarting from an IPC status file; use the ipcsim CLI's --resume",
}


class _Parser:
    """Reads the commands of one script into raw settings (units of the script)."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.source = os.fspath(path)
        self.lines = read_script_lines(text)
        self.i = 0
        self.shapes: list[Shape] = []
        self.mesh_cos: list[MeshCO] = []
        self.half_spaces: list[dict] = []  # origin, normal, friction, line
        self.s = dict(energy="NH", integrator="BE", beta=0.25, gamma=0.5, size=-1.0, end=5.0, dt=0.025,
                      density=1000.0, youngs=1e5, poisson=0.4, gravity=True, damping_stiff=0.0, damping_ratio=0.0,
                      damping_line=0, dbc_range=(0.0, math.inf), nbc_range=(0.0, math.inf), tol=None,
                      self_fric=0.0, rotate_axis=(0.0, 0.0, 1.0), rotate_deg=0.0, dhat=1e-3, epsv=1e-3,
                      absolute=False, fric_iters=1, script=("null", [], 0), handle_ratio=0.01, self_collision=True)

    # ---------------------------------------------------------------- errors and values
    def error(self, line: int, message: str) -> SceneError:
        """SceneError ``FILE:LINE: message`` (one line)."""
        return SceneError(f"{self.source}:{line}: {' '.join(message.split())}")

    def warn(self, line: int, message: str) -> None:
        warnings.warn(f"{self.source}:{line}: {message}", IPCScriptWarning, stacklevel=4)

    def number(self, ln: ScriptLine, k: int, cmd: str, form: str) -> float:
        """Word k of a line as a float, or SceneError naming the line, the command and the expected form."""
        if k >= len(ln.words):
            raise self.error(ln.lines[-1], f"{cmd}: expected '{form}', the line ends early")
        try:
            value = float(ln.words[k])
        except ValueError:
            raise self.error(ln.lines[k], f"{cmd}: expected '{form}', got non-number '{ln.words[k]}'") from None
        if math.isnan(value):
            raise self.error(ln.lines[k], f"{cmd}: expected '{form}', got NaN")
        return value

    def numbers(self, ln: ScriptLine, start: int, count: int, cmd: str, form: str) -> list[float]:
        return [self.number(ln, start + j, cmd, form) for j in range(count)]

    def exact(self, ln: ScriptLine, n_args: int, cmd: str, form: str) -> None:
        """The line must hold the command and exactly n_args arguments."""
        if len(ln.words) != n_args + 1:
            got = len(ln.words) - 1
            raise self.error(ln.number, f"{cmd}: expected '{form}' ({n_args} argument"
                                        f"{'s' if n_args != 1 else ''}), got {got}")

    def resolve(self, word: str) -> Path:
        """IPC's path resolution: relative to the script's folder, else to the IPC root (here: the first
        ancestor folder of the script where the path exists); absolute paths are kept."""
        p = Path(word)
        if p.is_absolute():
            return p
        for folder in [self.path.parent, *self.path.parent.resolve().parents]:
            if (folder / p).exists():
                return (folder / p).resolve()
        return (self.path.parent / p).resolve()

    # ---------------------------------------------------------------- driver
    def run(self) -> None:
        while self.i < len(self.lines):
            ln = self.lines[self.i]
            self.i += 1
            cmd = ln.words[0]
            handler = getattr(self, f"cmd_{cmd}", None)
            if handler is not None:
                handler(ln)
            elif cmd in _IGNORED:
                self.warn(ln.number, f"{cmd}: ignored ({_IGNORED[cmd]})")
            elif cmd in _UNSUPPORTED:
                raise self.error(ln.number, f"{cmd}: not supported ({_UNSUPPORTED[cmd]})")
            elif cmd.lower().endswith(".txt"):
                listed = sum(1 for x in self.lines if x.words[0].lower().endswith(".txt"))
                raise self.error(ln.number, f"{cmd}: this file is a batch list of IPC scripts ({listed} listed, one "
                                            "a line), not a scene; run each listed script on its own")
            else:
                raise self.error(ln.number, f"{cmd}: unknown command")

    def next_values(self, count: int, cmd: str, line: int) -> list[float]:
        """IPC's ``tol``/``tuning``: count numbers read from the following lines."""
        values: list[float] = []
        while len(values) < count:
            if self.i >= len(self.lines):
                raise self.error(line, f"{cmd}: expected {count} values on the following lines, found {len(values)}")
            ln = self.lines[self.i]
            self.i += 1
            if len(values) + len(ln.words) > count:
                raise self.error(ln.number, f"{cmd}: expected {count} values in all, this line has too many")
            values += self.numbers(ln, 0, len(ln.words), cmd, "number")
        return values

    # ---------------------------------------------------------------- settings
    def cmd_energy(self, ln):
        self.exact(ln, 1, "energy", "energy NH|FCR")
        if ln.words[1] not in ("NH", "FCR"):
            raise self.error(ln.number, f"energy: expected 'energy NH|FCR', got '{ln.words[1]}'")
        self.s["energy"] = ln.words[1]

    def cmd_timeIntegration(self, ln):
        form = "timeIntegration BE | timeIntegration NM [beta gamma]"
        if len(ln.words) < 2 or ln.words[1] not in ("BE", "NM"):
            raise self.error(ln.number, f"timeIntegration: expected '{form}'")
        if ln.words[1] == "BE" or len(ln.words) > 4:
            self.exact(ln, 1 if ln.words[1] == "BE" else 3, "timeIntegration", form)
        values = self.numbers(ln, 2, len(ln.words) - 2, "timeIntegration", form)  # NM: beta [gamma], like IPC
        self.s.update(zip(("beta", "gamma"), values))
        if not (0 < self.s["beta"] <= 0.5 and 0 < self.s["gamma"] <= 1):
            raise self.error(ln.number, f"timeIntegration: Newmark needs 0 < beta <= 1/2 and 0 < gamma <= 1, got "
                                        f"{self.s['beta']:g} {self.s['gamma']:g}")
        self.s["integrator"] = ln.words[1]

    def cmd_size(self, ln):
        self.exact(ln, 1, "size", "size <size>")
        self.s["size"] = self.number(ln, 1, "size", "size <size>")

    def cmd_time(self, ln):
        form = "time <duration> <time-step>"
        self.exact(ln, 2, "time", form)
        end, dt = self.numbers(ln, 1, 2, "time", form)
        if not (0 < end < math.inf and 0 < dt < math.inf):
            raise self.error(ln.number, f"time: duration and time step must be positive and finite, got {end} {dt}")
        self.s["end"], self.s["dt"] = end, dt

    def cmd_density(self, ln):
        self.exact(ln, 1, "density", "density <density>")
        value = self.number(ln, 1, "density", "density <density>")
        if not 0 < value < math.inf:
            raise self.error(ln.number, f"density: must be positive [kg/m^3], got {value}")
        self.s["density"] = value

    def cmd_stiffness(self, ln):
        form = "stiffness <young-modulus> <poisson-ratio>"
        self.exact(ln, 2, "stiffness", form)
        self.s["youngs"], self.s["poisson"] = self.numbers(ln, 1, 2, "stiffness", form)
        self.check_material(ln.number, "stiffness", 1.0, self.s["youngs"], self.s["poisson"])

    def check_material(self, line, cmd, density, youngs, poisson):
        """SceneError naming the line unless density [kg/m^3] > 0, youngs [Pa] > 0, 0 <= poisson < 0.5 (``stiffness``
        has no density: its message names only what the command gives)."""
        if not (0 < youngs < math.inf and 0 <= poisson < 0.5 and 0 < density < math.inf):
            given = f"{youngs:g} {poisson:g}" if cmd == "stiffness" else f"{density:g} {youngs:g} {poisson:g}"
            raise self.error(line, f"{cmd}: needs {'' if cmd == 'stiffness' else 'density > 0, '}Young's modulus > 0 "
                                   f"and 0 <= Poisson's ratio < 0.5, got {given}")

    def cmd_turnOffGravity(self, ln):
        self.exact(ln, 0, "turnOffGravity", "turnOffGravity")
        self.s["gravity"] = False

    def cmd_dampingStiff(self, ln):
        self.exact(ln, 1, "dampingStiff", "dampingStiff <stiffness>")
        self.s["damping_stiff"] = max(0.0, self.number(ln, 1, "dampingStiff", "dampingStiff <stiffness>"))
        self.s["damping_line"] = self.s["damping_line"] or ln.number

    def cmd_dampingRatio(self, ln):
        self.exact(ln, 1, "dampingRatio", "dampingRatio <ratio>")
        value = self.number(ln, 1, "dampingRatio", "dampingRatio <ratio>")
        if not 0 <= value <= 1:
            self.warn(ln.number, f"dampingRatio: {value:g} clamped to [0, 1] like IPC")
        self.s["damping_ratio"] = min(1.0, max(0.0, value))

    def cmd_script(self, ln):
        """``script <type> [<count> <p1> ...]``: IPC's animation script (``ipc_animation``), with IPC's optional
        numeric parameters (DCOBallHitWall's initial speed [m/s])."""
        form = "script <type> [<count> <values>...]"
        if len(ln.words) < 2:
            raise self.error(ln.number, f"script: expected '{form}'")
        reason = refusal(ln.words[1])
        if reason is not None:
            raise self.error(ln.number, f"script: {reason}")
        params: list[float] = []
        if len(ln.words) > 2:
            count = self.number(ln, 2, "script", form)
            if count != int(count) or count < 0 or len(ln.words) != 3 + int(count):
                raise self.error(ln.number, f"script: expected '{form}' with <count> values after the count")
            params = self.numbers(ln, 3, int(count), "script", form)
        self.s["script"] = (ln.words[1], params, ln.number)

    def cmd_handleRatio(self, ln):
        self.exact(ln, 1, "handleRatio", "handleRatio <ratio>")
        value = self.number(ln, 1, "handleRatio", "handleRatio <ratio>")
        if not 0 < value < 0.5:
            raise self.error(ln.number, f"handleRatio: expected 0 < ratio < 0.5, got {value:g}")
        self.s["handle_ratio"] = value

    def cmd_selfCollisionOff(self, ln):
        self.exact(ln, 0, "selfCollisionOff", "selfCollisionOff")
        self.s["self_collision"] = False
        self.s["self_collision_line"] = ln.number

    def cmd_selfCollisionOn(self, ln):
        self.exact(ln, 0, "selfCollisionOn", "selfCollisionOn")
        self.s["self_collision"] = True

    def cmd_timeStepper(self, ln):
        self.exact(ln, 1, "timeStepper", "timeStepper <name>")
        if ln.words[1] != "Newton":
            raise self.error(ln.number, f"timeStepper: not supported ('{ln.words[1]}'; ipcsim steps with "
                                        "Newton's method)")
        self.warn(ln.number, "timeStepper: ignored (ipcsim steps with Newton's method, like 'Newton')")

    def cmd_DBCTimeRange(self, ln):
        form = "DBCTimeRange <t_begin> <t_end>"
        self.exact(ln, 2, "DBCTimeRange", form)
        self.s["dbc_range"] = tuple(self.numbers(ln, 1, 2, "DBCTimeRange", form))

    def cmd_NBCTimeRange(self, ln):
        form = "NBCTimeRange <t_begin> <t_end>"
        self.exact(ln, 2, "NBCTimeRange", form)
        self.s["nbc_range"] = tuple(self.numbers(ln, 1, 2, "NBCTimeRange", form))

    def cmd_tol(self, ln):
        self.exact(ln, 1, "tol", "tol <count> followed by <count> values")
        count = self.number(ln, 1, "tol", "tol <count>")
        if count != int(count) or count < 0:
            raise self.error(ln.number, f"tol: expected a count >= 0, got '{ln.words[1]}'")
        values = self.next_values(int(count), "tol", ln.number)
        if values:
            if any(not 0 < v < math.inf for v in values):
                raise self.error(ln.number, f"tol: values must be positive, got {values}")
            if len(set(values)) > 1:
                self.warn(ln.number, f"tol: per-time-step tolerances {values} not supported; using the last one "
                                     f"({values[-1]:g}), which IPC applies from step {len(values) - 1} on")
            self.s["tol"] = values[-1]

    def cmd_tuning(self, ln):
        self.exact(ln, 1, "tuning", "tuning <count> followed by <count> values")
        count = self.number(ln, 1, "tuning", "tuning <count>")
        if count != int(count) or count < 0:
            raise self.error(ln.number, f"tuning: expected a count >= 0, got '{ln.words[1]}'")
        values = self.next_values(int(count), "tuning", ln.number)
        # IPC: [kappa, dHat, dHat target, dHat eps, epsv, epsv target]; missing entries keep IPC's defaults
        if values and values[0] != 0:
            self.warn(ln.number, "tuning: the barrier stiffness value is ignored (ipcsim's kappa is physical)")
        self.s["dhat"] = values[1] if len(values) > 1 else 1e-3
        self.s["epsv"] = values[4] if len(values) > 4 else 1e-3

    def cmd_ground(self, ln):
        form = "ground <friction> <height> [<stiffness>]"
        if len(ln.words) not in (3, 4):
            self.exact(ln, 2, "ground", form)
        mu, height = self.numbers(ln, 1, 2, "ground", form)
        if len(ln.words) == 4:  # IPC reads two values; old scripts add a penalty stiffness after them
            self.number(ln, 3, "ground", form)
            self.warn(ln.number, "ground: the third value (a legacy stiffness) is ignored, like IPC")
        self.add_half_space(ln, [0.0, height, 0.0], [0.0, 1.0, 0.0], mu, "ground")

    def cmd_halfSpace(self, ln):
        form = "halfSpace <x> <y> <z> <nx> <ny> <nz> <stiffness> <friction>"
        self.exact(ln, 8, "halfSpace", form)
        v = self.numbers(ln, 1, 8, "halfSpace", form)
        norm = math.sqrt(sum(c * c for c in v[3:6]))
        if not 0 < norm < math.inf:
            raise self.error(ln.number, "halfSpace: the normal must be non-zero")
        self.add_half_space(ln, v[:3], [c / norm for c in v[3:6]], v[7], "halfSpace")

    def add_half_space(self, ln, origin, normal, mu, cmd):
        if not 0 <= mu < math.inf:
            raise self.error(ln.number, f"{cmd}: friction must be >= 0, got {mu:g}")
        self.half_spaces.append({"origin": list(origin), "normal": list(normal), "friction": mu, "line": ln.number})

    def cmd_meshCO(self, ln):
        form = "meshCO <mesh> <x> <y> <z> <scale> <stiffness> <friction> [rotate <rx> <ry> <rz>]"
        if len(ln.words) not in (8, 12) or (len(ln.words) == 12 and ln.words[8] != "rotate"):
            raise self.error(ln.number, f"meshCO: expected '{form}'")
        v = self.numbers(ln, 2, 6, "meshCO", form)
        rot = tuple(self.numbers(ln, 9, 3, "meshCO", form)) if len(ln.words) == 12 else (0.0, 0.0, 0.0)
        if not (0 < v[3] < math.inf and 0 <= v[5] < math.inf):
            raise self.error(ln.number, f"meshCO: scale must be positive and friction >= 0, got {v[3]:g} {v[5]:g}")
        self.mesh_cos.append(MeshCO(self.resolve(ln.words[1]), ln.number, tuple(v[:3]), v[3], v[5], rot))

    def cmd_selfFric(self, ln):
        self.exact(ln, 1, "selfFric", "selfFric <coefficient>")
        self.s["self_fric"] = max(0.0, self.number(ln, 1, "selfFric", "selfFric <coefficient>"))

    def cmd_constraintSolver(self, ln):
        self.exact(ln, 1, "constraintSolver", "constraintSolver interiorPoint|QP|SQP")
        kind = ln.words[1]
        if kind in ("QP", "SQP"):
            self.warn(ln.number, f"constraintSolver: {kind} runs as interiorPoint (IPC); ipcsim has no QP/SQP "
                                 "comparison solvers")
        elif kind not in ("interiorPoint", "IP"):
            raise self.error(ln.number, f"constraintSolver: expected 'interiorPoint|QP|SQP', got '{kind}'")

    def cmd_rotateModel(self, ln):
        form = "rotateModel <axis-x> <axis-y> <axis-z> <degrees>"
        self.exact(ln, 4, "rotateModel", form)
        v = self.numbers(ln, 1, 4, "rotateModel", form)
        if v[3] != 0 and not any(v[:3]):
            raise self.error(ln.number, "rotateModel: the axis must be non-zero")
        self.s["rotate_axis"], self.s["rotate_deg"] = tuple(v[:3]), v[3]

    def cmd_dHat(self, ln):
        self.s["dhat"] = self.positive(ln, "dHat", "dHat <dHat>")

    def cmd_epsv(self, ln):
        self.s["epsv"] = self.positive(ln, "epsv", "epsv <epsv>")

    def positive(self, ln, cmd, form) -> float:
        self.exact(ln, 1, cmd, form)
        value = self.number(ln, 1, cmd, form)
        if not 0 < value < math.inf:
            raise self.error(ln.number, f"{cmd}: must be positive, got {value:g}")
        return value

    def cmd_useAbsParameters(self, ln):
        self.exact(ln, 0, "useAbsParameters", "useAbsParameters")
        self.s["absolute"] = True

    def cmd_fricIterAmt(self, ln):
        self.exact(ln, 1, "fricIterAmt", "fricIterAmt <count>")
        value = self.number(ln, 1, "fricIterAmt", "fricIterAmt <count>")
        if value != int(value):
            raise self.error(ln.number, f"fricIterAmt: expected an integer, got '{ln.words[1]}'")
        self.s["fric_iters"] = max(0, int(value))  # <= 0: until converged (lagging_iterations 0)

    def cmd_section(self, ln):
        if len(ln.words) < 2:
            raise self.error(ln.number, "section: expected 'section <solver>...' or 'section end'")
        names = ["interiorPoint" if w == "IP" else w for w in ln.words[1:]]
        if "end" in names or "interiorPoint" in names:
            return
        while self.i < len(self.lines):  # a section of another solver: skip to 'section end'
            words = self.lines[self.i].words
            self.i += 1
            if words[0] == "section" and len(words) > 1 and words[1] == "end":
                return

    # ---------------------------------------------------------------- shapes
    def cmd_shape(self, ln):
        self.exact(ln, 2, "shape", "shape input <mesh>")
        self.shapes.append(Shape(self.resolve(ln.words[2]), ln.number, (0.0,) * 3, (0.0,) * 3, (1.0,) * 3))

    def cmd_shapes(self, ln):
        form = "shapes input <count>"
        self.exact(ln, 2, "shapes", form)
        count = self.number(ln, 2, "shapes", form)
        if count != int(count) or count < 1:
            raise self.error(ln.number, f"shapes: expected a count >= 1, got '{ln.words[2]}'")
        for k in range(int(count)):
            if self.i >= len(self.lines):
                raise self.error(ln.number, f"shapes: expected {int(count)} shape lines, found {k}")
            self.shapes.append(self.shape_line(self.lines[self.i]))
            self.i += 1

    def shape_line(self, ln) -> Shape:
        form = "<mesh> <x> <y> <z> <rot-x> <rot-y> <rot-z> <scale-x> <scale-y> <scale-z> [extras]"
        v = self.numbers(ln, 1, 9, "shape", form)
        sh = Shape(self.resolve(ln.words[0]), ln.number, tuple(v[:3]), tuple(v[3:6]), tuple(v[6:9]))
        k = 10
        while k < len(ln.words):
            key, line = ln.words[k], ln.lines[k]
            if key == "material":
                sh.material = tuple(self.numbers(ln, k + 1, 3, key, "material <density> <E> <nu>"))
                sh.material_line = line
                k += 4
            elif key == "linearVelocity":
                sh.linear_velocity = tuple(self.numbers(ln, k + 1, 3, key, "linearVelocity <vx> <vy> <vz>"))
                k += 4
            elif key == "angularVelocity":
                sh.angular_velocity_deg = tuple(self.numbers(ln, k + 1, 3, key, "angularVelocity <wx> <wy> <wz>"))
                k += 4
            elif key == "initVel":
                v = self.numbers(ln, k + 1, 6, key, "initVel <vx> <vy> <vz> <wx> <wy> <wz>")
                sh.init_velocity, sh.init_line = (tuple(v[:3]), tuple(v[3:])), line
                k += 7
            elif key in ("DBC", "NBC"):
                n = 12 if key == "DBC" else 9
                form_bc = ("DBC <min x y z> <max x y z> <vx vy vz> <wx wy wz> [t_begin [t_end]]" if key == "DBC"
                           else "NBC <min x y z> <max x y z> <ax ay az> [t_begin [t_end]]")
                v = self.numbers(ln, k + 1, n, key, form_bc)
                k += n + 1
                times = [0.0, math.inf]
                for j in range(2):  # optional numbers, like IPC's getOptional
                    if k < len(ln.words) and _is_number(ln.words[k]):
                        times[j] = self.number(ln, k, key, form_bc)
                        k += 1
                entry = (tuple(v[:3]), tuple(v[3:6]), tuple(v[6:9]))
                if key == "DBC":
                    sh.dbc.append(entry + (tuple(v[9:12]), times[0], times[1], line))
                else:
                    sh.nbc.append(entry + (times[0], times[1], line))
            elif key == "meshSeq":
                if k + 1 >= len(ln.words):
                    raise self.error(line, "meshSeq: expected 'meshSeq <folder>'")
                sh.mesh_seq = (self.resolve(ln.words[k + 1]), line)
                k += 2
            else:
                raise self.error(line, f"shape: unknown keyword '{key}' (expected material, initVel, DBC, NBC, "
                                       "linearVelocity, angularVelocity or meshSeq)")
        return sh

    def cmd_shapeMatrix(self, ln):
        form = "shapeMatrix input <nx> <ny> <nz> [<x> <y> <z>]"
        if len(ln.words) not in (5, 8):
            raise self.error(ln.number, f"shapeMatrix: expected '{form}'")
        counts = self.numbers(ln, 2, 3, "shapeMatrix", form)
        origin = self.numbers(ln, 5, 3, "shapeMatrix", form) if len(ln.words) == 8 else [0.0] * 3
        if any(c != int(c) or c < 1 for c in counts):
            raise self.error(ln.number, f"shapeMatrix: counts must be integers >= 1, got {counts}")
        if self.i >= len(self.lines):
            raise self.error(ln.number, "shapeMatrix: expected a shape line after it")
        nxt = self.lines[self.i]
        self.i += 1
        row = "<mesh> <dx> <dy> <dz> <rot-x> <rot-y> <rot-z> <scale-x> <scale-y> <scale-z> [material <d> <E> <nu>]"
        if len(nxt.words) not in (10, 14) or (len(nxt.words) == 14 and nxt.words[10] != "material"):
            raise self.error(nxt.number, f"shapeMatrix: expected '{row}'")
        v = self.numbers(nxt, 1, 9, "shapeMatrix", row)
        material = tuple(self.numbers(nxt, 11, 3, "shapeMatrix", row)) if len(nxt.words) == 14 else None
        path = self.resolve(nxt.words[0])
        for xi in range(int(counts[0])):
            for yi in range(int(counts[1])):
                for zi in range(int(counts[2])):
                    t = (origin[0] + v[0] * xi, origin[1] + v[1] * yi, origin[2] + v[2] * zi)
                    self.shapes.append(Shape(path, nxt.number, t, tuple(v[3:6]), tuple(v[6:9]), material,
                                             nxt.number if material else 0))


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def parse_script(path) -> dict:
    """The IPC script at path converted into a scene dict of format v1 (absolute mesh paths, IPC's defaults
    where the script is silent), validated by ``ipcsim.scene.schema.validate``.

    Raises SceneError (``FILE:LINE: ...``) for malformed or unsupported lines and unreadable meshes; warns
    (``IPCScriptWarning``) for ignored commands.
    """
    from .ipc_scene import assemble
    from .schema import validate

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SceneError(f"{os.fspath(path)}: cannot read script: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SceneError(f"{os.fspath(path)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    parser = _Parser(path, text)
    parser.run()
    if not parser.shapes:
        raise SceneError(f"{parser.source}: no shapes (the script needs a 'shapes input <count>' block)")
    data = assemble(parser)
    validate(data, parser.source)
    return data
