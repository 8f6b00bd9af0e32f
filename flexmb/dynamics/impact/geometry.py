"""Where contacts and prescribed impulses sit on the bodies, and how they see the body velocities.

Both are attachments (:class:`~flexmb.dynamics.elements.attachments.AttachmentSet`, the one bridge
between bodies and the elements acting on them, any body type): a contact's side is attached at its
plane's point or sphere's centre (on a flexible body: the interface point, moving with the modes),
an impulse at its point.  At a node the attachments give ``x (m, 3)``, ``R (m, 3, 3)`` and the
velocity maps ``nu = (v, omega) = B w[cols]`` (inertial components).

*Contact points*: a contact with ``nodes`` (FE nodes of a flexible body on side b) is one contact point
per node, each an attachment at the node's undeformed point ``X_n`` whose modal map is the node's
mode-shape rows ``(Phi_n; 0)`` (:class:`NodeSite`), so that it sits at ``x + R (X_n + Phi_n q)`` and moves
with ``v + omega x R (X_n + Phi_n q) + R Phi_n q'``: the same attachment machinery as an interface, no
rotation of the node (none is needed for a point or a sphere's normal).  Every array of a
:class:`ContactSet` runs over the contact points (``m``; ``owner (m,)`` the contact, ``node (m,)`` the
node or -1), so that the gaps, the normal rows, the events and the resting state are per node, all
evaluated in one batched call.

Contact point ``k`` (``m`` points), unit normal ``n_k`` from side a to side b:

* sphere/point - plane: ``n = R_a n_a``, ``g = n . (x_b - x_a) - r_b``, the contact point
  ``c = x_b - r_b n``;
* sphere - sphere: ``n = (x_b - x_a) / |x_b - x_a|``, ``g = |x_b - x_a| - r_a - r_b``, ``c = x_a + r_a n``.

The normal velocity is ``v_n = n . (v_b + omega_b x l_b - v_a - omega_a x l_a) = J_k w`` with the
levers ``l = c - x`` of each side; the row ``J_k (nv,)`` is ``B_b^T (n, l_b x n)`` on b's columns minus
``B_a^T (n, l_a x n)`` on a's, and ``J^T P`` is the generalized impulse of normal impulses ``P (m,)``
(equal and opposite forces ``P n`` on b and ``-P n`` on a at the contact point).

Friction (``mu > 0``): two tangential rows per contact from the same levers, ``T_kj w = t_j . (relative
velocity of the contact points)`` with the tangent basis ``t_1 = (e_i - n_i n) / |..|`` (``e_i`` the
inertial axis least aligned with ``n``), ``t_2 = n x t_1``; the sphere's radius enters through the lever
``l_b = -r_b n``, so that the slip includes ``omega_b x l_b`` (a rolling sphere has zero slip).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.elements.attachments import AttachmentSet
from flexmb.model.contacts import contact_nodes
from flexmb.model.flexible import site_frame
from flexmb.model.frames import Frame
from flexmb.rotations.so3 import cross

#: kind codes of the compiled contacts
PLANE, SPHERES = 0, 1


@dataclass(frozen=True)
class NodeSite:
    """An attachment at FE node ``node`` of a flexible body: its undeformed point ``position (3,)`` [m]
    (body frame) and ``modal_map (6, nm)``: the node's mode-shape rows ``Phi_n`` [m per unit modal
    coordinate] over zero rotation rows (the body type reads it as it reads an interface's)."""

    node: int
    position: NDArray
    modal_map: NDArray


def contact_points(model) -> tuple[NDArray, NDArray]:
    """``(owner (m,), node (m,))``: the contact points of the model's contacts, in contact order: one per
    contact, or one per node of a contact with ``nodes`` (``node`` -1 for the others)."""
    owner, node = [], []
    for k, c in enumerate(model.contacts):
        idx = contact_nodes(model, c)
        idx = np.array([-1]) if idx is None else idx
        owner.append(np.full(idx.size, k, dtype=np.int64))
        node.append(idx)
    if not owner:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(owner), np.concatenate(node).astype(np.int64)


def point_label(model, k: int, points: tuple | None = None) -> str:
    """``"'floor'"`` or ``"'floor' at node 17"``: contact point ``k`` named for a message."""
    owner, node = contact_points(model) if points is None else points
    name = repr(model.contacts[int(owner[k])].name)
    return name if node[k] < 0 else f"{name} at node {int(node[k])}"


def _attachments(cm, sides, points, sites=None) -> AttachmentSet:
    """An :class:`AttachmentSet` at ``points`` (body frames; the ground: inertial) of ``sides`` (body
    names, ``(body, interface)`` or ``"ground"``), the interface sides at their interface point;
    ``sites``: a :class:`NodeSite` (or None) per entry, the entry then at its node."""
    model = cm.model
    body, pts, out = [], [], []
    for k, (side, p) in enumerate(zip(sides, points)):
        i = model.body_index(side)
        body.append(cm.nb if i < 0 else i)
        if sites is not None and sites[k] is not None:
            pts.append(sites[k].position)
            out.append(sites[k])
            continue
        fr = site_frame(model, side, Frame(p))
        pts.append(fr.origin)
        out.append(fr.site)
    has_site = any(s is not None for s in out)
    return AttachmentSet(cm, np.array(body, dtype=np.int64), np.array(pts, dtype=float).reshape(-1, 3), None,
                         out if has_site else None)


def _node_sites(model, owner: NDArray, node: NDArray) -> list:
    """A :class:`NodeSite` per contact point on FE nodes (None for the others)."""
    sites = [None] * owner.size
    for k in np.nonzero(node >= 0)[0]:  # set-up only
        data = model.bodies[model.body_index(model.contacts[int(owner[k])].body_b)].data
        n = int(node[k])
        phi = np.asarray(data.mode_shapes[n], dtype=float)
        sites[k] = NodeSite(n, np.asarray(data.points[n], dtype=float), np.vstack([phi, np.zeros_like(phi)]))
    return sites


def rows(cm, B: NDArray, cols: NDArray, width: NDArray, wrench: NDArray) -> NDArray:
    """``(m, nv)``: row ``k`` is ``B_k^T wrench_k`` on its body's columns (zero on the ground): the
    generalized force of a wrench ``(m, 6)`` (force; moment at the attachment; inertial) and, read as
    a row, the rate ``wrench_k . nu_k`` of the attachment's velocity."""
    m = wrench.shape[0]
    out = np.zeros((m, cm.nv))
    if m == 0:
        return out
    g = np.einsum("kic,ki->kc", B, wrench)  # (m, cw)
    used = np.arange(B.shape[2])[None, :] < width[:, None]
    k = np.broadcast_to(np.arange(m)[:, None], used.shape)
    out[k[used], cols[used]] = g[used]  # a body's columns are distinct: each (row, column) once
    return out


class ContactSet:
    """The model's contacts compiled as ``m`` contact points (module doc): both sides' attachments,
    kinds, radii, plane normals in side a's frame ``normal_a (m, 3)``, restitution ``e (m,)``, friction
    ``mu (m,)``, the contact's name ``names (m,)``, the contact ``owner (m,)`` and the FE node ``node (m,)``
    (-1: not at a node)."""

    def __init__(self, cm):
        model = cm.model
        contacts = model.contacts
        self.owner, self.node = contact_points(model)
        self.m = self.owner.size
        per = [contacts[int(k)] for k in self.owner]
        self.names = tuple(c.name for c in per)
        self.kind = np.array([PLANE if c.plane else SPHERES for c in per], dtype=np.int64)
        self.r_a = np.array([c.radius_a for c in per], dtype=float)
        self.r_b = np.array([c.radius for c in per], dtype=float)
        self.normal_a = np.array([c.normal for c in per], dtype=float).reshape(-1, 3)
        self.e = np.array([c.restitution for c in per], dtype=float)
        self.mu = np.array([c.friction for c in per], dtype=float)
        if self.m:
            self.att_a = _attachments(cm, [c.body_a for c in per], [c.point_a for c in per])
            self.att_b = _attachments(cm, [c.body_b for c in per], [c.point_b for c in per],
                                      _node_sites(model, self.owner, self.node) if np.any(self.node >= 0) else None)

    def label(self, model, k: int) -> str:
        """Contact point ``k`` named for a message (:func:`point_label`)."""
        return point_label(model, k, (self.owner, self.node))

    def geometry(self, cm, st):
        """At node ``st``: gaps ``g (m,)`` [m], unit normals ``n (m, 3)``, the frames of both sides
        ``(x, R, B, cols, width)`` and the levers ``l_a, l_b (m, 3)`` to the contact point."""
        xa, Ra, Ba, ca, wa = self.att_a.node_frames(cm, st)
        xb, Rb, Bb, cb, wb = self.att_b.node_frames(cm, st)
        d = xb - xa
        dist = np.linalg.norm(d, axis=1)
        plane = self.kind == PLANE
        n = np.where(plane[:, None], np.einsum("kij,kj->ki", Ra, self.normal_a),
                     d / np.where(dist > 0, dist, 1.0)[:, None])
        g = np.where(plane, np.einsum("ki,ki->k", n, d) - self.r_b, dist - self.r_a - self.r_b)
        c = xb - self.r_b[:, None] * n  # the contact point (on the plane / between the spheres)
        return g, n, (xa, Ra, Ba, ca, wa), (xb, Rb, Bb, cb, wb), c - xa, c - xb

    def normal_rows(self, cm, st, idx: NDArray | None = None):
        """``(g, J)``: the gaps ``(m,)`` and the normal-velocity rows ``J (k, nv)`` of the contacts ``idx``
        (all when None)."""
        g, n, fa, fb, la, lb = self.geometry(cm, st)
        idx = np.arange(self.m) if idx is None else np.asarray(idx, dtype=np.int64)
        return g, _relative_rows(cm, fa, fb, la, lb, idx, n[idx])

    def tangent_rows(self, cm, st, idx: NDArray):
        """``(T, t)``: the tangential-velocity rows ``T (k, 2, nv)`` of the contacts ``idx`` (the slip of
        the contact points along ``t_1``, ``t_2``) and the tangent basis ``t (k, 2, 3)`` (inertial)."""
        g, n, fa, fb, la, lb = self.geometry(cm, st)
        idx = np.asarray(idx, dtype=np.int64)
        t = tangent_basis(n[idx])
        T = np.stack([_relative_rows(cm, fa, fb, la, lb, idx, t[:, j]) for j in range(2)], axis=1)
        return T.reshape(len(idx), 2, cm.nv), t


def tangent_basis(n: NDArray) -> NDArray:
    """``(k, 2, 3)``: unit tangents ``t_1``, ``t_2 = n x t_1`` of the unit normals ``n (k, 3)``, ``t_1`` the
    inertial axis least aligned with ``n`` made orthogonal to it (a floor ``n = e_y`` gets ``t_1 = e_x``)."""
    k = n.shape[0]
    axis = np.zeros((k, 3))
    axis[np.arange(k), np.argmin(np.abs(n), axis=1)] = 1.0
    t1 = axis - np.einsum("ki,ki->k", axis, n)[:, None] * n
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([t1, np.cross(n, t1)], axis=1)


def _relative_rows(cm, fa, fb, la, lb, idx: NDArray, d: NDArray) -> NDArray:
    """``(k, nv)``: rows of ``d . (v_cb - v_ca)`` for the contacts ``idx``, the directions ``d (k, 3)``
    (inertial), the contact point moving with each side (levers ``la``, ``lb``)."""
    Jb = rows(cm, fb[2][idx], fb[3][idx], fb[4][idx], np.concatenate([d, cross(lb[idx], d)], axis=1))
    if not fa[4][idx].any():  # side a on the ground (a floor): no columns
        return Jb
    return Jb - rows(cm, fa[2][idx], fa[3][idx], fa[4][idx], np.concatenate([d, cross(la[idx], d)], axis=1))


class ImpulseSet:
    """The model's prescribed impulses compiled: their attachments, times ``t (m,)``, wrenches in
    their given components ``(m, 6)`` and whether those are body components ``body (m,)``."""

    def __init__(self, cm):
        imp = cm.model.impulses
        self.m = len(imp)
        self.t = np.array([i.time for i in imp], dtype=float)
        self.wrench = np.array([np.r_[i.impulse, i.couple] for i in imp], dtype=float).reshape(-1, 6)
        self.body = np.array([i.frame == "body" for i in imp], dtype=bool)
        self.names = tuple(i.name or f"impulse #{k}" for k, i in enumerate(imp))
        if self.m:
            self.att = _attachments(cm, [i.body for i in imp], [i.point for i in imp])

    def generalized(self, cm, st, idx: NDArray) -> NDArray:
        """The generalized impulse ``(nv,)`` of the impulses ``idx`` at node ``st``."""
        idx = np.asarray(idx, dtype=np.int64)
        if not idx.size:
            return np.zeros(cm.nv)
        x, R, B, cols, width = self.att.node_frames(cm, st)
        W = self.wrench[idx].copy()
        turn = self.body[idx]
        if turn.any():
            Rk = R[idx][turn]
            W[turn, :3] = np.einsum("kij,kj->ki", Rk, W[turn, :3])
            W[turn, 3:] = np.einsum("kij,kj->ki", Rk, W[turn, 3:])
        return rows(cm, B[idx], cols[idx], width[idx], W).sum(axis=0)
