"""Flexible-body outputs of a :class:`~flexmb.results.solution.Solution`: the displacement and motion of FE
node sets, the deflection of a point from the chord between two interfaces, and per-body elastic and
kinetic energies.  Used by :class:`~flexmb.results.views.BodyView` (``nodes``, ``chord_deflection``,
``elastic_energy``, ``kinetic_energy``); the body view must know its model element (the
:class:`~flexmb.model.flexible.FlexibleBody` that was simulated, see :meth:`Solution.attach`).

Conventions (the floating frame of reference, :mod:`flexmb.model.flexible`): a node with undeformed
position ``X0`` in the body frame moves to ``x + R (X0 + Phi_t q)``, where ``x`` and ``R`` are the
floating frame's origin and rotation (``BodyView.position``, ``.rotation``), ``Phi_t`` the node's
rows of the mode shapes (``FlexibleBodyData.mode_shapes``) and ``q`` the modal coordinates
(``BodyView.modal``).  The elastic displacement ``u = Phi_t q`` is the displacement relative to the
floating frame (zero at the reference interface of Craig-Bampton data).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError

__all__ = ["NodeSetView", "body_kinetic_energy", "check_model", "chord_angle", "chord_deflection", "elastic_energy",
           "flexible_element", "modal_chord_deflection", "node_set", "resolve_nodes"]

#: default snapping tolerance of points to nodes, relative to the mesh's bounding-box diagonal
SNAP_TOL = 1e-6
#: shortest chord between two interface points, relative to the mesh's bounding-box diagonal
CHORD_MIN = 1e-9
#: smallest sine of the angle between ``axis`` and the chord: closer to the chord, the direction
#: ``axis x chord`` turns fast with the chord and the signed deflection means nothing (5.7 deg)
AXIS_MIN_SIN = 0.1


class NodeSetView(NamedTuple):
    """Motion of a set of FE nodes of a flexible body at the output times.

    Attributes
    ----------
    body : str
    nodes : ndarray of int, shape (k,)
        Node indices into the body data's ``points`` (0-based; the data keeps only nodes of solid
        cells, in the mesh's order).
    reference : ndarray, shape (k, 3)
        Undeformed node positions ``X0`` in the body frame [m].
    t : ndarray, shape (nt,)
        Output times [s].
    displacement : ndarray, shape (nt, k, 3)
        Elastic displacement ``u = Phi_t q`` in the body (floating) frame [m].
    displacement_inertial : ndarray, shape (nt, k, 3)
        The same vector in inertial components, ``R u`` [m].
    position : ndarray, shape (nt, k, 3)
        Deformed node positions in the inertial frame, ``x + R (X0 + u)`` [m].
    von_mises : ndarray, shape (nt, k), or None
        Von Mises stress of the linear modal stress [Pa] (solids: nodal average; shell and beam nodes:
        the largest of the surfaces and extreme fibres there, :meth:`FlexibleBodyData.von_mises`);
        None when the data has no stresses.
    """

    body: str
    nodes: NDArray[np.int64]
    reference: NDArray[np.float64]
    t: NDArray[np.float64]
    displacement: NDArray[np.float64]
    displacement_inertial: NDArray[np.float64]
    position: NDArray[np.float64]
    von_mises: NDArray[np.float64] | None = None


def flexible_element(view: Any, what: str):
    """The :class:`FlexibleBody` behind ``view`` (a BodyView), or a ModelError saying what is missing."""
    el = getattr(view, "element", None)
    if view.modal is None or (el is not None and not hasattr(el, "n_modes")):
        raise ModelError(f"{what}: body {view.name!r} is a rigid body; node sets, deflections and elastic "
                         f"energy exist for flexible bodies only")
    if el is None:
        raise ModelError(
            f"{what}: the solution does not know the FlexibleBodyData of body {view.name!r} (a solution read by "
            f"Solution.load, or made without its model, keeps only the modal coordinates): call "
            f"sol.attach(model) with the Model that was simulated (or pass model=...)")
    if el.n_modes != view.modal.shape[1]:
        raise ModelError(f"{what}: body {view.name!r} of the attached model has {el.n_modes} modes but the solution "
                         f"holds {view.modal.shape[1]} modal coordinates: attach the model that was simulated")
    return el


def resolve_nodes(data, nodes: Any = None, *, points: ArrayLike | None = None, tol: float | None = None,
                  what: str = "nodes") -> NDArray[np.int64]:
    """Node indices of ``data`` (a FlexibleBodyData) from one of:

    * ``nodes``: node indices (int or sequence, 0-based into ``data.points``), or the name of an
      interface (its node set), or None with ``points`` None (every node);
    * ``points (3,)`` or ``(k, 3)``: points in the body frame [m], snapped to the nearest node; a point
      farther than ``tol`` [m] from every node (default: 1e-6 of the mesh's bounding-box diagonal,
      i.e. the point must be a node) raises ModelError naming the point, the nearest node and its
      distance.
    """
    n = data.n_nodes
    if points is not None:
        if nodes is not None:
            raise ModelError(f"{what}: give nodes or points, not both")
        P = np.asarray(points, dtype=float)
        if P.ndim not in (1, 2) or P.shape[-1] != 3 or not np.all(np.isfinite(P)):
            raise ModelError(f"{what}: points={points!r} must be finite body-frame points of shape (3,) or (k, 3) [m]")
        P = P.reshape(-1, 3)
        X = np.asarray(data.points, dtype=float)
        from scipy.spatial import cKDTree

        dist, idx = cKDTree(X).query(P)
        diag = float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))
        lim = SNAP_TOL * diag if tol is None else float(tol)
        bad = np.flatnonzero(dist > lim)
        if bad.size:
            k = int(bad[0])
            raise ModelError(
                f"{what}: point {P[k].tolist()} [m] (body frame) is {dist[k]:.3g} m from the nearest node "
                f"{int(idx[k])} at {X[idx[k]].tolist()}, more than tol = {lim:.3g} m; pass tol= (metres) to snap "
                f"points to the nearest nodes")
        return idx.astype(np.int64)
    if nodes is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(nodes, str):
        names = [f.name for f in data.interfaces]
        if nodes not in names:
            raise ModelError(f"{what}: {nodes!r} is not an interface of body {data.name!r}; interfaces: {names} "
                             f"(or give node indices or points)")
        return np.asarray(data.interface(nodes).nodes, dtype=np.int64).reshape(-1)
    idx = np.asarray(nodes)
    if idx.dtype.kind not in "iu" or idx.ndim > 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= n:
        raise ModelError(f"{what}: nodes={nodes!r} must be integer node indices 0 .. {n - 1} of body "
                         f"{data.name!r}, an interface name, or points=")
    return idx.astype(np.int64).reshape(-1)


def node_set(view: Any, nodes: Any = None, *, points: ArrayLike | None = None, tol: float | None = None) -> NodeSetView:
    """See :meth:`flexmb.results.views.BodyView.nodes`."""
    el = flexible_element(view, f"body {view.name!r}: nodes")
    data = el.data
    idx = resolve_nodes(data, nodes, points=points, tol=tol, what=f"body {view.name!r}: nodes")
    X0 = np.asarray(data.points, dtype=float)[idx]
    u = np.einsum("kdm,tm->tkd", np.asarray(data.mode_shapes, dtype=float)[idx], view.modal)
    uI = np.einsum("tij,tkj->tki", view.rotation, u)
    pos = view.position[:, None, :] + np.einsum("tij,kj->tki", view.rotation, X0) + uI
    from flexmb.fe.reduction.modal_stress import nodal_von_mises

    return NodeSetView(view.name, idx, X0, view.t, u, uI, pos, nodal_von_mises(data, view.modal, idx))


def interface_point(data, name: str, q: NDArray) -> NDArray:
    """Body-frame position ``c + Phi_t q`` of interface ``name``'s point, ``q (nt, nm)`` -> ``(nt, 3)``."""
    f = data.interface(name)
    return np.asarray(f.position, dtype=float) + q @ np.asarray(f.modal_map, dtype=float)[:3].T


