"""Attachments: where a joint or force element sits on a body, how it moves, and how a wrench
applied there reaches the body's equations.  The only bridge between bodies and the elements
that act on them.

An *attachment* is a frame fixed to a body (for a flexible body: an interface frame that moves
with the body's deformation) or to the ground.  An :class:`AttachmentSet` holds ``n`` of them
(one per joint side, force element end, ...) and, batched over them and over the points of a
time element, answers three questions through the body type of each entry
(:mod:`flexmb.dynamics.bodies`):

``pose(ek, where)``
    inertial position ``x (n, k, 3)`` and orientation ``R (n, k, 3, 3)`` at the Gauss points
    (``where="gauss"``, ``k = p``) or at the constraint points (``"cons"``), with the Jacobian of
    the increment ``(dx, psi)`` (``psi``: left rotation increment, inertial components,
    ``dR = skew(psi) R``) with respect to the body's unknowns;
``velocity(ek)``
    ``nu = (v, omega) (n, p, 6)`` of the attachment at the Gauss points, with its Jacobian;
``scatter(ek, res, trip, wrench, target, terms)``
    a wrench ``(f, m) (n, p, 6)`` (force; moment about the attachment point; inertial) applied
    to the body there: the body type adds its generalized force to its rows (``target="force"``:
    the momentum balance, ``-h Q``; ``target="multiplier"``: the constitutive law of the
    modified momenta, ``-Q``), with the Jacobian of the map and, by the chain rule, of the
    wrench's own dependence on other unknowns (``terms``).

A Jacobian is a list of :class:`Jac` blocks, one per body type group present in the set: for the
entries ``mask`` served by that group, ``d(quantity) = J @ dU[cols]``.  :func:`chain` turns
``d(row)/d(quantity)`` into triplets.  Joint and force code use only this module; no joint code
reads a body's slots, and a new body type only implements the body-type contract.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import frozen, put_chain, scatter_wrench
from flexmb.dynamics.layout import Layout, Triplets

I3 = np.eye(3)


@dataclass
class Jac:
    """``d(quantity)[mask] = J @ dU[cols]``: ``cols (m, k, c)`` global unknown indices, ``J (m, k, 6, c)``."""

    mask: NDArray
    cols: NDArray
    J: NDArray
    #: True: ``mask`` is all True (one body group serves every entry; no copies by mask needed)
    whole: bool = False


@dataclass
class Pose:
    """Attachment frames at ``k`` points: ``x (n, k, 3)``, ``R (n, k, 3, 3)`` and the Jacobian of
    ``(dx, psi)``."""

    x: NDArray
    R: NDArray
    jac: list = field(default_factory=list)


@dataclass
class Velocity:
    """Attachment velocities ``nu = (v, omega) (n, p, 6)`` at the Gauss points and their Jacobian."""

    nu: NDArray
    jac: list = field(default_factory=list)


@dataclass
class ElementKin:
    """Everything an attachment needs to know about one evaluation of a time element: the time
    element ``te``, the length ``h``, the start state ``st``, the layout and each body group's
    unpacked unknowns ``groups[g]`` (the body type's own object)."""

    te: object
    h: float
    st: object
    lay: Layout
    groups: list
    t_gauss: NDArray
    t_cons: NDArray


@lru_cache(maxsize=64)
def _arange(n: int) -> NDArray:
    """``arange(n)`` (int64, read-only, built once per size)."""
    return frozen(np.arange(n, dtype=np.int64))


def chain(trip: Triplets, rows: NDArray, dR: NDArray, jacs, sel: NDArray | None = None) -> None:
    """Triplets of ``d(rows)/dU = dR @ d(quantity)/dU``.

    ``rows (n, k, r)`` row indices, ``dR (n, k, r, 6)`` derivative of the rows with respect to the
    6-vector quantity whose Jacobian blocks are ``jacs``; ``sel (n,)`` restricts to some entries.
    """
    if not trip.jacobian:
        return
    if trip.values_only:  # the products written straight into the values (compiled, no temporaries)
        dR = np.ascontiguousarray(dR)
        for jc in jacs:
            if jc.whole and sel is None:
                rowsel = pos = _arange(rows.shape[0])
            else:
                m = jc.mask if sel is None else (jc.mask & sel)
                rowsel = np.flatnonzero(m)
                if not rowsel.size:
                    continue
                pos = _arange(rowsel.size) if m is jc.mask else np.flatnonzero(m[jc.mask])
            J = np.ascontiguousarray(jc.J)
            o = trip.reserve(pos.size * J.shape[1] * dR.shape[2] * J.shape[3])
            put_chain(trip.buffer, o, dR, rowsel, pos, J, 1.0)
        return
    for jc in jacs:
        if jc.whole and sel is None:
            trip.add(rows, jc.cols, dR @ jc.J)
            continue
        m = jc.mask if sel is None else (jc.mask & sel)
        if not m.any():
            continue
        if m is jc.mask:
            trip.add(rows[m], jc.cols, dR[m] @ jc.J)
        else:
            inner = m[jc.mask]
            trip.add(rows[m], jc.cols[inner], dR[m] @ jc.J[inner])


class AttachmentSet:
    """``n`` attachments: ``body (n,)`` model body index (``nb`` = ground), ``point (n, 3)`` origin in
    the body frame (relative to the body's frame origin; for the ground: inertial), ``frame
    (n, 3, 3)`` orientation in the body frame, ``site`` optional per-entry body-type data (e.g. the
    interface of a flexible body; None: a point of the undeformed body).
    """

    def __init__(self, cm, body, point, frame=None, site=None):
        self.n = len(body)
        self.body = np.asarray(body, dtype=np.int64).reshape(-1)
        point = np.asarray(point, dtype=float).reshape(self.n, 3)
        self.frame = (np.tile(I3, (self.n, 1, 1)) if frame is None
                      else np.asarray(frame, dtype=float).reshape(self.n, 3, 3))
        self.ground = self.body >= cm.nb
        self.ground_point = np.where(self.ground[:, None], point, 0.0)
        #: per group: (group index, mask (n,), local body index in the group (m,), group data)
        self.parts = []
        self.groups = cm.groups
        for g, group in enumerate(cm.groups):
            mask = ~self.ground & np.isin(self.body, group.bodies)
            if not mask.any():
                continue
            local = frozen(np.asarray(group.local_index(self.body[mask]), dtype=np.int64))
            data = group.attach_data(local, point[mask], self.frame[mask],
                                     None if site is None else [site[k] for k in np.nonzero(mask)[0]])
            for key, value in vars(data).items():  # the kernels' constants: read-only (kernels.frozen)
                setattr(data, key, frozen(value))
            self.parts.append((g, mask, local, data))
        #: parts that serve every entry (no ground, one body group): their arrays are used as they are
        self._whole = [bool(mask.all()) for _, mask, _, _ in self.parts]
        self._ground_any = bool(self.ground.any())
        self._ground_k: dict = {}
        self._node_base = None

    def _ground_base(self, k: int):
        """``x (n, k, 3)``, ``R (n, k, 3, 3)`` with the ground entries filled (the others zero): built
        once per number of points, copied per call (the ground frames do not move)."""
        hit = self._ground_k.get(k)
        if hit is None:
            x = np.zeros((self.n, k, 3))
            R = np.zeros((self.n, k, 3, 3))
            x[self.ground] = self.ground_point[self.ground][:, None]
            R[self.ground] = self.frame[self.ground][:, None]
            hit = self._ground_k[k] = (x, R)
        return hit

    # ------------------------------------------------------------------ element level
    def pose(self, ek: ElementKin, where: str = "gauss") -> Pose:
        k = ek.te.p
        jac = []
        if len(self.parts) == 1 and self._whole[0]:  # one body group serves all entries
            g, mask, local, data = self.parts[0]
            x, R, cols, J = self.groups[g].attach_pose(ek, local, data, where)
            return Pose(x, R, [Jac(mask, cols, J, True)])
        if self._ground_any:
            x0, R0 = self._ground_base(k)
            x, R = x0.copy(), R0.copy()
        else:
            x, R = np.empty((self.n, k, 3)), np.empty((self.n, k, 3, 3))
        for g, mask, local, data in self.parts:
            xg, Rg, cols, J = self.groups[g].attach_pose(ek, local, data, where)
            x[mask], R[mask] = xg, Rg
            jac.append(Jac(mask, cols, J))
        return Pose(x, R, jac)

    def velocity(self, ek: ElementKin) -> Velocity:
        if len(self.parts) == 1 and self._whole[0]:
            g, mask, local, data = self.parts[0]
            nug, cols, J = self.groups[g].attach_velocity(ek, local, data)
            return Velocity(nug.copy(), [Jac(mask, cols, J, True)])  # copy: a body type may cache nug
        nu = np.zeros((self.n, ek.te.p, 6))
        jac = []
        for g, mask, local, data in self.parts:
            nug, cols, J = self.groups[g].attach_velocity(ek, local, data)
            nu[mask] = nug
            jac.append(Jac(mask, cols, J))
        return Velocity(nu, jac)

    def scatter(self, ek: ElementKin, res: NDArray, trip: Triplets, wrench: NDArray, target: str,
                terms=()) -> None:
        """Add the generalized force of ``wrench (n, p, 6)`` to the bodies' rows.

        ``terms``: the wrench's dependence on other unknowns, each ``(cols (n, p, c), dW (n, p, 6, c))``
        or ``(jacs, dW (n, p, 6, 6))`` with ``jacs`` a list of :class:`Jac` (a pose or velocity).
        """
        fac = -1.0 if target == "multiplier" else -ek.h
        for (g, mask, local, data), whole in zip(self.parts, self._whole):
            grp = self.groups[g]
            wm = wrench if whole else wrench[mask]
            rows, BT, own = grp.wrench_map(ek, local, data, wm, target)
            scatter_wrench(res, rows, np.ascontiguousarray(BT), np.ascontiguousarray(wm), fac)
            if not trip.jacobian:
                continue
            for cols, vals in own:
                trip.add(rows, cols, fac * vals)
            if whole:  # every entry is on this group: no expansion to the n entries
                for a, dW in terms:
                    if isinstance(a, list):
                        chain(trip, rows, fac * BT @ dW, a)
                    else:
                        trip.add(rows, a, fac * BT @ dW)
                continue
            full_rows = np.zeros((self.n,) + rows.shape[1:], dtype=rows.dtype)
            full_rows[mask] = rows
            full_BT = np.zeros((self.n,) + BT.shape[1:])
            full_BT[mask] = BT
            for a, dW in terms:
                if isinstance(a, list):
                    chain(trip, full_rows, fac * full_BT @ dW, a, sel=mask)
                else:
                    trip.add(rows, a[mask], fac * BT @ dW[mask])

    # ------------------------------------------------------------------ node level
    def node_pose(self, cm, st):
        """Inertial poses at a time node from the start state ``st``: ``x (n, 3)``, ``R (n, 3, 3)``."""
        x = np.empty((self.n, 3))
        R = np.empty((self.n, 3, 3))
        x[self.ground] = self.ground_point[self.ground]
        R[self.ground] = self.frame[self.ground]
        for g, mask, local, data in self.parts:
            x[mask], R[mask] = cm.groups[g].node_attach_pose(st, local, data)
        return x, R

    def node_velocity_map(self, cm, st):
        """``nu = B w``: blocks ``B (n, 6, c)`` and the columns ``(n, c)`` of the global body velocity
        vector (:attr:`CompiledModel.vel_off`) per group, as a list of ``(mask, cols, B)``."""
        out = []
        for g, mask, local, data in self.parts:
            cols, B = cm.groups[g].node_velocity_map(st, local, data)
            out.append((mask, cols, B))
        return out

    def node_frames(self, cm, st):
        """Poses and velocity maps at a time node in one set of arrays: ``x (n, 3)``, ``R (n, 3, 3)``,
        ``B (n, 6, cw)``, ``cols (n, cw)`` (``nu = B w[cols]``) and ``width (n,)`` the columns used (0 on
        the ground), padded to the model's widest body type ``cw`` (:mod:`flexmb.dynamics.node.kernels`).
        A body type with ``node_attach`` (poses and map in one call) is asked once; else its
        ``node_attach_pose`` and ``node_velocity_map``."""
        base = self._node_base
        if base is None:  # the ground entries' constant arrays and the model's widest body type, once
            cw = max(g.nv for g in self.groups) if self.groups else 6
            x = np.zeros((self.n, 3))
            R = np.zeros((self.n, 3, 3))
            x[self.ground] = self.ground_point[self.ground]
            R[self.ground] = self.frame[self.ground]
            base = self._node_base = frozen((x, R, np.zeros((self.n, 6, cw)), np.zeros((self.n, cw), dtype=np.int64),
                                             np.zeros(self.n, dtype=np.int64), np.full(self.n, cw, dtype=np.int64)))
        x0, R0, B0, c0, w0, full = base
        if not self.parts:  # the ground only: constant
            return x0, R0, B0, c0, w0
        cw = B0.shape[2]
        if len(self.parts) == 1 and self._whole[0]:
            g, mask, local, data = self.parts[0]
            grp = self.groups[g]
            if grp.nv == cw and hasattr(grp, "node_attach"):
                x, R, cols, B = grp.node_attach(st, local, data)
                return x, R, B, cols, full
        x, R, B, cols, width = x0.copy(), R0.copy(), B0.copy(), c0.copy(), w0.copy()
        for g, mask, local, data in self.parts:
            grp = self.groups[g]
            if hasattr(grp, "node_attach"):
                xg, Rg, cg, Bg = grp.node_attach(st, local, data)
            else:
                (xg, Rg), (cg, Bg) = grp.node_attach_pose(st, local, data), grp.node_velocity_map(st, local, data)
            x[mask], R[mask] = xg, Rg
            c = cg.shape[-1]
            B[mask, :, :c] = Bg
            cols[mask, :c] = cg
            width[mask] = c
        return x, R, B, cols, width
