"""Persistence of :class:`flexmb.fe.reduction.body_data.FlexibleBodyData`: one ``.npz`` file, no pickles,
metadata as a JSON string array (:meth:`FlexibleBodyData.save`, :meth:`FlexibleBodyData.load`)."""
from __future__ import annotations

import json
import logging
import os
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.reduction import PRELOAD_NAMES, InertiaInvariants, InterfaceFrame
from flexmb.fe.reduction.energy_factors import StrainEnergyFactors, factor_strain_energy

__all__ = ["FORMAT", "FORMAT_VERSION", "read_npz", "write_npz"]

#: tag and version written into every file
FORMAT = "flexmb.FlexibleBodyData"
FORMAT_VERSION = 2
#: version 2: the mesh's node sets (``node_set/<i>``, names in ``meta["node_sets"]``); version 1 files load
#: without them

_INVARIANT_FIELDS = tuple(f.name for f in fields(InertiaInvariants))
#: arrays stored only when computed (absent entries load as None; older files lack the last three)
_OPTIONAL_ARRAYS = ("geometric_stiffness", "preload_stiffness", "modal_stresses", "quartic_stiffness",
                    "preload_stiffness_residual", "preload_coordinates", "modal_point_stresses",
                    "stress_point_nodes", "stress_point_kinds", "modal_beam_forces", "mode_rotations")
#: entries of the strain-energy factors (``energy_factors/<name>``; absent in files before they existed)
_FACTOR_ARRAYS = ("cubic_weights", "cubic_u", "cubic_V", "quartic_weights", "quartic_A", "tol", "dropped")

logger = logging.getLogger("flexmb.fe.reduction.body_data")


def write_npz(data, path) -> Path:
    """Write ``data`` to ``path`` (``.npz`` appended when missing); returns the file written."""
    if not isinstance(path, (str, os.PathLike)):
        raise ModelError(f"FlexibleBodyData.save: path={path!r} is not a file path; give a string or pathlib.Path.")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    meta = dict(
        format=FORMAT, version=FORMAT_VERSION, name=data.name, kind=data.kind, reference=data.reference,
        units=data.units, source=data.source, source_checksum=data.source_checksum, settings=data.settings,
        cell_types=list(data.cells), preload_names=list(PRELOAD_NAMES),
        interfaces=[dict(name=f.name, kind=f.kind, is_reference=bool(f.is_reference)) for f in data.interfaces],
        node_sets=list(data.node_sets),
    )
    arrays: dict[str, NDArray] = dict(
        meta=np.array(json.dumps(meta)),
        frequencies=data.frequencies, omega2=data.omega2, mode_shapes=data.mode_shapes,
        damping=data.damping, points=data.points,
    )
    for t, c in data.cells.items():
        arrays[f"cells/{t}"] = c
    for i, f in enumerate(data.interfaces):
        arrays[f"interface/{i}/nodes"] = f.nodes
        arrays[f"interface/{i}/position"] = f.position
        arrays[f"interface/{i}/weights"] = f.weights
        arrays[f"interface/{i}/modal_map"] = f.modal_map
    for i, nodes in enumerate(data.node_sets.values()):
        arrays[f"node_set/{i}"] = np.asarray(nodes, dtype=np.int64)
    for name in _INVARIANT_FIELDS:
        arrays[f"invariants/{name}"] = np.asarray(getattr(data.invariants, name))
    for key in _OPTIONAL_ARRAYS:
        value = getattr(data, key)
        if value is not None:
            arrays[key] = value
    if data.energy_factors is not None:
        for key, value in data.energy_factors.arrays().items():
            arrays[f"energy_factors/{key}"] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    logger.info("wrote %s (%d modes, %d nodes)", path, data.n_modes, data.n_nodes)
    return path



def read_npz(cls, path: Path):
    """Read a file written by :func:`write_npz` as ``cls`` (MeshImportError naming the damage)."""
    from flexmb.fe.reduction.data_checks import check_data, check_npz_header

    path = Path(path)
    check_npz_header(path)
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as exc:  # OSError, ValueError, zipfile.BadZipFile, EOFError: all unreadable
        raise MeshImportError(f"{path}: cannot read as a flexible-body .npz file ({exc}).") from exc
    with data:
        if "meta" not in data.files:
            raise MeshImportError(f"{path}: no 'meta' entry; not written by FlexibleBodyData.save().")
        meta = json.loads(str(data["meta"]))
        if meta.get("format") != FORMAT:
            raise MeshImportError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}.")
        if int(meta.get("version", 0)) > FORMAT_VERSION:
            raise MeshImportError(
                f"{path}: format version {meta['version']} is newer than this flexmb ({FORMAT_VERSION}); upgrade flexmb."
            )
        arr = {k: data[k] for k in data.files}
    interfaces = tuple(
        InterfaceFrame(
            name=f["name"], nodes=arr[f"interface/{i}/nodes"], position=arr[f"interface/{i}/position"],
            kind=f["kind"], weights=arr[f"interface/{i}/weights"], modal_map=arr[f"interface/{i}/modal_map"],
            is_reference=bool(f["is_reference"]),
        )
        for i, f in enumerate(meta["interfaces"])
    )
    inv = {name: arr[f"invariants/{name}"] for name in _INVARIANT_FIELDS}
    inv["mass"] = float(inv["mass"])
    settings = dict(meta["settings"])
    if "quartic" not in settings:
        settings["quartic"] = "raw" if arr.get("quartic_stiffness") is not None else None
        if settings["quartic"] == "raw":
            logger.info("%s: written before settings['quartic'] existed; its quartic_stiffness is the raw H "
                        "(energy of the reduced field alone, not relaxed over the complement of the basis)", path)
    out = cls(
        name=meta["name"], kind=meta["kind"], reference=meta["reference"],
        frequencies=arr["frequencies"], omega2=arr["omega2"], mode_shapes=arr["mode_shapes"],
        interfaces=interfaces, invariants=InertiaInvariants(**inv), damping=arr["damping"],
        **{key: arr.get(key) for key in _OPTIONAL_ARRAYS}, energy_factors=_stored_factors(arr), points=arr["points"],
        cells={t: arr[f"cells/{t}"] for t in meta["cell_types"]},
        units=meta["units"], source=meta["source"], source_checksum=meta["source_checksum"],
        settings=settings, node_sets={n: arr[f"node_set/{i}"] for i, n in enumerate(meta.get("node_sets", ()))},
    )
    check_data(out, str(path), error=MeshImportError)  # shapes, NaN, negative omega2: named here
    if out.energy_factors is None and out.geometric_stiffness is not None:  # checked data only
        logger.info("%s: written before the strain-energy factors were stored; factoring its G and H now", path)
        out = replace(out, energy_factors=factor_strain_energy(out.geometric_stiffness, out.quartic_stiffness,
                                                               out.omega2))
    return out



def _stored_factors(arr: dict) -> StrainEnergyFactors | None:
    """The strain-energy factors stored in a file, or None (files written before they existed: the
    caller factors their ``G`` and ``H`` once the data are checked)."""
    if not all(f"energy_factors/{k}" in arr for k in _FACTOR_ARRAYS):
        return None
    f = {k: arr[f"energy_factors/{k}"] for k in _FACTOR_ARRAYS}
    return StrainEnergyFactors(f["cubic_weights"], f["cubic_u"], f["cubic_V"], f["quartic_weights"],
                               f["quartic_A"], float(f["tol"]), f["dropped"])