def chord_deflection(view: Any, point: Any, ends: tuple[str, str], axis: ArrayLike | None = None,
                     tol: float | None = None) -> NDArray[np.float64]:
    """See :meth:`flexmb.results.views.BodyView.chord_deflection`."""
    what = f"body {view.name!r}: chord_deflection"
    el = flexible_element(view, what)
    return modal_chord_deflection(el.data, view.modal, point, ends, axis, tol, what=what)


def _chord_ends(data, q: NDArray, ends: Any, what: str) -> tuple[NDArray, NDArray, NDArray]:
    """Body-frame points ``a, b`` (nt, 3) of the two interfaces ``ends`` at modal coordinates ``q``
    (nt, nm) and the chord length (nt,); ModelError for a bad pair or a chord of zero length."""
    if q.shape[1] != data.n_modes:
        raise ModelError(f"{what}: {q.shape[1]} modal coordinates for data {data.name!r} with {data.n_modes} modes")
    names = [f.name for f in data.interfaces]
    if not (isinstance(ends, (tuple, list)) and len(ends) == 2 and all(isinstance(e, str) for e in ends)):
        raise ModelError(f"{what}: ends={ends!r} must be two interface names, e.g. {tuple(names[:2])}")
    for e in ends:
        if e not in names:
            raise ModelError(f"{what}: {e!r} is not an interface; interfaces: {names}")
    if ends[0] == ends[1]:
        raise ModelError(f"{what}: ends={tuple(ends)!r} name one interface twice: a chord needs two interfaces, "
                         f"give two different ones of {names}")
    a, b = (interface_point(data, e, q) for e in ends)
    X = np.asarray(data.points, dtype=float)
    length = np.linalg.norm(b - a, axis=1)
    size = float(np.linalg.norm(X.max(axis=0) - X.min(axis=0))) if len(X) else 1.0
    if np.any(~(length > CHORD_MIN * size)):
        k = int(np.flatnonzero(~(length > CHORD_MIN * size))[0])
        raise ModelError(f"{what}: the points of interfaces {ends[0]!r} and {ends[1]!r} are {length[k]:.3g} m apart "
                         f"(at output {k}): no chord to measure from; give two interfaces apart on the body")
    return a, b, length


