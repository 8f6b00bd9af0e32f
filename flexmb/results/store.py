"""Storage of a :class:`~flexmb.results.solution.Solution` as one ``.npz`` file without pickle, a round trip
exact to the bit; every entry carries a SHA-256 digest checked on load.

:meth:`Solution.save <flexmb.results.solution.Solution.save>` and :meth:`Solution.load
<flexmb.results.solution.Solution.load>` delegate here. This module does not import :mod:`flexmb.results.solution`
(``load`` is given the class to build).
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import SolutionFileError

__all__ = ["ARRAYS", "STRINGS", "load", "save"]

logger = logging.getLogger(__name__)

#: Version of the ``.npz`` layout written by :meth:`flexmb.results.solution.Solution.save` (2: node reactions ``joint_force``,
#: ``joint_moment`` and the internal-point ones ``joint_*_internal``; format 1 stored only the latter,
#: as ``joint_force``/``joint_moment``).
_FILE_FORMAT = 2
_FORMAT_KEY = "__flexmb_solution__"

#: the node and internal-point arrays of a Solution, in file order
ARRAYS: tuple[str, ...] = (
    "t", "t_internal", "body_position", "body_rotation", "body_velocity", "body_angular_velocity",
    "joint_rel_position", "joint_rel_rotation", "joint_rel_velocity", "joint_force", "joint_moment",
    "joint_force_internal", "joint_moment_internal", "joint_multiplier", "kinetic_energy", "potential_energy",
)
#: the name tuples of a Solution
STRINGS: tuple[str, ...] = ("body_names", "joint_names", "joint_types")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def _digest(a: NDArray) -> str:
    """SHA-256 of an array's dtype, shape and bytes (detects any change of a saved entry)."""
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def save(sol: Any, path: str | Path, *, compress: bool = True) -> Path:
    """:meth:`flexmb.results.solution.Solution.save` of ``sol``: one array per attribute, names as unicode
    arrays, ``stats/<key>`` and ``extra/<key>`` with their dtypes, ``meta`` as JSON, and the JSON
    header ``_FORMAT_KEY`` (format version, key order, SHA-256 of every entry)."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, NDArray] = {name: getattr(sol, name) for name in ARRAYS}
    for name in STRINGS:
        data[name] = np.array(getattr(sol, name), dtype=str).reshape(-1)
    data.update({f"stats/{k}": v for k, v in sol.stats.items()})
    data.update({f"extra/{k}": v for k, v in sol.extra.items()})
    data["meta"] = np.array(json.dumps(sol.meta))
    header = {"format": _FILE_FORMAT, "stats": list(sol.stats), "extra": list(sol.extra),
              "sha256": {k: _digest(v) for k, v in data.items()}}
    data[_FORMAT_KEY] = np.array(json.dumps(header))
    (np.savez_compressed if compress else np.savez)(path, **data)
    return path


def load(cls: type, path: str | Path) -> Any:
    """:meth:`flexmb.results.solution.Solution.load`: an instance of ``cls`` from a file :func:`save` wrote,
    each entry checked against its digest and the node values for finiteness; anything else is a
    SolutionFileError naming the file and the entry."""
    path = Path(path)
    if path.is_dir():
        raise SolutionFileError(f"{path} is a directory, not a solution file; a checkpoint directory's results are read "
                                f"with flexmb.load_checkpoint(path)")
    if not path.is_file():
        raise FileNotFoundError(f"no solution file {path}; write one with Solution.save")
    try:
        sol = _load(cls, path)
    except SolutionFileError:
        raise
    except Exception as exc:  # zipfile, zlib, numpy format and JSON errors of a damaged file
        msg = str(exc)
        # never pass on numpy's advice to load with allow_pickle: a solution file has no pickles
        detail = "not a NumPy array archive" if "pickle" in msg else f"{type(exc).__name__}: {msg}"
        raise SolutionFileError(
            f"{path} is not a readable flexmb solution file ({detail}); the file is "
            f"damaged or truncated: restore it or re-run the simulation and save it with Solution.save"
        ) from exc
    return sol


def _load(cls: type, path: Path) -> Any:
    with np.load(path, allow_pickle=False) as f:
        if not hasattr(f, "files") or _FORMAT_KEY not in f.files:
            raise SolutionFileError(
                f"{path} is not a flexmb solution file (no {_FORMAT_KEY!r} entry); write it with Solution.save"
            )
        header = json.loads(str(f[_FORMAT_KEY][()]))
        if header.get("format", 0) > _FILE_FORMAT:
            raise SolutionFileError(
                f"{path} has solution format {header.get('format')}, this flexmb reads up to "
                f"{_FILE_FORMAT}; upgrade flexmb"
            )
        fmt = header.get("format", 0)
        arrays = ARRAYS if fmt >= 2 else tuple(
            a for a in ARRAYS if a not in ("joint_force_internal", "joint_moment_internal"))
        keys = [*arrays, *STRINGS, *(f"stats/{k}" for k in header["stats"]),
                *(f"extra/{k}" for k in header["extra"]), "meta"]
        missing = [k for k in keys if k not in f.files]
        if missing:
            raise SolutionFileError(
                f"{path}: entries {missing} are missing; the file is damaged or was not written by "
                f"Solution.save: restore it or re-run the simulation"
            )
        data = {k: f[k] for k in keys}
    digests = header.get("sha256", {})
    for key, value in data.items():
        if key in digests and _digest(value) != digests[key]:
            raise SolutionFileError(
                f"{path}: entry {key!r} does not match the checksum written by Solution.save; the file was "
                f"modified or damaged after saving: restore it or re-run the simulation"
            )
    for key in arrays:
        bad = ~np.isfinite(data[key])
        if bad.any():
            where = np.argwhere(bad)[0].tolist()
            raise SolutionFileError(
                f"{path}: {key} holds non-finite values (first at index {where}: {data[key][tuple(where)]}); "
                f"a solution file holds finite node values only: restore the file or re-run the simulation"
            )
    kwargs: dict[str, Any] = {name: data[name] for name in arrays}
    if fmt < 2:  # format 1: the reactions were stored at the internal points only
        kwargs["joint_force_internal"] = kwargs.pop("joint_force")
        kwargs["joint_moment_internal"] = kwargs.pop("joint_moment")
        nan = np.full((data["t"].size, len(data["joint_names"]), 3), np.nan)
        kwargs["joint_force"], kwargs["joint_moment"] = nan, nan
        logger.warning("%s was written by an older flexmb (solution format %s) without node reactions: "
                       "joint_force/joint_moment are NaN, the internal-point values are in "
                       "joint_force_internal/joint_moment_internal; re-run to get node reactions", path, fmt)
    kwargs.update({name: tuple(str(s) for s in data[name]) for name in STRINGS})
    kwargs["stats"] = {k: data[f"stats/{k}"] for k in header["stats"]}
    kwargs["extra"] = {k: data[f"extra/{k}"] for k in header["extra"]}
    kwargs["meta"] = json.loads(str(data["meta"][()]))
    return cls(**kwargs)
