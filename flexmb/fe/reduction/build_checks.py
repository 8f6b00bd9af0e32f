"""Checks of the arguments of :func:`flexmb.fe.reduction.body_data.build_flexible_body`: every
argument validated where it enters, and options that contradict each other refused (an option that
cannot take effect is an error, never dropped without a word).

Each check raises :class:`~flexmb.errors.ModelError` naming the argument, the value and the fix.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.errors import ModelError

__all__ = ["QUARTIC_AUTO", "check_arguments", "check_option_pairs", "quartic_mode"]

OWNER = "build_flexible_body"

#: default of ``quartic``: the relaxed quartic term when ``geometric``, none without it
QUARTIC_AUTO = "auto"


def quartic_mode(quartic: Any, geometric: bool) -> str | None:
    """``quartic`` as "relaxed", "raw" or None (skipped).

    ``"auto"`` (the default) is "relaxed" with ``geometric`` and None without; an explicit quartic
    term (True, "relaxed", "raw") with ``geometric=False`` is a conflict: the quartic energy
    ``1/8 H q^4`` completes the cubic ``1/2 G q^3`` of the geometric stiffness, and the relaxed
    ``H`` comes with a correction of ``G``.
    """
    if isinstance(quartic, str) and quartic == QUARTIC_AUTO:
        return "relaxed" if geometric else None
    if quartic is True or (isinstance(quartic, str) and quartic in ("relaxed", "raw")):
        mode = "raw" if quartic == "raw" else "relaxed"
        if not geometric:
            raise ModelError(
                f"{OWNER}: quartic={quartic!r} asks for the quartic strain energy, but geometric=False skips the "
                "geometric stiffness G it completes (the cubic term; the relaxed quartic also corrects G). "
                "Pass geometric=True to keep both, or quartic=False for a body without either."
            )
        return mode
    if quartic is False or quartic is None:
        return None
    raise ModelError(
        f"{OWNER}: `quartic` = {quartic!r}; use True or 'relaxed' (quartic energy relaxed over the FE "
        "displacements outside the basis, the default with geometric=True), 'raw' (energy of the reduced field "
        "alone) or False."
    )


def check_option_pairs(*, interfaces: Any, method: str, reference: Any, interface_kind: str,
                       static_modes: Any) -> None:
    """Refuse options that the chosen reduction cannot use.

    * a named ``reference`` interface with free-free modes (the floating frame is then the mean
      axes: only ``reference="first"`` (the default) or None fit);
    * ``static_modes`` without Craig-Bampton (attachment modes need interface frames);
    * ``interface_kind`` other than the default "rigid" without interfaces (nothing to couple);
    * ``method="craig-bampton"`` without interfaces.
    """
    craig_bampton = bool(interfaces) and method != "free-free"
    if method == "craig-bampton" and not interfaces:
        raise ModelError(f"{OWNER}: method='craig-bampton' needs `interfaces` (node sets of the joints); pass "
                         "interfaces=[...] or method='free-free'.")
    if not craig_bampton and reference not in ("first", None):
        why = "method='free-free'" if interfaces else "no `interfaces`"
        raise ModelError(
            f"{OWNER}: reference={reference!r} with {why}: free-free modes have a mean-axis floating frame, "
            "not a reference interface. Use method='craig-bampton' (with the interfaces) to attach the frame to "
            f"{reference!r}, or drop `reference`."
        )
    if static_modes is not None and not craig_bampton:
        raise ModelError(f"{OWNER}: `static_modes` (attachment modes) need Craig-Bampton interfaces; pass "
                         "`interfaces` (and not method='free-free'), or drop static_modes.")
    if not interfaces and interface_kind != "rigid":
        raise ModelError(f"{OWNER}: interface_kind={interface_kind!r} without `interfaces`: there is no interface "
                         "to couple; pass interfaces=[...] or drop interface_kind.")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_mesh_argument(mesh: Any) -> None:
    """``mesh`` must be an FEMesh: a path gets the call that reads it."""
    from flexmb.fe.mesh.femesh import FEMesh

    if isinstance(mesh, FEMesh):
        return
    if isinstance(mesh, (str, Path)):
        raise ModelError(f"{OWNER}: mesh={str(mesh)!r} is a path, not a mesh; read it first: "
                         f"mesh = flexmb.read_mesh({str(mesh)!r}, materials=flexmb.Material(E, nu, rho)), then pass mesh")
    raise ModelError(f"{OWNER}: mesh={_shown(mesh)} ({type(mesh).__name__}) is not an FEMesh; give one from "
                     "flexmb.read_mesh(path) or flexmb.structured_box(...)")


def check_n_modes(n_modes: Any, craig_bampton: bool) -> int:
    """``n_modes`` as an int: >= 1 for free-free modes, >= 0 for Craig-Bampton (0: static modes only)."""
    least = 0 if craig_bampton else 1
    ok = isinstance(n_modes, numbers.Integral) and not isinstance(n_modes, bool)
    if not ok or n_modes < least:
        why = ("fixed-interface modes of a Craig-Bampton body (0 keeps the static interface modes only)" if craig_bampton
               else "elastic free-free modes (without interfaces a body needs at least one)")
        kind = "a string" if isinstance(n_modes, str) else f"a {type(n_modes).__name__}" if not ok else "too small"
        raise ModelError(f"{OWNER}: n_modes={_shown(n_modes)} is {kind}; give an integer >= {least}, the number of {why}")
    return int(n_modes)


def check_materials(materials: Any) -> None:
    """None, a Material, or a dict of element-set name -> Material."""
    from flexmb.fe.mesh.femesh import Material

    if materials is None or isinstance(materials, Material):
        return
    if isinstance(materials, Mapping) and all(isinstance(k, str) and isinstance(v, Material) for k, v in materials.items()):
        return
    raise ModelError(f"{OWNER}: materials={_shown(materials)} ({type(materials).__name__}) is not a material; give "
                     "flexmb.Material(E, nu, rho) for the whole mesh, or a dict {element set name: Material}")


def check_interfaces(interfaces: Any, mesh: Any) -> None:
    """None, a node-set name, an Interface, a sequence of them, or a dict name -> node set / Interface;
    node-set names must exist in the mesh (checked before any assembly)."""
    from flexmb.fe.reduction.interfaces import Interface

    if interfaces is None or isinstance(interfaces, Mapping):
        return
    items = [interfaces] if isinstance(interfaces, (str, Interface)) else interfaces
    if not isinstance(items, Sequence) or not all(isinstance(i, (str, Interface)) for i in items):
        raise ModelError(f"{OWNER}: interfaces={_shown(interfaces)} must be node-set names (or Interface objects), "
                         "e.g. interfaces=['root', 'tip']")
    known = getattr(mesh, "node_sets", {}) or {}
    missing = [i for i in items if isinstance(i, str) and i not in known]
    if missing:
        raise ModelError(f"{OWNER}: interface node set(s) {missing} are not in the mesh; known sets: "
                         f"{sorted(known) or 'none'} (give one of them, or add one with mesh.with_node_set(name, idx))")


def check_damping(damping: Any) -> None:
    """None, a ratio >= 0, ratios (nm,), or a dict {'ratio': z} / {'rayleigh': (alpha, beta)}."""
    fix = "give a damping ratio >= 0 (e.g. 0.02), one ratio per mode, {'ratio': z} or {'rayleigh': (alpha, beta)}"
    if damping is None:
        return
    if isinstance(damping, Mapping):
        unknown = set(damping) - {"ratio", "rayleigh"}
        if unknown:
            raise ModelError(f"{OWNER}: damping keys {sorted(unknown)} are unknown; {fix}")
        values = list(damping.values())
    else:
        values = [damping]
    for v in values:
        try:
            a = None if isinstance(v, (str, bytes)) else np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ModelError(f"{OWNER}: damping={_shown(damping)} is not a non-negative finite number or array; {fix}")


def check_arguments(*, mesh: Any, interfaces: Any, n_modes: Any, interface_kind: Any, reference: Any, method: Any,
                    damping: Any, materials: Any, flags: dict[str, Any], name: Any, backend: Any,
                    basis_transform: Any) -> int:
    """Every argument of :func:`build_flexible_body` checked before any assembly; returns ``n_modes``.

    ``flags``: the boolean options by name (geometric, preloads, stresses, allow_unassembled).
    """
    check_mesh_argument(mesh)
    if not (isinstance(method, str) and method in ("auto", "craig-bampton", "free-free")):
        raise ModelError(f"{OWNER}: method={_shown(method)}; use 'auto', 'craig-bampton' or 'free-free'")
    if not (isinstance(interface_kind, str) and interface_kind in ("rigid", "average")):
        raise ModelError(f"{OWNER}: interface_kind={_shown(interface_kind)}; use 'rigid' (RBE2-like) or 'average' "
                         "(RBE3-like)")
    if reference is not None and not isinstance(reference, str):
        raise ModelError(f"{OWNER}: reference={_shown(reference)} must be 'first', an interface name or None")
    for key, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise ModelError(f"{OWNER}: {key}={_shown(value)} must be True or False")
    if name is not None and not (isinstance(name, str) and name):
        raise ModelError(f"{OWNER}: name={_shown(name)} must be a non-empty string (the body label) or None")
    if not (isinstance(backend, str) and backend in ("auto", "cholmod", "splu")):
        raise ModelError(f"{OWNER}: backend={_shown(backend)}; use 'auto', 'cholmod' or 'splu'")
    if basis_transform is not None and not callable(basis_transform):
        raise ModelError(f"{OWNER}: basis_transform={_shown(basis_transform)} must be a callable "
                         "f(basis, K, M, mesh) -> ModalBasis, or None")
    check_materials(materials)
    check_interfaces(interfaces, mesh)
    check_damping(damping)
    return check_n_modes(n_modes, bool(interfaces) and method != "free-free")


def refuse_grounded_springs(mesh) -> None:
    """ModelError for springs to ground (SPRING1, CELAS with one node, ``Springs.nodes[:, 1] == -1``) in
    the mesh of a flexible body: the body's FE model lives in its floating frame, where "ground"
    would be that moving frame (a silently wrong support) and a free-free reduction finds fewer
    than six rigid-body modes. The message names the springs and the fix."""
    springs = getattr(mesh, "springs", None)
    if springs is None:
        return
    grounded = np.flatnonzero(np.asarray(springs.nodes)[:, 1] < 0)
    if grounded.size:
        ids = ", ".join(str(int(i)) for i in np.asarray(springs.ids)[grounded][:5])
        raise ModelError(
            f"build_flexible_body: {mesh.source or 'the mesh'} has {grounded.size} spring(s) to ground (ids {ids}"
            f"{', ...' if grounded.size > 5 else ''}): a flexible body's FE model floats with the body, it has no "
            "ground. Remove them from the mesh and model the mount as a force element between the body's interface "
            "and the ground (or another body) in the multibody model.")