def _unit_axis(axis: Any, what: str, name: str = "axis") -> NDArray[np.float64]:
    try:
        n = None if isinstance(axis, (str, bytes)) else np.asarray(axis, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        n = None
    if n is None or n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) == 0:
        raise ModelError(f"{what}: {name}={axis!r} must be a non-zero finite vector (3,), e.g. (0, 0, 1)")
    return n / np.linalg.norm(n)


def chord_angle(view: Any, ends: tuple[str, str], axis: ArrayLike = (0.0, 0.0, 1.0),
                zero: ArrayLike | None = None) -> NDArray[np.float64]:
    """See :meth:`flexmb.results.views.BodyView.chord_angle`."""
    what = f"body {view.name!r}: chord_angle"
    el = flexible_element(view, what)
    a, b, _ = _chord_ends(el.data, np.atleast_2d(view.modal), ends, what)
    c = np.einsum("tij,tj->ti", view.rotation, b - a)  # the deformed chord in the view's frame
    n = _unit_axis(axis, what)
    if zero is None:
        zero = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
    z = _unit_axis(zero, what, "zero")
    e1 = z - (z @ n) * n
    if np.linalg.norm(e1) < AXIS_MIN_SIN:
        raise ModelError(f"{what}: zero={np.asarray(zero).tolist()} is along axis={np.asarray(axis).tolist()}; give a "
                         "zero direction across the axis (the angle is measured from it)")
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    x, y = c @ e1, c @ e2
    sin = np.hypot(x, y) / np.linalg.norm(c, axis=1)
    if np.any(sin < AXIS_MIN_SIN):
        k = int(np.argmin(sin))
        raise ModelError(f"{what}: the chord {ends[0]!r} -> {ends[1]!r} is {np.degrees(np.arcsin(min(sin[k], 1.0))):.3g} "
                         f"deg from axis={np.asarray(axis).tolist()} (at output {k}): its angle about that axis is not "
                         "defined; give the axis normal to the plane the chord turns in")
    return np.unwrap(np.arctan2(y, x))


