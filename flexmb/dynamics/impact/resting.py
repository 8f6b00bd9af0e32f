"""Resting contacts as constraint rows of the time element (issue 21, "persistent contact").

A plane contact (sphere-plane or point-plane, the plane on the ground or on a body, the sphere's
centre on a body or an interface) is compiled with the model as a hidden joint
:class:`ContactRow` named ``"contact:<name>"``: frame A on the plane, its origin lifted by the radius
along the normal and its z axis the normal; frame B at the sphere's centre.  Its relative position
component ``s_z`` is the gap ``g = n . (x_b - x_a) - r``.  ``s_z`` is the row's one constraint equation in the model's
full set (``cm.jnt_constrained``), a *switched* one
(:attr:`~flexmb.dynamics.node.selection.Selection.switched`: never dropped nor judged as redundant).  The
run's :class:`~flexmb.dynamics.node.selection.Selection` drops it while the contact is open (every
component of the row free with a zero law: no reaction, the row only follows the motion; every row at
the start) and keeps it while the contact *rests* (``g = 0`` at the element's constraint points, the end
node included), its reaction ``Qbar_z`` (the normal force on the sphere, frame A = the plane's normal,
N) then a primary unknown of the element like every joint reaction.  The switch is :func:`switch_rows`
(the one place where a contact changes the run's selection: ``run.select``).

After every element with a resting row the reaction is checked (:func:`row_reactions`,
:func:`end_reaction`): at the Gauss points and extrapolated to the element's end.  A compressive reaction
keeps the row; one that would pull (below ``-qtol``) is a *lift-off*: the element is re-solved from its
start to the length where the end reaction crosses zero (regula falsi on the element length,
:meth:`flexmb.dynamics.impact.march.EventMonitor`), the node is committed and the row switched off.

Friction (``mu > 0``) on a resting row: Coulomb at the nodes (:func:`tangential_hold`), the tangential
impulse bounded by ``mu`` times the row's normal impulse over the element that ended there (Moreau's
time stepping for the tangential part; the normal one is the row's, inside the element).

Not rows (they keep the node hold of :mod:`flexmb.dynamics.impact.march`, ``v_n+ >= -g / h`` at every
node): sphere-sphere contacts (their normal turns with the centres: not one component of a joint),
planes on an interface of a flexible body (an attachment frame on an interface sits at the interface
point: no radius offset), contacts at FE node sets (``nodes=``: one contact point per node, a row each
would need a node attachment per point), sides on the plain frame of a flexible body with modes (a joint
there must name an interface).  ``docs/theory.md`` section 13.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.layout import JQ
from flexmb.errors import ModelError
from flexmb.model.flexible import joint_needs_interface
from flexmb.model.frames import Frame
from flexmb.model.model import Joint
from flexmb.model.model import _frame_from_axes  # noqa: PLC2701 (a joint's frame from its axis: the one construction)

#: the gap's component of a contact row (s_z: frame A's z is the plane's normal)
ROW = 2
#: prefix of a contact row's joint name
PREFIX = "contact:"


@dataclass(frozen=True)
class ContactRow(Joint):
    """The hidden joint of a plane contact: every component free (ideal, zero law) while the contact is
    open; ``s_z`` (the gap) constrained while it rests (:func:`switch_rows`)."""

    kind = "contact"
    constrained = (False, False, True, False, False, False)  # the gap (ROW), kept while the contact rests
    #: its equation is switched by the impact stage (flexmb.dynamics.node.selection: never redundant)
    switched = True


def takes_row(model, contact) -> bool:
    """Whether ``contact`` of ``model`` rests as a constraint row (module doc): a plane, not on an interface,
    not at FE nodes, each side where a joint may attach (:func:`~flexmb.model.flexible.joint_needs_interface`: on a
    flexible body with modes only at an interface; a contact may sit on its plain frame, a joint not)."""
    if not contact.plane or isinstance(contact.body_a, tuple) or contact.nodes is not None:
        return False
    # the plain frame of a flexible body with modes takes no joint: such a contact keeps the node hold
    return not any(joint_needs_interface(model, side) for side in (contact.body_a, contact.body_b))


def with_contact_rows(model):
    """``model`` with a :class:`ContactRow` appended to its joints for every contact that
    :func:`takes_row` (the model itself when there is none)."""
    rows, taken = [], {j.name for j in model.joints}
    for c in model.contacts:
        if not takes_row(model, c):
            continue
        if PREFIX + c.name in taken:
            raise ModelError(f"Contact {c.name!r}: its resting row is the joint {PREFIX + c.name!r}, a name a joint of "
                             f"the model already has; rename that joint or the contact (or run with "
                             f"SimulationOptions(resting='node'))")
        n = np.asarray(c.normal, dtype=float)
        A = _frame_from_axes(n, None, kind=ContactRow.kind)  # z = n, as a joint given by its axis
        rows.append(ContactRow(PREFIX + c.name, c.body_a, c.body_b, frame_a=Frame(c.point_a + c.radius * n, A),
                               frame_b=Frame(c.point_b)))
    return replace(model, joints=tuple(model.joints) + tuple(rows)) if rows else model


def row_joints(cm) -> NDArray:
    """``(n_contacts,)``: the joint index of each of the model's contacts' row in the compiled model, -1
    where it has none (a contact's points: index it with ``ContactSet.owner``)."""
    index = {jt.name: j for j, jt in enumerate(cm.model.joints) if isinstance(jt, ContactRow)}
    return np.array([index.get(PREFIX + c.name, -1) for c in cm.model.contacts], dtype=np.int64)


def row_labels(joints: NDArray) -> list:
    """The constraint labels ``(joint, ROW)`` of the contact rows ``joints``."""
    return [(int(j), ROW) for j in np.asarray(joints, dtype=np.int64)]


def switch_rows(run, joints: NDArray, on: bool) -> None:
    """Switch the contact rows of ``joints`` on (the gap held) or off (free) in ``run``: its selection
    keeps or drops their gap equations (``run.select``, which rebuilds the element's Jacobian pattern
    and index records, as after a re-selection).  The one place where a contact changes the kept
    constraint equations."""
    joints = np.asarray(joints, dtype=np.int64)
    sel = run.selection
    if not joints.size or np.all(sel.constrained[joints, ROW] == on):
        return
    labels = row_labels(joints)
    run.select(sel.changed(keep=labels) if on else sel.changed(drop=labels))


def rows_held(sel, joints: NDArray):
    """The selection ``sel`` with the contact rows ``joints`` kept: the node reactions of a run are
    recovered from the element impulses with the rows held, since a row that was switched off during
    the run carried its reaction before (while open its impulse is zero)."""
    return sel.changed(keep=row_labels(joints))


def tangential_hold(cm, st, w: NDArray, T: NDArray, mu_pn: NDArray, sel=None) -> tuple[NDArray, NDArray]:
    """Coulomb friction at a node for resting rows: the tangential impulses ``P (k, 2)`` with ``|P_c| <= cap_c``
    (``mu_pn (k,)``: ``mu`` times the row's normal impulse over the element that ended here) that stop the
    slip ``T w`` (``T (k, 2, nv)``, the contacts' tangential rows) or oppose it at the cone's edge, and the
    velocities after them (projected: the rows hold the normal).  Block Gauss-Seidel over the contacts on
    the tangential Delassus matrix ``W = T dPi M^-1 T^T`` (:func:`~.solve.delassus`); per contact the 2 x 2
    problem exactly (:func:`disk_block`); ``sel``: the run's kept joint constraints.  Returns ``(w+, P)``."""
    from flexmb.dynamics.impact.solve import delassus, projected
    from flexmb.dynamics.node.constraints import node_velocities

    k = T.shape[0]
    Tf = T.reshape(2 * k, cm.nv)
    v = Tf @ w
    P = np.zeros(2 * k)
    if not np.any(v) or not np.any(mu_pn > 0):
        return w, P.reshape(k, 2)
    W = delassus(cm, st, Tf, w, sel)
    for _ in range(500):
        last = P.copy()
        for c in range(k):
            s = slice(2 * c, 2 * c + 2)
            P[s] = disk_block(W[s, s], v[s] + W[s] @ P - W[s, s] @ P[s], mu_pn[c])
        if np.abs(P - last).max() <= 1e-14 * max(np.abs(P).max(), 1e-300):
            break
    return projected(cm, st, w + node_velocities(cm, st, Tf.T @ P), sel)[0], P.reshape(k, 2)


def disk_block(W: NDArray, b: NDArray, cap: float) -> NDArray:
    """The tangential impulse ``(2,)`` of one contact with the Delassus block ``W (2, 2)``, the slip ``b
    (2,)`` without it and the bound ``|P| <= cap``: sticking ``W P = -b`` inside the disk, else sliding
    ``P = -cap s`` with the slip after it ``y = b + W P`` along ``s``.  The impacts' Coulomb block
    (:func:`~.friction.contact_block`) with a unit normal impulse decoupled from the tangential rows and
    ``mu = cap``: the one implementation of the sliding law."""
    from flexmb.dynamics.impact.friction import contact_block

    if cap <= 0.0 or not np.any(b):
        return np.zeros(2)
    W3 = np.zeros((3, 3))
    W3[0, 0], W3[1:, 1:] = 1.0, W
    return contact_block(W3, np.r_[-1.0, b], cap)[1:]


def row_reactions(lay, U: NDArray, joints: NDArray) -> NDArray:
    """``(k, p)``: the normal reactions ``Qbar_z`` [N] of the rows ``joints`` at the element's Gauss
    points (positive: pushing the sphere off the plane)."""
    return lay.joint_view(U)[np.asarray(joints, dtype=np.int64), :, JQ + ROW]


def pull_values(te, Q: NDArray, before: NDArray) -> NDArray:
    """``(k, n)``: the values of the rows' reactions [N] that must not pull (any below ``-qtol``: a
    lift-off).  p >= 2: the Gauss-point values ``Q (k, p)`` and their Lagrange polynomial at the element's
    end.  p = 1: the reaction at the element's *start* node, the mean of this element's value and the
    last one's ``before (k,)`` (NaN: none, this one's): the midpoint rule's element values oscillate
    about the reaction by a constant +-eps after a row is switched on (the start node's momentum gauge
    holds no reaction impulse), which the mean of two neighbours removes; the end is not known to better
    than eps (0.17 N in 4.9 N on the table of tests/test_resting.py), so p = 1 finds a lift-off at the
    node after it, one element late at most."""
    if te.p == 1:
        return np.where(np.isfinite(before), 0.5 * (Q[:, 0] + before), Q[:, 0])[:, None]
    c = te.c
    L = np.array([np.prod([(1.0 - c[m]) / (c[i] - c[m]) for m in range(te.p) if m != i]) for i in range(te.p)])
    return np.concatenate([Q, (Q @ L)[:, None]], axis=1)


def first_pull(te, Q: NDArray, before: NDArray) -> NDArray:
    """``(k,)``: where each pulling row's reaction first goes below zero, as a fraction ``tau`` of the
    element (0: at its start; inf: not within it): the root of the polynomial of degree p - 1 through the
    Gauss-point values ``Q (k, p)`` (p >= 2; the element's own polynomial, like the gap's Hermite cubic
    of an impact: a short element re-solved from the same start would not do, its Gauss values carry
    the start node's momentum gauge, an impulse of order ``Q h / 2`` whatever its length); p = 1: 0 where
    the start node's value (:func:`pull_values`) pulls."""
    k = Q.shape[0]
    if te.p == 1:
        return np.where(pull_values(te, Q, before)[:, 0] < 0.0, 0.0, np.inf)
    out = np.full(k, np.inf)
    for i in range(k):
        coef = np.polyfit(te.c, Q[i], te.p - 1)
        if np.polyval(coef, 0.0) < 0.0:
            out[i] = 0.0
            continue
        r = np.roots(coef)
        r = np.sort(r[np.isreal(r)].real)
        r = r[(r >= 0.0) & (r <= 1.0) & (np.polyval(np.polyder(coef), r) <= 0.0)] if r.size else r
        out[i] = r[0] if r.size else (1.0 if np.polyval(coef, 1.0) < 0.0 else np.inf)
    return out
