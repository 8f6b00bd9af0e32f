"""The node stage of a model of modal flexible bodies (:class:`~flexmb.dynamics.bodies.modal.FlexibleBodies`),
alone or with rigid bodies, on joints in two compiled calls: the end node of an element with the gauge
reset (:func:`modal_end_node`) and the node's values (:func:`modal_node_values`: the node-velocity
projection, the body frames, the kinetic energies and the interfaces' outputs); and the choice of the
model's node stage (:func:`stage_plan`: this one or the rigid one of :mod:`flexmb.dynamics.node.stage`).

Each call strings together the one compiled implementation of every step in the order of the general
path (:func:`flexmb.dynamics.march.marching.end_values`, :meth:`flexmb.dynamics.io.recorder.Recorder.node_values`),
so that the results are the same to the bit: the end values of the bodies (the rigid group's frame, the
modal group's frame and modal coordinates: :func:`flexmb.dynamics.march.kernels.end_values`, as
:meth:`~flexmb.dynamics.bodies.modal.FlexibleBodies.end_values`) and of the joints
(:func:`~flexmb.dynamics.node.stage.joints_end`), the re-orthonormalization
(:func:`~flexmb.dynamics.march.kernels.polar`), the attachment frames at the node
(:func:`~flexmb.dynamics.node.stage.rigid_side`, :func:`flexmb.dynamics.bodies.modal_attach.node_attach`),
the gauge reset (:func:`~flexmb.dynamics.node.stage.gauge_momenta`), the inverse mass blocks
(:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_inverse_mass`,
:func:`flexmb.dynamics.bodies.modal_laws.inverse_mass_blocks`), the projection
(:func:`flexmb.dynamics.node.kernels.project_dense`), the node output
(:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_node_output`,
:func:`~flexmb.dynamics.bodies.modal_laws.kinetic_energies`,
:func:`~flexmb.dynamics.bodies.modal_attach.node_interfaces`).

Where it applies (:class:`ModalPlan`): one group of modal bodies and at most one of rigid bodies, at least
one joint, the "node" transport of the multipliers, a dense projection.  The same fallbacks as the rigid
stage: a rotation that the Newton-Schulz iteration does not polish, a Cholesky that declines, a node on a
singular configuration of the loops -> the general path.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.modal import QKEY
from flexmb.dynamics.bodies.modal_attach import node_attach, node_interfaces
from flexmb.dynamics.bodies.modal_laws import inverse_mass_blocks, kinetic_energies
from flexmb.dynamics.bodies.rigid_kernels import rigid_inverse_mass, rigid_node_output
from flexmb.dynamics.kernels import frozen, jit_kernel  # the kernels' compilation (cache, no fastmath)
from flexmb.dynamics.layout import JPHI
from flexmb.dynamics.march.kernels import end_values as _row_end_values
from flexmb.dynamics.node.constraints import NodeVelocity
from flexmb.dynamics.node.kernels import project_dense
from flexmb.dynamics.node.projection import SINGULAR_PIVOT, body_widths, node_frames, node_projector, singular_node
from flexmb.dynamics.node.stage import (EndNodePlan, Side, gauge_momenta, joints_end, keep_side_frames, polish,
                                        rigid_side, scatter_frames)
from flexmb.dynamics.system import ElementStart


# ============================================================================ compiled
@jit_kernel
def modal_side(x, R, q, bodies, idx, local, c, A, Pt, Pr, xs, Rs, B):  # pragma: no cover - compiled
    """The attachment frames of one joint side's modal-body entries ``idx`` (rows of ``xs``, ``Rs``, ``B``;
    the other rows hold their constants) at the node ``x``, ``R``, ``q`` (:func:`node_attach`)."""
    m = idx.size
    if m == 0:
        return
    N = 6 + q.shape[1]
    xt, Rt, Bt = np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 6, N))
    node_attach(x, R, q, local, bodies, c, A, Pt, Pr, xt, Rt, Bt)
    scatter_frames(idx, xt, Rt, Bt, xs, Rs, B)


@jit_kernel
def _group_end(end, Ug, bodies, cols, pos, mom, bth, x1, R1, pi1, q1, left, x, R, pi, q):  # pragma: no cover
    """The end values of one body group (rows ``bodies`` of ``x, R``, columns ``cols (n, w)`` of ``pi``,
    ``q (n, nq)`` the modal coordinates, ``nq`` = 0 for rigid bodies) by
    :func:`~flexmb.dynamics.march.kernels.end_values` of the slots ``pos`` (``x`` then ``q``, start values
    ``x1[bodies]``, ``q1``) and ``mom``."""
    n, nq, w = bodies.size, q1.shape[1], cols.shape[1]
    y1, p1, R1g = np.empty((n, 3 + nq)), np.empty((n, w)), np.empty((n, 3, 3))
    for k in range(n):
        b = bodies[k]
        for d in range(3):
            y1[k, d] = x1[b, d]
            for e in range(3):
                R1g[k, d, e] = R1[b, d, e]
        for d in range(nq):
            y1[k, 3 + d] = q1[k, d]
        for d in range(w):
            p1[k, d] = pi1[cols[k, d]]
    y, pg, Rg, th = np.empty((n, 3 + nq)), np.empty((n, w)), np.empty((n, 3, 3)), np.empty((n, 3))
    _row_end_values(end, Ug, pos, y1, mom, p1, bth, R1g, left, y, pg, Rg, th)
    for k in range(n):
        b = bodies[k]
        for d in range(3):
            x[b, d] = y[k, d]
            for e in range(3):
                R[b, d, e] = Rg[k, d, e]
        for d in range(nq):
            q[k, d] = y[k, 3 + d]
        for d in range(w):
            pi[cols[k, d]] = pg[k, d]


@jit_kernel
def modal_end_node(end, Ur, r_bodies, r_cols, r_pos, r_mom, r_bth, Uf, f_bodies, f_cols, f_pos, f_mom, f_bth, q1,
                   x1, R1, pi1, Jv, jpos, s1, jmom, lam1, jphi, Rr1, acc1, near, far,
                   a_idx, a_local, a_c, a_A, a_midx, a_mlocal, a_mc, a_mA, a_Pt, a_Pr,
                   b_idx, b_local, b_c, b_A, b_midx, b_mlocal, b_mc, b_mA, b_Pt, b_Pr,
                   xa, Ra, Ba, ca, wa, xb, Rb, Bb, cb, wb,
                   x, R, pi, q, s, lam, Rr, acc, new_pi):  # pragma: no cover - compiled
    """The end node of an element of rigid bodies ``Ur (nr, p, slots)`` (``nr`` may be 0) and modal bodies
    ``Uf (nf, p, slots)`` on joints ``Jv (nj, p, slots)``: ``x``, ``R``, ``pi`` (every body), the modal
    coordinates ``q (nf, nm)``, ``s``, ``lam``, ``Rr``, ``acc`` (the rotations polished by
    :func:`~flexmb.dynamics.march.kernels.polar`), the joints' attachment frames (the body rows of ``xa,
    Ra, Ba``, ``xb, Rb, Bb``) and the momenta after the gauge reset ``new_pi = pi + Lambda(lam)``.  False
    when a rotation is not polished (the caller takes the general path, with its SVD)."""
    nb, nj = x.shape[0], s.shape[0]
    left = nb >= 0  # run-time flags (tests/test_compile_specializations.py)
    _group_end(end, Ur, r_bodies, r_cols, r_pos, r_mom, r_bth, x1, R1, pi1, np.empty((r_bodies.size, 0)), left,
               x, R, pi, np.empty((r_bodies.size, 0)))
    _group_end(end, Uf, f_bodies, f_cols, f_pos, f_mom, f_bth, x1, R1, pi1, q1, left, x, R, pi, q)
    joints_end(end, Jv, jpos, s1, jmom, lam1, jphi, Rr1, not left, acc1, s, lam, Rr, acc)
    if not polish(R, Rr, near, far):
        return False
    rigid_side(x, R, r_bodies, a_idx, a_local, a_c, a_A, xa, Ra, Ba)
    modal_side(x, R, q, f_bodies, a_midx, a_mlocal, a_mc, a_mA, a_Pt, a_Pr, xa, Ra, Ba)
    rigid_side(x, R, r_bodies, b_idx, b_local, b_c, b_A, xb, Rb, Bb)
    modal_side(x, R, q, f_bodies, b_midx, b_mlocal, b_mc, b_mA, b_Pt, b_Pr, xb, Rb, Bb)
    gauge_momenta(pi, lam, xa, xb, Ba, ca, wa, Bb, cb, wb, new_pi)
    return True


@jit_kernel
def modal_node_values(x, R, q, pi, lam, r_bodies, r_cols, r_J0inv, r_mass, r_com, r_J0,
                      f_bodies, f_cols, f_pos, f_mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq,
                      i_local, i_c, i_A, i_Pt, i_Pr, voff, nvb,
                      xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, universal, jj, cc, target,
                      ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, tol,
                      p, Mi, w2, A, mu, loc, w, pos, rotm, vel, om, ke_r, ke_f, wf, xi, Ri, nui):  # pragma: no cover
    """The node's values: the momenta ``p = pi + Lambda(lam)``, the inverse mass blocks ``Mi (nb, cw, cw)``
    (zero-padded), the projected velocities ``w`` (:func:`~flexmb.dynamics.node.kernels.project_dense`),
    the body frames ``pos, rotm, vel, om``, the kinetic energies ``ke_r[0]`` (the rigid group) and ``ke_f``
    (per modal body), the modal bodies' velocities ``wf (nf, N)`` and their interfaces' ``xi, Ri, nui``.
    False when the Cholesky declines (the caller takes the general path)."""
    nr, nf, N = r_bodies.size, f_bodies.size, f_cols.shape[1]
    gauge_momenta(pi, lam, xa, xb, Ba, ca, wa, Bb, cb, wb, p)
    for k in range(Mi.shape[0]):
        for d in range(Mi.shape[1]):
            for e in range(Mi.shape[2]):
                Mi[k, d, e] = 0.0
    Mr = np.empty((nr, 6, 6))
    rigid_inverse_mass(R, r_bodies, r_J0inv, r_mass, Mr)
    Rf = np.empty((nf, 3, 3))
    for k in range(nf):
        for d in range(3):
            for e in range(3):
                Rf[k, d, e] = R[f_bodies[k], d, e]
    Mf = np.empty((nf, N, N))
    inverse_mass_blocks(Rf, q, f_pos, f_mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, Mf)
    for k in range(nr):
        for d in range(6):
            for e in range(6):
                Mi[r_bodies[k], d, e] = Mr[k, d, e]
    for k in range(nf):
        for d in range(N):
            for e in range(N):
                Mi[f_bodies[k], d, e] = Mf[k, d, e]
    if not project_dense(Mi, voff, nvb, p, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, universal, jj, cc, target,
                         ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, tol, w2, A, mu, loc, w):
        return False
    wr = np.empty((nr, 6))
    for k in range(nr):
        for d in range(6):
            wr[k, d] = w[r_cols[k, d]]
    pr, Rr, vr, omr = np.empty((nr, 3)), np.empty((nr, 3, 3)), np.empty((nr, 3)), np.empty((nr, 3))
    ke_r[0] = rigid_node_output(x, R, r_bodies, wr, r_com, r_mass, r_J0, pr, Rr, vr, omr)
    for k in range(nr):
        b = r_bodies[k]
        for d in range(3):
            pos[b, d], vel[b, d], om[b, d] = pr[k, d], vr[k, d], omr[k, d]
            for e in range(3):
                rotm[b, d, e] = Rr[k, d, e]
    for k in range(nf):
        b = f_bodies[k]
        for d in range(N):
            wf[k, d] = w[f_cols[k, d]]
        for d in range(3):
            pos[b, d], vel[b, d], om[b, d] = x[b, d], wf[k, d], wf[k, 3 + d]
            for e in range(3):
                rotm[b, d, e] = R[b, d, e]
    kinetic_energies(Rf, q, f_pos, f_mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, wf, ke_f)
    node_interfaces(x, R, q, wf, i_local, f_bodies, i_c, i_A, i_Pt, i_Pr, xi, Ri, nui)
    return True


# ============================================================================ plans
def stage_plan(cm):
    """The compiled node stage's plan of ``cm`` (kept in ``cm.cache.node_stage``; None where no stage
    applies): the rigid one (:class:`flexmb.dynamics.node.stage.EndNodePlan`) or :class:`ModalPlan`.  Both
    have ``end_node(cm, lay, te, st, h, U, joint_slots, polar_tol)`` and ``node_values(cm, st, sel)``."""
    hit = cm.cache.node_stage
    if hit is None:
        hit = cm.cache.node_stage = (EndNodePlan.build(cm) or ModalPlan.build(cm) or False,)
    return hit[0] or None


def _ro(a, dtype=float) -> NDArray:
    """``a`` as a read-only contiguous array of ``dtype`` (:func:`flexmb.dynamics.kernels.frozen`: the owner's
    flags left alone)."""
    return frozen(np.asarray(a, dtype=dtype))


class ModalPlan:
    """What :func:`modal_end_node` and :func:`modal_node_values` need of a compiled model, built once."""

    def __init__(self, cm, rgrp, fgrp):
        self.rgrp, self.fgrp = rgrp, fgrp
        self.a, self.b = Side(cm.att_a, fgrp.N), Side(cm.att_b, fgrp.N)
        i64 = np.int64
        if rgrp is not None:
            self.r_bodies, self.r_cols = _ro(rgrp.bodies, i64), _ro(rgrp.vel_cols, i64)
            self.r_pos, self.r_mom = _ro(rgrp.BX + np.arange(3), i64), _ro(rgrp.BPI + np.arange(6), i64)
            self.r_bth, self.r_slots = int(rgrp.BTH), int(rgrp.slots)
            self.r_law = tuple(_ro(a) for a in (rgrp.J0inv, rgrp.mass, rgrp.com, rgrp.J0))
        else:
            self.r_bodies, self.r_cols = _ro(np.zeros(0), i64), _ro(np.zeros((0, 6)), i64)
            self.r_pos, self.r_mom = _ro(np.arange(3), i64), _ro(np.arange(6), i64)
            self.r_bth, self.r_slots = 3, 1
            self.r_law = (_ro(np.zeros((0, 3, 3))), _ro(np.zeros(0)), _ro(np.zeros((0, 3))), _ro(np.zeros((0, 3, 3))))
        pos, mom = fgrp.end_slots()
        self.f_bodies, self.f_cols = _ro(fgrp.bodies, i64), _ro(fgrp.vel_cols, i64)
        self.f_pos, self.f_mom = _ro(pos, i64), _ro(mom, i64)
        self.f_at = _ro(np.arange(fgrp.n), i64)  # the bodies' positions in the group (the laws' indices)
        d = fgrp.data
        self.f_law = (_ro(fgrp.mass),) + tuple(_ro(d[k]) for k in ("S0", "S1", "J0", "J1", "J2", "psi0", "dpsi", "Mq"))
        local, data, _ = fgrp.interfaces()
        self.ifaces = (_ro(local, i64), _ro(data.c), _ro(data.A), _ro(data.Pt), _ro(data.Pr))

    @classmethod
    def build(cls, cm):
        """The plan of ``cm``, or None when it does not apply (see the module)."""
        kinds = [getattr(g, "kind", None) for g in cm.groups]
        # one modal group and at most one rigid group, on joints
        if not cm.nj or sorted(kinds, key=str) not in (["flexible"], ["flexible", "rigid"]):
            return None
        groups = {k: g for k, g in zip(kinds, cm.groups)}
        return cls(cm, groups.get("rigid"), groups["flexible"])

    def end_node(self, cm, lay, te, st, h: float, U: NDArray, joint_slots, polar_tol):
        """The end node of the element (the next one's start) by :func:`modal_end_node`, with its joint
        frames kept on it, or None (the caller's general path; see the module): as
        :func:`flexmb.dynamics.node.stage.end_node`."""
        fg, nb, nj = self.fgrp, cm.nb, cm.nj
        a, b = self.a, self.b
        (xa, Ra, Ba), fa = a.frames()
        (xb, Rb, Bb), fb = b.frames()
        x, R, pi, q = np.empty((nb, 3)), np.empty((nb, 3, 3)), np.empty(cm.nv), np.empty((fg.n, fg.nm))
        s, lam, Rr, acc = np.empty((nj, 3)), np.empty((nj, 6)), np.empty((nj, 3, 3)), np.empty((nj, 3))
        new_pi = np.empty(cm.nv)
        if not modal_end_node(te.end, lay.group_view(U, self.r_bodies, self.r_slots), self.r_bodies, self.r_cols,
                              self.r_pos, self.r_mom, self.r_bth, lay.group_view(U, fg.bodies, fg.slots), self.f_bodies,
                              self.f_cols, self.f_pos, self.f_mom, fg.BTH, np.ascontiguousarray(fg.node_q(st)), st.x,
                              st.R, st.pi, lay.joint_view(U), joint_slots[0], st.s, joint_slots[1], st.lam, JPHI, st.Rr,
                              st.acc, polar_tol[0], polar_tol[1],
                              a.idx, a.local, a.c, a.A, a.midx, a.mlocal, a.mc, a.mA, a.mPt, a.mPr,
                              b.idx, b.local, b.c, b.A, b.midx, b.mlocal, b.mc, b.mA, b.mPt, b.mPr,
                              xa, Ra, Ba, a.cols, a.width, xb, Rb, Bb, b.cols, b.width, x, R, pi, q, s, lam, Rr, acc,
                              new_pi):
            return None
        extra = dict(st.extra)
        extra[QKEY] = q
        new = ElementStart(t=st.t + h, x=x, R=R, pi=new_pi, s=s, Rr=Rr, lam=np.zeros((nj, 6)), acc=acc, lam_end=lam,
                           extra=extra)
        keep_side_frames(cm, new, a, b, fa, fb)
        return new

    def node_values(self, cm, st, sel):
        """The node's projection, frames, kinetic energy and modal outputs by :func:`modal_node_values` for
        the constraint selection ``sel``: ``(nv, pos, rotm, vel, om, ke, extra)`` as
        :meth:`flexmb.dynamics.io.recorder.Recorder.node_values` has them, or None (the caller's general
        path: no dense projection, a node on a singular configuration, a declined Cholesky)."""
        proj = node_projector(cm, sel)
        if proj.factor.backend != "dense" or proj.n == 0 or singular_node(st, proj.key) is not None:
            return None
        fr = node_frames(cm, st, sel)
        fg, nb, nv, n = self.fgrp, cm.nb, cm.nv, proj.n
        cw, nf, m = fg.N, fg.n, self.ifaces[0].size
        q = np.ascontiguousarray(fg.node_q(st))
        p, Mi, w2, A, mu, loc, w = (np.empty(nv), np.empty((nb, cw, cw)), np.empty(nv), np.empty((n, n)), np.empty(n),
                                    np.empty((cm.nj, 7)), np.empty(nv))
        pos, rotm, vel, om = np.empty((nb, 3)), np.empty((nb, 3, 3)), np.empty((nb, 3)), np.empty((nb, 3))
        ke_r, ke_f, wf = np.empty(1), np.empty(nf), np.empty((nf, cw))
        xi, Ri, nui = np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 6))
        xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
        if not modal_node_values(st.x, st.R, q, st.pi, st.lam, self.r_bodies, self.r_cols, *self.r_law,
                                 self.f_bodies, self.f_cols, self.f_at, *self.f_law, *self.ifaces, cm.vel_off,
                                 body_widths(cm), xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, fr.universal, proj.jj, proj.cc,
                                 proj.target(cm, st.t), proj.ent_side, proj.ent_joint, proj.ent_comp, proj.ent_body,
                                 proj.ptr, proj.pair_slot, SINGULAR_PIVOT, p, Mi, w2, A, mu, loc, w, pos, rotm, vel, om,
                                 ke_r, ke_f, wf, xi, Ri, nui):
            return None
        ke = 0.0
        for grp in cm.groups:  # in the groups' order, as the general path sums them
            ke += float(ke_f.sum()) if grp is fg else ke_r[0]
        return NodeVelocity(w, p, w2, mu, loc, proj, fr), pos, rotm, vel, om, ke, fg.node_extra(q, wf, xi, Ri, nui)