def modal_chord_deflection(data, q: ArrayLike, point: Any, ends: tuple[str, str], axis: ArrayLike | None = None,
                           tol: float | None = None, *, what: str = "chord_deflection") -> NDArray[np.float64]:
    """Deflection of a node of ``data`` (FlexibleBodyData) from the chord between two interfaces,
    body frame, for modal coordinates ``q (nt, nm)``: :meth:`BodyView.chord_deflection` without a
    solution (``(nt, 3)``, or ``(nt,)`` signed along the unit vector of ``axis x chord`` when ``axis`` is
    given) [m].  ModelError for one interface named twice, interface points closer than
    ``CHORD_MIN`` of the mesh size, or an axis within ``arcsin(AXIS_MIN_SIN)`` of the chord."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    a, b, length = _chord_ends(data, q, ends, what)
    if isinstance(point, (int, np.integer)):
        idx = resolve_nodes(data, [int(point)], what=what)
    else:
        idx = resolve_nodes(data, points=point, tol=tol, what=what)
    if idx.size != 1:
        raise ModelError(f"{what}: point={point!r} must be one node index or one body-frame point (3,)")
    n = None if axis is None else _unit_axis(axis, what)
    p = np.asarray(data.points, dtype=float)[idx[0]] + q @ np.asarray(data.mode_shapes, dtype=float)[idx[0]].T
    e_hat = (b - a) / length[:, None]
    r = p - a
    d = r - np.einsum("ti,ti->t", r, e_hat)[:, None] * e_hat
    if n is None:
        return d
    side = np.cross(n, e_hat)
    sin = np.linalg.norm(side, axis=1)
    if np.any(sin < AXIS_MIN_SIN):
        k = int(np.argmin(sin))
        raise ModelError(
            f"{what}: axis={np.asarray(axis).tolist()} is {np.degrees(np.arcsin(min(sin[k], 1.0))):.3g} deg from the "
            f"chord {ends[0]!r} -> {ends[1]!r} (at output {k}): the direction axis x chord is not defined; give an "
            f"axis normal to the bending plane, across the chord (e.g. (0, 0, 1) for a rod along x bending in x-y)")
    return np.einsum("ti,ti->t", d, side / sin[:, None])


def elastic_energy(view: Any) -> NDArray[np.float64]:
    """See :attr:`flexmb.results.views.BodyView.elastic_energy`."""
    el = flexible_element(view, f"body {view.name!r}: elastic_energy")
    from flexmb.dynamics.bodies.modal import body_energies

    return body_energies(el, view.modal)[0]


def body_kinetic_energy(view: Any) -> NDArray[np.float64]:
    """See :attr:`flexmb.results.views.BodyView.kinetic_energy`."""
    el = getattr(view, "element", None)
    if el is None:
        raise ModelError(f"body {view.name!r}: kinetic_energy needs the body's mass properties: call "
                         f"sol.attach(model) with the Model that was simulated")
    if getattr(view, "frame", None) is not None:
        raise ModelError(f"body {view.name!r}: kinetic_energy of a view relative to {view.frame!r} (in_frame) is not the "
                         f"kinetic energy; take it from the inertial view sol.body({view.name!r})")
    R, v, w = view.rotation, view.velocity, view.angular_velocity
    Vb = np.einsum("tji,tj->ti", R, v)
    Wb = np.einsum("tji,tj->ti", R, w)
    if not hasattr(el, "n_modes"):  # rigid body: inertia about the centre of mass, body axes
        vc = Vb + np.cross(Wb, np.asarray(el.com, dtype=float))
        return 0.5 * el.mass * np.einsum("ti,ti->t", vc, vc) + 0.5 * np.einsum("ti,ij,tj->t", Wb, el.inertia, Wb)
    flexible_element(view, f"body {view.name!r}: kinetic_energy")
    from flexmb.dynamics.bodies.modal import body_energies

    W = np.concatenate([Vb, Wb, view.modal_rate], axis=1)
    return body_energies(el, view.modal, W)[1]


def check_model(sol: Any, model: Any) -> None:
    """ModelError unless ``model`` is a Model with the solution's bodies and modal sizes (:meth:`Solution.attach`)."""
    from flexmb.model.model import Model

    if not isinstance(model, Model):
        raise ModelError(f"Solution.attach: model={type(model).__name__} is not a flexmb Model; pass the Model "
                         f"that was simulated")
    names = tuple(b.name for b in model.bodies)
    if names != sol.body_names:
        raise ModelError(f"Solution.attach: the model's bodies {list(names)} are not the solution's "
                         f"{list(sol.body_names)}; pass the Model that was simulated")
    for b in model.bodies:
        q = sol.extra.get(f"modal/{b.name}")
        nm = getattr(b, "n_modes", None)
        if (nm is None) != (q is None) or (q is not None and q.shape[1] != nm):
            raise ModelError(f"Solution.attach: body {b.name!r} has {nm if nm is not None else 'no'} modes in the "
                             f"model but {'no' if q is None else q.shape[1]} modal coordinates in the solution; "
                             f"pass the Model that was simulated")
