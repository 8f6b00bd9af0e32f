"""Consistency checks of a :class:`~flexmb.fe.reduction.body_data.FlexibleBodyData`: every array's
shape agrees with the numbers of modes and nodes, every value is finite, the modal stiffness is not
negative, the mass positive, node indices in range.

Run when a file is loaded (:meth:`FlexibleBodyData.load`, the message names the file) and when a
:class:`~flexmb.model.flexible.FlexibleBody` is made from data built in memory, so that a damaged or
hand-edited data set is refused where it enters, with the field, the value and the fix, instead of a
broadcast error in ``simulate`` or a Newton failure later.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flexmb.errors import MeshImportError, ModelError

__all__ = ["check_data", "check_npz_header"]

#: a modal stiffness below ``-OMEGA2_ROUNDOFF * max(omega2)`` is negative, not round-off
OMEGA2_ROUNDOFF = 1e-10


def _shape_of(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(np.shape(value))


def _expected_shapes(data) -> dict[str, tuple[int, ...]]:
    """field -> expected shape, from nm = len(omega2) and n_nodes = len(points)."""
    nm = int(np.size(data.omega2))
    nn = int(np.shape(data.points)[0]) if np.ndim(data.points) == 2 else -1
    out = {
        "frequencies": (nm,), "omega2": (nm,), "mode_shapes": (nn, 3, nm), "mode_rotations": (nn, 3, nm),
        "damping": (nm, nm),
        "points": (nn, 3), "geometric_stiffness": (nm, nm, nm), "quartic_stiffness": (nm, nm, nm, nm),
        "preload_stiffness": (12, nm, nm), "preload_stiffness_residual": (12, nm, nm),
        "preload_coordinates": (12, nm), "modal_stresses": (nm, nn, 6),
        "modal_point_stresses": (nm, int(np.size(data.stress_point_nodes)), 6),
        "stress_point_nodes": (int(np.size(data.stress_point_nodes)),),
        "stress_point_kinds": (int(np.size(data.stress_point_nodes)),),
        "modal_beam_forces": (nm, int(np.shape(data.cells.get("line", np.zeros((0, 2))))[0]), 2, 6),
        "invariants.first_moment": (3,), "invariants.second_moment": (3, 3),
        "invariants.modal_first_moment": (nm, 3), "invariants.modal_cross_moment": (nm, 3, 3),
        "invariants.modal_second_moment": (nm, nm, 3, 3), "invariants.modal_mass": (nm, nm),
        "invariants.modal_stiffness": (nm, nm),
    }
    return out


def _fields(data) -> dict[str, Any]:
    inv = data.invariants
    values = {name: getattr(data, name) for name in (
        "frequencies", "omega2", "mode_shapes", "mode_rotations", "damping", "points", "geometric_stiffness",
        "quartic_stiffness",
        "preload_stiffness", "preload_stiffness_residual", "preload_coordinates", "modal_stresses",
        "modal_point_stresses", "stress_point_nodes", "stress_point_kinds", "modal_beam_forces")}
    for name in ("first_moment", "second_moment", "modal_first_moment", "modal_cross_moment", "modal_second_moment",
                 "modal_mass", "modal_stiffness"):
        values[f"invariants.{name}"] = getattr(inv, name)
    return values


def check_data(data, where: str, *, error: type[Exception] = ModelError) -> None:
    """Raise ``error`` (ModelError, or MeshImportError for a file) naming ``where``, the field and
    the value when ``data`` (a FlexibleBodyData) is inconsistent.

    Checked: the shapes of every array against ``nm = len(omega2)`` modes and ``n_nodes =
    len(points)`` nodes (``mode_shapes`` (n_nodes, 3, nm), interface ``modal_map`` (6, nm), the
    invariants, G, H, the preloads, the stresses); finite values everywhere; ``omega2 >= 0`` (to
    round-off) and ``frequencies = sqrt(omega2) / 2 pi``; ``mass > 0``; interface nodes, node sets and
    cell node indices within ``0 .. n_nodes - 1``.
    """
    fix = ("rebuild it with flexmb.build_flexible_body (or `flexmb modes`) and save it again"
           if error is MeshImportError else "build the data with flexmb.build_flexible_body")

    def fail(text: str) -> None:
        raise error(f"{where}: {text}; {fix}.")

    expected = _expected_shapes(data)
    nm, nn = expected["omega2"][0], expected["points"][0]
    for name, value in _fields(data).items():
        shape = _shape_of(value)
        if shape is None:
            if name.startswith("invariants.") or name in ("frequencies", "omega2", "mode_shapes", "damping", "points"):
                fail(f"`{name}` is missing")
            continue
        if shape != expected[name]:
            what = f"{nm} modes" + (f" and {nn} nodes" if nn >= 0 else "")
            fail(f"`{name}` has shape {shape}, expected {expected[name]} for {what} (omega2 has {nm} values, "
                 f"points {nn if nn >= 0 else 'a wrong shape'} rows): the arrays do not belong together")
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiu":
            fail(f"`{name}` holds {arr.dtype} values, not numbers")
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            fail(f"`{name}` holds a non-finite value ({arr[tuple(bad)].item()!r} at index {tuple(int(i) for i in bad)})")
    omega2 = np.asarray(data.omega2, dtype=float)
    scale = float(np.max(np.abs(omega2), initial=0.0))
    if np.any(omega2 < -OMEGA2_ROUNDOFF * scale) or (scale == 0.0 and np.any(omega2 < 0)):
        k = int(np.argmin(omega2))
        fail(f"`omega2[{k}]` = {float(omega2[k])!r} (rad/s)^2 is negative: a modal stiffness must be >= 0 (an elastic mode "
             "with a negative stiffness makes the body unstable)")
    f_expected = np.sqrt(np.maximum(omega2, 0.0)) / (2.0 * np.pi)
    if not np.allclose(data.frequencies, f_expected, rtol=1e-9, atol=1e-12 * max(1.0, float(f_expected.max(initial=0)))):
        k = int(np.argmax(np.abs(np.asarray(data.frequencies) - f_expected)))
        fail(f"`frequencies[{k}]` = {float(data.frequencies[k])!r} Hz is not sqrt(omega2) / 2 pi = {float(f_expected[k])!r} Hz")
    mass = data.invariants.mass
    if not (isinstance(mass, (int, float, np.floating, np.integer)) and np.isfinite(mass) and mass > 0):
        fail(f"`invariants.mass` = {np.asarray(mass).tolist()!r} must be a positive finite mass")
    for f in data.interfaces:
        mm = np.asarray(f.modal_map)
        if mm.shape != (6, nm) or not np.all(np.isfinite(mm)):
            fail(f"interface {f.name!r}: `modal_map` has shape {mm.shape}{'' if mm.shape != (6, nm) else ' with non-finite values'}, "
                 f"expected finite values of shape (6, {nm})")
        nodes = np.asarray(f.nodes)
        if nodes.size and (nodes.dtype.kind not in "iu" or nodes.min() < 0 or nodes.max() >= nn):
            fail(f"interface {f.name!r}: `nodes` name node {nodes.max().item()!r} outside 0 .. {nn - 1}")
        pos = np.asarray(f.position, dtype=float)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            fail(f"interface {f.name!r}: `position` = {np.asarray(f.position).tolist()!r} must be a finite point (3,)")
    for name, nodes in (getattr(data, "node_sets", None) or {}).items():
        nodes = np.asarray(nodes)
        if nodes.size and (nodes.dtype.kind not in "iu" or nodes.min() < 0 or nodes.max() >= nn):
            fail(f"node set {name!r} names node {nodes.max().item()!r} outside 0 .. {nn - 1}")
    for t, c in (data.cells or {}).items():
        c = np.asarray(c)
        if c.size and (c.min() < 0 or c.max() >= nn):
            fail(f"`cells/{t}` name node {int(c.max())} outside 0 .. {nn - 1}")


def check_npz_header(path: Path) -> None:
    """A file that is no zip archive is refused by its first bytes (np.load would try it as a pickle
    and answer with advice about ``allow_pickle``)."""
    if not path.is_file():
        raise MeshImportError(f"{path}: no such flexible-body file; write one with FlexibleBodyData.save() or "
                              "build_flexible_body(...).save(path).")
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head[:2] != b"PK":
        what = "a single numpy array (.npy)" if head == b"\x93NUMPY" else f"a file starting with the bytes {head!r}"
        raise MeshImportError(
            f"{path}: not a flexible-body file: a .npz file is a zip archive (its first bytes are 'PK'), this one is "
            f"{what}. Give the .npz written by FlexibleBodyData.save() (or write it again).")
