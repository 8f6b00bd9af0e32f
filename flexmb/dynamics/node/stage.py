"""The node stage of a model of rigid bodies on joints in two compiled calls: the end node of an
element with the gauge reset (:func:`end_node`) and the node's values (:func:`node_values`: the
node-velocity projection, the body frames, the kinetic energy, and for the record of the node's reactions
the joints' rates and the projection's wrench).

Each call strings together the one compiled implementation of every step, in the order of the general
path, so that the results are the same to the bit: the end values of the bodies and the joints
(:func:`flexmb.dynamics.march.kernels.end_values`), their re-orthonormalization
(:func:`~flexmb.dynamics.march.kernels.polar`), the attachment frames at the node
(:func:`flexmb.dynamics.bodies.rigid_kernels.rigid_node_attach`), the multipliers as body momenta
(:func:`flexmb.dynamics.node.kernels.generalized`), the inverse mass
(:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_inverse_mass`), the projection
(:func:`flexmb.dynamics.node.kernels.project_dense`) and the node output
(:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_node_output`).  The general path
(:func:`flexmb.dynamics.march.marching.end_values`, :meth:`flexmb.dynamics.io.recorder.Recorder.node_values`)
is the reference; these calls only replace its ~20 Python-level calls and ~15 compiled calls per node
(the fixed cost of a small model's element, issue 17 D; ``benchmarks/README.md``, "Small models after
NODESTAGE").  The model's constants (and the projector's) reach both calls packed into a few flat arrays
(:mod:`flexmb.dynamics.solve.packing`), built once per plan (:attr:`EndNodePlan.packed`) and per projector
(:meth:`EndNodePlan.values_packing`): fewer arrays to unbox per call.

Where it applies (:class:`EndNodePlan`, chosen once per model by
:func:`flexmb.dynamics.node.stage_modal.stage_plan`, which takes the modal twin of this stage for models
with modal bodies): one body type, rigid, holding every body in order; at least one joint; the "node"
transport of the multipliers; a dense projection.  The steps both stages share are one kernel each
(:func:`joints_end`, :func:`rigid_side`, :func:`gauge_momenta`, :class:`Side`).  Anything it cannot vouch
for returns to the general path, which then computes the node from scratch: a rotation that the
Newton-Schulz iteration does not polish (the SVD
of :func:`~flexmb.dynamics.march.marching._orthonormalize`), a Cholesky that declines (singular rows), a
node on a singular configuration of the loops (``st.self_stresses``).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.rigid_kernels import rigid_inverse_mass, rigid_node_attach, rigid_node_output
from flexmb.dynamics.kernels import frozen, jit_kernel  # the kernels' compilation (cache, no fastmath)
from flexmb.dynamics.layout import JPHI
from flexmb.dynamics.march.kernels import end_values as _row_end_values, polar
from flexmb.dynamics.node.constraints import NodeVelocity
from flexmb.dynamics.elements.joint_law import node_rate_wrench
from flexmb.dynamics.node.kernels import generalized, joint_rates, project_dense
from flexmb.dynamics.node.projection import (SINGULAR_PIVOT, NodeFrames, body_widths, keep_frames, node_frames,
                                             node_projector, singular_node)
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.solve.packing import FR, FW, IR, IW, pack, v1, v2, v3
from flexmb.dynamics.system import ElementStart


# ============================================================================ compiled
@jit_kernel
def rigid_side(x, R, bodies, idx, local, c, A, xs, Rs, B):  # pragma: no cover - compiled
    """The attachment frames of one joint side's rigid-body entries ``idx`` (rows of ``xs``, ``Rs``, ``B``,
    the first 6 columns of ``B``; the other rows hold their constants) at the node ``x``, ``R``."""
    m = idx.size
    if m == 0:
        return
    xt, Rt, Bt = np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 6, 6))
    rigid_node_attach(x, R, bodies, local, c, A, xt, Rt, Bt)
    scatter_frames(idx, xt, Rt, Bt, xs, Rs, B)


@jit_kernel
def scatter_frames(idx, xt, Rt, Bt, xs, Rs, B):  # pragma: no cover - compiled
    """Rows ``idx (m,)`` of one side's ``xs, Rs, B`` from the attachments' ``xt (m, 3)``, ``Rt (m, 3, 3)``,
    ``Bt (m, 6, c)`` (the first ``c`` columns of ``B``)."""
    for q in range(idx.size):
        j = idx[q]
        for d in range(3):
            xs[j, d] = xt[q, d]
            for e in range(3):
                Rs[j, d, e] = Rt[q, d, e]
        for d in range(6):
            for e in range(Bt.shape[2]):
                B[j, d, e] = Bt[q, d, e]


@jit_kernel
def gauge_momenta(pi, lam, xa, xb, Ba, ca, wa, Bb, cb, wb, out):  # pragma: no cover - compiled
    """``out = pi + Lambda``: the multipliers ``lam (nj, 6)`` as body momenta
    (:func:`~flexmb.dynamics.node.kernels.generalized`; zero when every multiplier is zero, as
    :func:`flexmb.dynamics.node.constraints.multiplier_momenta`) added to the modified momenta ``pi``."""
    Lam = np.zeros(pi.size)
    nonzero = False
    for j in range(lam.shape[0]):
        for d in range(6):
            if lam[j, d] != 0.0:
                nonzero = True
    if nonzero:
        generalized(lam, xa, xb, Ba, ca, wa, Bb, cb, wb, Lam)
    for k in range(pi.size):
        out[k] = pi[k] + Lam[k]


@jit_kernel
def joints_end(end, Jv, jpos, s1, jmom, lam1, jphi, Rr1, left, acc1, s, lam, Rr, acc):  # pragma: no cover - compiled
    """The joints' end values ``s``, ``lam``, ``Rr`` (:func:`~flexmb.dynamics.march.kernels.end_values` of
    ``Jv (nj, p, slots)``; ``left`` False: the relative rotation's increment on the right, a run-time flag)
    and the accumulated relative rotation ``acc = acc1 + phi``."""
    nj = s.shape[0]
    phi = np.empty((nj, 3))
    _row_end_values(end, Jv, jpos, s1, jmom, lam1, jphi, Rr1, left, s, lam, Rr, phi)
    for j in range(nj):
        for d in range(3):
            acc[j, d] = acc1[j, d] + phi[j, d]


@jit_kernel
def polish(R, Rr, near, far):  # pragma: no cover - compiled
    """The end node's body rotations ``R`` and the joints' ``Rr`` re-orthonormalized in place
    (:func:`~flexmb.dynamics.march.kernels.polar`); False when one is not polished (the caller's SVD)."""
    if not polar(R, near, far, np.empty(R.shape[0], np.bool_)):
        return False
    return polar(Rr, near, far, np.empty(Rr.shape[0], np.bool_))


@jit_kernel
def rigid_end_node(end, Ug, x1, pi1, R1, Jv, jpos, s1, jmom, lam1, Rr1, acc1, near, far, xa, Ra, Ba, xb, Rb, Bb,
                   x, pi, R, s, lam, Rr, acc, new_pi, Fr, Ir, Iw, M):  # pragma: no cover - compiled
    """The end node of an element of rigid bodies ``Ug (n, p, slots)`` on joints ``Jv (nj, p, slots)``:
    ``x``, ``pi``, ``R`` and ``s``, ``lam``, ``Rr``, ``acc`` (the march kernels' end values, the rotations
    polished by :func:`~flexmb.dynamics.march.kernels.polar`), the joints' attachment frames there (the
    body rows of ``xa, Ra, Ba``, ``xb, Rb, Bb``; their ground rows hold the constants) and the momenta
    after the gauge reset ``new_pi = pi + Lambda(lam)``.  The model's constants packed
    (:mod:`flexmb.dynamics.solve.packing`, :attr:`EndNodePlan.packed`: the kinds ``Fr, Ir, Iw`` and ``M``).
    False when a rotation is not polished (the caller takes the general path, with its SVD)."""
    d = v1(Ir, M[0])
    bth, jphi = d[0], d[1]
    pos_slots, mom_slots, bodies = v1(Iw, M[1]), v1(Iw, M[2]), v1(Ir, M[3])
    a_idx, a_local, a_c, a_A = v1(Ir, M[4]), v1(Ir, M[5]), v2(Fr, M[6]), v3(Fr, M[7])
    b_idx, b_local, b_c, b_A = v1(Ir, M[8]), v1(Ir, M[9]), v2(Fr, M[10]), v3(Fr, M[11])
    ca, wa, cb, wb = v2(Ir, M[12]), v1(Ir, M[13]), v2(Ir, M[14]), v1(Ir, M[15])
    n, nj = x.shape[0], s.shape[0]
    # the bodies' spatial increment (left) and the joints' relative one: run-time flags (a literal True
    # would compile end_values once more for it, tests/test_compile_specializations.py)
    left = n >= 0
    th = np.empty((n, 3))
    _row_end_values(end, Ug, pos_slots, x1, mom_slots, pi1, bth, R1, left, x, pi, R, th)
    joints_end(end, Jv, jpos, s1, jmom, lam1, jphi, Rr1, not left, acc1, s, lam, Rr, acc)
    if not polish(R, Rr, near, far):
        return False
    rigid_side(x, R, bodies, a_idx, a_local, a_c, a_A, xa, Ra, Ba)
    rigid_side(x, R, bodies, b_idx, b_local, b_c, b_A, xb, Rb, Bb)
    gauge_momenta(pi.reshape(pi.size), lam, xa, xb, Ba, ca, wa, Bb, cb, wb, new_pi)
    return True


@jit_kernel
def rigid_node_values(x, R, pi, lam, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, universal, target, tol,
                      p, Mi, w2, A, mu, loc, w, pos, rotm, vel, om, ke, rates, wrench,
                      Fr, Fw, Ir, Iw, M):  # pragma: no cover - compiled
    """The node's values: the momenta ``p = pi + Lambda(lam)``, the projected velocities ``w`` (``w2 =
    M^-1 p``, the rows' multipliers ``mu`` and ``loc``; :func:`~flexmb.dynamics.node.kernels.project_dense`
    with the inverse mass ``Mi``), the body frames ``pos, rotm, vel, om``, the kinetic energy ``ke[0]`` and,
    for the record of the node's reactions, the joints' rates ``rates (nj, 7)`` at ``w``
    (:func:`~flexmb.dynamics.node.kernels.joint_rates`) and the projection's wrench on B ``wrench (nj, 6)``
    (:func:`~flexmb.dynamics.elements.joint_law.node_rate_wrench` of ``loc``).  False when the Cholesky
    declines (the caller takes the general path).  The model's constants and the projector's packed
    (:mod:`flexmb.dynamics.solve.packing`, :meth:`EndNodePlan.values_packing`: the kinds ``Fr, Fw, Ir, Iw``
    and ``M``)."""
    bodies, J0inv, mass, com, J0 = v1(Ir, M[0]), v3(Fr, M[1]), v1(Fr, M[2]), v2(Fw, M[3]), v3(Fr, M[4])
    voff, nvb, jj, cc = v1(Ir, M[5]), v1(Iw, M[6]), v1(Iw, M[7]), v1(Iw, M[8])
    ent_side, ent_joint, ent_comp, ent_body = v1(Iw, M[9]), v1(Iw, M[10]), v1(Iw, M[11]), v1(Iw, M[12])
    ptr, pair_slot = v1(Iw, M[13]), v1(Iw, M[14])
    gauge_momenta(pi, lam, xa, xb, Ba, ca, wa, Bb, cb, wb, p)
    rigid_inverse_mass(R, bodies, J0inv, mass, Mi)
    if not project_dense(Mi, voff, nvb, p, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, universal, jj, cc, target,
                         ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, tol, w2, A, mu, loc, w):
        return False
    ke[0] = rigid_node_output(x, R, bodies, w.reshape((bodies.size, 6)), com, mass, J0, pos, rotm, vel, om)
    joint_rates(w, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, universal, rates)
    node_rate_wrench(Ra, Rb, universal, loc, wrench)
    return True


# ============================================================================ plans
def rigid_group(cm):
    """The model's one body group when it is rigid and holds every body in order, else None."""
    if len(cm.groups) != 1 or not cm.nb:
        return None
    grp = cm.groups[0]
    return grp if getattr(grp, "kind", None) == "rigid" and grp.every_body else None


class Side:
    """One joint side's constants at a node: the ground rows of ``x, R`` (zero elsewhere), ``B (n, 6, cw)``
    zero, the velocity columns ``cols (n, cw)`` and widths, the rigid-body entries ``idx`` with their
    ``local``, ``c``, ``A`` and the modal-body entries ``midx`` with ``mlocal``, ``mc``, ``mA``, ``mPt``,
    ``mPr`` (:meth:`flexmb.dynamics.bodies.modal.FlexibleBodies.attach_data`; empty without modal bodies)."""

    __slots__ = ("x0", "R0", "B0", "cols", "width", "idx", "local", "c", "A", "midx", "mlocal", "mc", "mA", "mPt",
                 "mPr", "writable")

    def __init__(self, att, cw: int = 6):
        n = att.n
        self.x0 = np.zeros((n, 3))
        self.R0 = np.zeros((n, 3, 3))
        self.x0[att.ground] = att.ground_point[att.ground]
        self.R0[att.ground] = att.frame[att.ground]
        self.B0 = np.zeros((n, 6, cw))
        self.cols = np.zeros((n, cw), dtype=np.int64)
        self.width = np.zeros(n, dtype=np.int64)
        self.idx = self.midx = np.zeros(0, dtype=np.int64)
        self.local = self.mlocal = np.zeros(0, dtype=np.int64)
        self.c, self.A = self.mc, self.mA = np.zeros((0, 3)), np.zeros((0, 3, 3))
        self.mPt = self.mPr = np.zeros((0, 3, max(cw - 6, 0)))
        for g, mask, local, data in att.parts:  # (one part per body type)
            grp = att.groups[g]
            idx, local = np.flatnonzero(mask).astype(np.int64), np.ascontiguousarray(local, dtype=np.int64)
            c, A = np.ascontiguousarray(data.c, dtype=float), np.ascontiguousarray(data.A, dtype=float)
            if grp.kind == "rigid":
                self.idx, self.local, self.c, self.A = idx, local, c, A
            else:
                self.midx, self.mlocal, self.mc, self.mA = idx, local, c, A
                self.mPt, self.mPr = (np.ascontiguousarray(a, dtype=float) for a in (data.Pt, data.Pr))
            self.cols[mask, :grp.nv] = grp.vel_cols[local]
            self.width[mask] = grp.nv
        for name in self.__slots__[:-1]:
            setattr(self, name, frozen(getattr(self, name)))
        #: a side of ground entries only: writable twins of the constants for the kernel (which writes the
        #: body rows only: none), the read-only constants for the node frames
        self.writable = (self.x0.copy(), self.R0.copy(), self.B0.copy()) if not (self.idx.size or self.midx.size) \
            else None

    def frames(self):
        """``(x, R, B)`` for the kernel and for the node's frames: fresh copies of the constants (the
        kernel writes the body rows), or for a side of ground entries only the writable twins and the
        constants."""
        if self.writable is not None:
            return self.writable, (self.x0, self.R0, self.B0)
        out = self.x0.copy(), self.R0.copy(), self.B0.copy()
        return out, out


class EndNodePlan:
    """What :func:`end_node` needs of a compiled model of rigid bodies, built once
    (:func:`flexmb.dynamics.node.stage_modal.stage_plan` keeps it in ``cm.cache.node_stage``)."""

    def __init__(self, cm, grp):
        self.grp = grp
        self.a, self.b = Side(cm.att_a), Side(cm.att_b)
        pos_slots = (grp.BX + np.arange(3)).astype(np.int64)
        mom_slots = (grp.BPI + np.arange(6)).astype(np.int64)
        a, b = self.a, self.b
        #: :func:`rigid_end_node`'s constants packed (:func:`flexmb.dynamics.solve.packing.pack`): ``(Fr, Ir, Iw, M)``
        *flats, M = pack([(IR, np.array([grp.BTH, JPHI], dtype=np.int64)), (IW, pos_slots), (IW, mom_slots),
                          (IR, grp.bodies), (IR, a.idx), (IR, a.local), (FR, a.c), (FR, a.A), (IR, b.idx),
                          (IR, b.local), (FR, b.c), (FR, b.A), (IR, a.cols), (IR, a.width), (IR, b.cols),
                          (IR, b.width)])
        self.packed = (flats[FR], flats[IR], flats[IW], M)
        self._values = (None, None)  # (projector, packing) of rigid_node_values

    def values_packing(self, cm, proj) -> tuple:
        """:func:`rigid_node_values`' constants packed, ``(Fr, Fw, Ir, Iw, M)``: the bodies' and the
        projector ``proj``'s (built again when the projector changes: another constraint selection)."""
        if self._values[0] is not proj:
            grp = self.grp
            *flats, M = pack([(IR, grp.bodies), (FR, grp.J0inv), (FR, grp.mass), (FW, grp.com), (FR, grp.J0),
                              (IR, cm.vel_off), (IW, body_widths(cm)), (IW, proj.jj), (IW, proj.cc),
                              (IW, proj.ent_side), (IW, proj.ent_joint), (IW, proj.ent_comp), (IW, proj.ent_body),
                              (IW, proj.ptr), (IW, proj.pair_slot)])
            self._values = (proj, (flats[FR], flats[FW], flats[IR], flats[IW], M))
        return self._values[1]

    @classmethod
    def build(cls, cm):
        """The plan of ``cm``, or None when the stage does not apply (not every body rigid, no joint)."""
        grp = rigid_group(cm)
        return cls(cm, grp) if grp is not None and cm.nj else None

    def end_node(self, cm, lay, te, st, h: float, U: NDArray, joint_slots, polar_tol):
        """:func:`end_node` of this plan."""
        return end_node(cm, lay, te, st, h, U, self, joint_slots, polar_tol)

    def node_values(self, cm, st, sel):
        """:func:`node_values` of this plan, with no body-type outputs: ``(nv, pos, rotm, vel, om, ke, {})``
        or None."""
        out = node_values(cm, st, sel, self.grp, self)
        return None if out is None else out + ({},)


def end_arrays(cm) -> tuple:
    """Fresh arrays for :func:`rigid_end_node`'s outputs, the end node's state: ``x (nb, 3)``, ``pi (nb, 6)``,
    ``R (nb, 3, 3)``, ``s (nj, 3)``, ``lam (nj, 6)``, ``Rr (nj, 3, 3)``, ``acc (nj, 3)`` and the gauge-reset
    momenta ``new_pi (nv,)`` (:func:`end_node` and the compiled element,
    :mod:`flexmb.dynamics.step.compiled_element`)."""
    nb, nj = cm.nb, cm.nj
    return (np.empty((nb, 3)), np.empty((nb, 6)), np.empty((nb, 3, 3)), np.empty((nj, 3)), np.empty((nj, 6)),
            np.empty((nj, 3, 3)), np.empty((nj, 3)), np.empty(cm.nv))


def end_start(cm, st, h: float, plan: EndNodePlan, x, R, new_pi, s, Rr, acc, lam, fa, fb) -> ElementStart:
    """The end node (the next element's start, at ``st.t + h``) from :func:`rigid_end_node`'s outputs ``x,
    R, new_pi, s, Rr, acc`` and the joints' end multipliers ``lam``, with the joint frames ``fa``, ``fb`` of
    ``plan``'s sides kept on it (:func:`keep_side_frames`): what :func:`end_node` returns, and the compiled
    element (:mod:`flexmb.dynamics.step.compiled_element`) with it."""
    new = ElementStart(t=st.t + h, x=x, R=R, pi=new_pi, s=s, Rr=Rr, lam=np.zeros((cm.nj, 6)), acc=acc, lam_end=lam,
                       extra=dict(st.extra))
    keep_side_frames(cm, new, plan.a, plan.b, fa, fb)
    return new


def keep_side_frames(cm, new, a: Side, b: Side, fa, fb) -> None:
    """Keep the joint frames of the end node ``new`` computed by a stage kernel (``fa``, ``fb``: each side's
    ``(x, R, B)`` from :meth:`Side.frames`) where the projection finds them
    (:func:`~flexmb.dynamics.node.projection.keep_frames`)."""
    keep_frames(new, NodeFrames.of_arrays(fa + (a.cols, a.width), fb + (b.cols, b.width),
                                          Selection.full(cm).any_universal))


def end_node(cm, lay, te, st, h: float, U: NDArray, plan: EndNodePlan, joint_slots, polar_tol):
    """The end node of the element (the next one's start) by :func:`rigid_end_node`, with its joint
    frames kept on it (:func:`~flexmb.dynamics.node.projection.keep_frames`), or None (the caller's general
    path; see the module).  ``joint_slots``: the joints' position and multiplier slots with end values,
    ``polar_tol``: the Newton-Schulz iteration's ``(near, far)`` (the caller's, :mod:`flexmb.dynamics.march.marching`)."""
    grp, nb = plan.grp, cm.nb
    a, b = plan.a, plan.b
    (xa, Ra, Ba), fa = a.frames()
    (xb, Rb, Bb), fb = b.frames()
    x, pi, R, s, lam, Rr, acc, new_pi = end_arrays(cm)
    if not rigid_end_node(te.end, lay.group_view(U, grp.bodies, grp.slots), st.x, st.pi.reshape(nb, 6), st.R,
                          lay.joint_view(U), joint_slots[0], st.s, joint_slots[1], st.lam, st.Rr, st.acc,
                          polar_tol[0], polar_tol[1], xa, Ra, Ba, xb, Rb, Bb, x, pi, R, s, lam, Rr, acc, new_pi,
                          *plan.packed):
        return None
    return end_start(cm, st, h, plan, x, R, new_pi, s, Rr, acc, lam, fa, fb)


def node_values(cm, st, sel, grp, plan: EndNodePlan):
    """The node's projection, frames and kinetic energy by :func:`rigid_node_values` for the constraint
    selection ``sel`` (``grp``: the model's rigid group, :func:`rigid_group`; ``plan`` its
    :class:`EndNodePlan`, which keeps the packed constants): ``(nv, pos, rotm, vel, om,
    ke)`` with ``nv`` the :class:`~flexmb.dynamics.node.constraints.NodeVelocity`, or None (the caller's
    general path: no dense projection, a node on a singular configuration, a declined Cholesky); ``nv``
    carries the joints' rates and the projection's wrench that the record of the node's reactions reads."""
    proj = node_projector(cm, sel)
    if proj.factor.backend != "dense" or proj.n == 0 or singular_node(st, proj.key) is not None:
        return None
    fr = node_frames(cm, st, sel)
    nb, nv, n = cm.nb, cm.nv, proj.n
    p, Mi, w2, A, mu, loc, w = (np.empty(nv), np.empty((nb, 6, 6)), np.empty(nv), np.empty((n, n)), np.empty(n),
                                np.empty((cm.nj, 7)), np.empty(nv))
    pos, rotm, vel, om, ke = np.empty((nb, 3)), np.empty((nb, 3, 3)), np.empty((nb, 3)), np.empty((nb, 3)), np.empty(1)
    rates, wrench = np.empty((cm.nj, 7)), np.empty((cm.nj, 6))
    xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
    if not rigid_node_values(st.x, st.R, st.pi, st.lam, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, fr.universal,
                             proj.target(cm, st.t), SINGULAR_PIVOT, p, Mi, w2, A, mu, loc, w, pos, rotm, vel, om,
                             ke, rates, wrench, *plan.values_packing(cm, proj)):
        return None
    return NodeVelocity(w, p, w2, mu, loc, proj, fr, rates, wrench), pos, rotm, vel, om, float(ke[0])
