"""The shipped small face (src/ipcsim/data/face/face_small.npz, derived from ICT-FaceKit, MIT: see LICENSE there).

``save_face`` writes a FaceModel compactly: the per-vertex harmonic target displacements (K, n, 3) are stored
(float32) instead of the per-tet actuation (K, m, 3, 3), which ``load_face`` recomputes (symmetric factors of
the target gradients, eigenvalues clamped to the build's [min_stretch, max_stretch]). The visible skin
(``FaceModel.skin``), where the model has one, is stored as its rest vertices, triangles, embedding (nodes,
weights) and proxy index.

The shipped file was given its skin by ``add_skin`` (the rest of it unchanged, array for array):

    python -c "from ipcsim.face.data import add_skin, DATA_DIR; add_skin(DATA_DIR / 'face_small.npz')"
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..geometry.shape_targets import actuation_targets
from ..geometry.surface_map import SurfaceMap
from .model import FaceModel, FaceSkin

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "face"
_SCALARS = (int, float, str, bool)


def _index_dtype(n: int):
    return np.uint16 if n < 2**16 else np.int32


def save_face(model: FaceModel, path) -> None:
    """Write model to a compressed .npz at path (the info's scalars and 'params' as JSON)."""
    n = len(model.rest)
    info = {k: v for k, v in model.info.items() if isinstance(v, _SCALARS)}
    info["params"] = {k: v for k, v in model.info.get("params", {}).items() if isinstance(v, _SCALARS)}
    info["inverted_targets"] = list(map(int, model.info.get("inverted_targets", [])))
    lips = {k: model.info[k].astype(_index_dtype(n)) for k in ("lip_upper", "lip_lower") if k in model.info}
    if model.skin is not None:
        sk = model.skin
        lips.update(skin_vertices=sk.vertices, skin_faces=sk.faces.astype(_index_dtype(len(sk.vertices))),
                    skin_nodes=sk.map.nodes.astype(_index_dtype(n)), skin_weights=sk.map.weights,
                    skin_proxy_index=sk.proxy_index.astype(_index_dtype(len(sk.vertices))))
    np.savez_compressed(
        path, rest=model.rest, tets=model.tets.astype(_index_dtype(n)), bone=model.bone.astype(_index_dtype(n)),
        names=np.asarray(model.names), bone_displacements=model.bone_displacements.astype(np.float32),
        targets=model.info["target_displacements"].astype(np.float32), proxy_vertices=model.proxy_vertices,
        proxy_faces=model.proxy_faces.astype(_index_dtype(len(model.proxy_vertices))),
        proxy_nodes=model.proxy_map.nodes.astype(_index_dtype(n)), proxy_weights=model.proxy_map.weights,
        sequence=model.sequence.astype(np.float32), stiffness=model.stiffness.astype(np.float32),
        info=np.asarray(json.dumps(info)), **lips)


def read_face(path) -> FaceModel:
    """A FaceModel from an .npz written by ``save_face``."""
    z = np.load(path)
    info = json.loads(str(z["info"]))
    rest = z["rest"].astype(np.float64)
    tets = z["tets"].astype(np.int64)
    targets = z["targets"].astype(np.float64)
    params = info.get("params", {})
    actuation = np.stack([actuation_targets(rest, tets, u, params.get("min_stretch"), params.get("max_stretch"))[0]
                          for u in targets])
    info["target_displacements"] = targets
    for k in ("lip_upper", "lip_lower"):
        if k in z:
            info[k] = z[k].astype(np.int64)
    skin = None
    if "skin_vertices" in z:
        skin = FaceSkin(vertices=z["skin_vertices"], faces=z["skin_faces"].astype(np.int64),
                        map=SurfaceMap(z["skin_nodes"].astype(np.int64), z["skin_weights"], len(rest)),
                        proxy_index=z["skin_proxy_index"].astype(np.int64))
    return FaceModel(rest=rest, tets=tets, bone=z["bone"].astype(np.int64), names=[str(s) for s in z["names"]],
                     actuation=actuation, bone_displacements=z["bone_displacements"].astype(np.float64),
                     proxy_vertices=z["proxy_vertices"], proxy_faces=z["proxy_faces"].astype(np.int64),
                     proxy_map=SurfaceMap(z["proxy_nodes"].astype(np.int64), z["proxy_weights"], len(rest)),
                     sequence=z["sequence"].astype(np.float64), stiffness=z["stiffness"].astype(np.float64),
                     skin=skin, info=info)


def add_skin(path, data_dir=None) -> None:
    """Give the face in the .npz at path (written by ``save_face`` from a ``build_face`` model) its visible skin
    from the ICT files in data_dir (``face.ict.attach_skin``) and write it back; every other array is kept
    as it was (checked)."""
    from .ict import attach_skin

    before = dict(np.load(path))
    model = attach_skin(read_face(path), data_dir)
    tmp = Path(str(path) + ".tmp.npz")
    save_face(model, tmp)
    after = dict(np.load(tmp))
    changed = [k for k in before if k != "info" and not (k in after and after[k].dtype == before[k].dtype
                                                          and np.array_equal(after[k], before[k]))]
    if changed:
        tmp.unlink()
        raise ValueError(f"face data: rewriting {path} would change {', '.join(changed)}")
    tmp.replace(path)


def load_face(size: str = "small", data_dir=None) -> FaceModel:
    """The face of the given size: 'small' is read from the package data; any other size is built from the
    ICT files (``face.ict.build_face``; the large one takes minutes)."""
    if size == "small":
        return read_face(DATA_DIR / "face_small.npz")
    from .ict import build_face
    return build_face(size, data_dir)
