"""Time marching between elements: the initial guess of an element's unknowns (predictor) and the
element's end values (next element's start), through the body types' own functions."""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.elements.attachments import ElementKin
from flexmb.dynamics.node.constraints import multiplier_momenta
from flexmb.dynamics.elements.joints import consistent_transport, onto_bodies, unpack_joints
from flexmb.dynamics.layout import JLAM, JNA, JNB, JPHI, JQ, JS, Layout, Triplets
from flexmb.dynamics.march import kernels as march_kernels
from flexmb.dynamics.march.kernels import extrapolation_matrices, warm_ratio
from flexmb.dynamics.node.projection import attachment_velocities, node_frames
from flexmb.dynamics.node.stage_modal import stage_plan
from flexmb.dynamics.step.outcome import ElementPiece
from flexmb.dynamics.system import CompiledModel, ElementStart
from flexmb.dynamics.time_elements import TimeElement


log = logging.getLogger(__name__)

#: the joints' slots with end values and extrapolated from the start value
#: (:mod:`flexmb.dynamics.march.kernels`): s (positions) and lambda (multipliers)
_JPOS = JS + np.arange(3, dtype=np.int64)
_JMOM = JLAM + np.arange(6, dtype=np.int64)


def predict(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float, w: NDArray,
             prev: ElementPiece | None) -> NDArray:
    """Initial guess.

    After an element ``prev`` (up to :data:`~flexmb.dynamics.march.kernels.WARM_RATIO_MAX` times shorter
    or longer: :func:`~flexmb.dynamics.march.kernels.length_ratio`): the previous element's polynomials
    extrapolated to the new internal points (degree p through the start value and the internal values
    for unknowns with end values, degree p - 1 for internal-only unknowns, increments re-based on the
    new start for the rotations).  Otherwise a constant-velocity guess.
    """
    U = np.zeros(lay.size)
    Jv = lay.joint_view(U)
    ratio = warm_ratio(prev, h)
    if ratio is not None:
        U_prev, st_prev = prev.U, prev.start
        Pe, Pi = extrapolation_matrices(te, ratio)
        for grp in cm.groups:
            grp.predict_warm(te, st, st_prev, lay.group_view(U, grp.bodies, grp.slots),
                             lay.group_view(U_prev, grp.bodies, grp.slots), Pe, Pi)
        if cm.nj:  # compiled: march.kernels.extrapolate (the multipliers shifted by the gauge reset)
            march_kernels.extrapolate(Pe, Pi, te.end, lay.joint_view(U_prev), Jv, _JPOS, st_prev.s, JPHI,
                                      _JMOM, st_prev.lam, st.lam)
        return U
    for grp in cm.groups:
        grp.predict_cold(te, st, h, w[grp.vel_cols], lay.group_view(U, grp.bodies, grp.slots))
    if cm.nj:
        Jv[..., JS:JS + 3] = st.s[:, None]
        Jv[..., JLAM:JLAM + 6] = st.lam[:, None]
        fr = node_frames(cm, st, getattr(lay, "selection", None))  # (the cross axis: the layout's selection)
        for slot, nu in zip((JNA, JNB), attachment_velocities(fr, w)):
            Jv[..., slot:slot + 6] = nu[:, None]
        # the relative rotation consistent with the bodies' constant-velocity rotations (theta = c h omega):
        # phi = c h R_B1^T (omega_b - omega_a) in frame B (R_A^T R_B = Rr1 exp(phi)).  Left at zero, the
        # joint's rotation equation axial((Rr1 exp phi)^T R_A^T R_B) = 0 starts Newton at a mismatch of
        # h |omega_rel|, and Newton on a sine overshoots beyond ~1.17 rad: a rotor at 150 rad/s, p = 3,
        # h = 8e-3 then landed on the equation's aliases (phi off by 2 pi or pi) and its spring went wrong
        Rb = fr.Rb
        om_rel = np.einsum("nji,nj->ni", Rb, Jv[:, 0, JNB + 3:JNB + 6] - Jv[:, 0, JNA + 3:JNA + 6])
        Jv[..., JPHI:JPHI + 3] = h * te.c[None, :, None] * om_rel[:, None, :]
    return U


def end_values(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float, U: NDArray) -> ElementStart:
    """The element's end node (the next element's start) from its internal values ``U``, with the
    gauge reset of the multipliers: the bodies' end values through their type
    (:func:`flexmb.dynamics.bodies.rigid.frame_end_values` for a floating frame), the joints'
    (:func:`flexmb.dynamics.march.kernels.end_values`), the rotations re-orthonormalized
    (:func:`_orthonormalize`).  A model of rigid and/or modal bodies on joints takes the compiled node
    stage (:func:`flexmb.dynamics.node.stage_modal.stage_plan`: the same kernels in one call) where it
    applies."""
    transport = consistent_transport(te)
    if not transport:
        plan = stage_plan(cm)
        if plan is not None:
            new = plan.end_node(cm, lay, te, st, h, U, JOINT_END_SLOTS, POLAR_TOL)
            if new is not None:
                return new
    extra = dict(st.extra)
    groups = cm.groups
    if len(groups) == 1 and groups[0].n == cm.nb and groups[0].nv * cm.nb == cm.nv:
        out = groups[0].end_values(te, st, lay.group_view(U, groups[0].bodies, groups[0].slots))
        x, R, pi = out[0], out[1], out[2].reshape(cm.nv)  # every body, in order
        if len(out) > 3:
            extra.update(out[3])
    else:
        x, R, pi = st.x.copy(), st.R.copy(), st.pi.copy()
        for grp in groups:
            out = grp.end_values(te, st, lay.group_view(U, grp.bodies, grp.slots))
            x[grp.bodies], R[grp.bodies], pi[grp.vel_cols] = out[:3]
            if len(out) > 3:  # body-type end values (e.g. modal coordinates)
                extra.update(out[3])
    if cm.nj:
        nj = cm.nj
        s, lam, Rr, phi = np.empty((nj, 3)), np.empty((nj, 6)), np.empty((nj, 3, 3)), np.empty((nj, 3))
        march_kernels.end_values(te.end, lay.joint_view(U), _JPOS, st.s, _JMOM, st.lam, JPHI, st.Rr,
                                 False, s, lam, Rr, phi)
        acc = st.acc + phi
    else:
        s, Rr, lam, acc = st.s, st.Rr, st.lam, st.acc
    # re-orthonormalize the reference rotations (round-off only)
    R = _orthonormalize(R) if cm.nb else R
    Rr = _orthonormalize(Rr) if cm.nj else Rr
    new = ElementStart(t=st.t + h, x=x, R=R, pi=pi, s=s, Rr=Rr, lam=lam, acc=acc, lam_end=lam, extra=extra)
    if not cm.nj:
        return new
    # Gauge reset of the multipliers: (pi, lambda) -> (pi + Lambda, 0), so that the next element
    # starts with pi = p (the momenta) and lambda = 0: the multipliers stay impulses over one element
    # instead of growing without bound.  Lambda is the end value of the polynomial of the bodies'
    # multiplier momenta at the Gauss points (the transported multipliers with the transport moment
    # of joints._transport_moment), not the end multipliers transported with the end node's
    # levers: then the body momenta p = pi + Lambda are one polynomial over the element, the
    # Gauss collocation of Newton-Euler with the reactions at the Gauss points, and the element is
    # time-reversible (issue 8 section 3, docs/energy-drift.md).
    if transport:
        # the joints' impulse over the element (force; moment about x_B(t2)) is kept for the reactions
        Lam, new.lam_end = gauss_multiplier_end(cm, lay, te, st, h, U, cm.att_b.node_pose(cm, new)[0])
        new.pi = pi + Lam
    else:
        new.pi = pi + multiplier_momenta(cm, new, lam)
    new.lam = np.zeros(lam.shape)
    return new


def gauss_multiplier_end(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float,
                         U: NDArray, xb2: NDArray) -> tuple[NDArray, NDArray]:
    """End value ``Lambda_2 = sum_j e_j Lambda_j (nv,)`` of the bodies' multiplier momenta, from
    their values ``Lambda_j`` at the Gauss points (what the constitutive rows receive; the start
    value is zero after the gauge reset), and the joints' impulses over the element ``(nj, 6)``:
    ``h sum_i b_i Q_i`` (force) and ``h sum_i b_i (Q_m,i + (x_B,i - x_B2) x Q_f,i)`` (moment about
    ``xb2 (nj, 3)``, B's origins at the end node), ``Q_i = R_A Qbar_i`` the reactions at the Gauss
    points: what the bodies' momenta receive."""
    plain = _plain_layout(cm, lay)
    ek = ElementKin(te=te, h=h, st=st, lay=plain, groups=[], t_gauss=st.t + h * te.c, t_cons=st.t + h * te.tau_c)
    for grp in cm.groups:
        ek.groups.append(grp.unpack(ek, plain.group_view(U, grp.bodies, grp.slots)))
    res = np.zeros(plain.size)
    Ga, Gb = cm.att_a.pose(ek, "gauss"), cm.att_b.pose(ek, "gauss")
    onto_bodies(cm, ek, unpack_joints(plain, te, st, U), res, Triplets(jacobian=False), Ga, Gb)
    Lam = np.zeros(cm.nv)
    e = te.end[1:]
    for grp in cm.groups:
        nw = grp.vel_cols.shape[-1]
        rows = plain.group_view(res, grp.bodies, grp.slots)[..., grp.BW:grp.BW + nw]  # -Lambda_j
        Lam[grp.vel_cols] = -np.einsum("j,bjd->bd", e, rows)
    Qb = plain.joint_view(U)[..., JQ:JQ + 6]
    Qf = np.einsum("jiab,jib->jia", Ga.R, Qb[..., :3])
    Qm = np.einsum("jiab,jib->jia", Ga.R, Qb[..., 3:]) + rot.cross(Gb.x - xb2[:, None], Qf)
    impulse = h * np.einsum("i,jid->jd", te.b, np.concatenate([Qf, Qm], axis=-1))
    return Lam, impulse


def _plain_layout(cm: CompiledModel, lay: Layout) -> Layout:
    """A :class:`Layout` without index replay (the element system's records one sequence of index
    requests per evaluation, which an extra evaluation here must not disturb)."""
    if type(lay) is Layout:
        return lay
    cache = cm.cache.plain_layouts
    hit = cache.get(lay.p)
    if hit is None or hit.size != lay.size:
        hit = cache[lay.p] = Layout(cm.body_slots(), cm.group_of, cm.nj, lay.p)
    return hit


#: largest deviation ``max|I - R^T R|`` that the Newton-Schulz polar iteration handles; beyond it SVD
_POLAR_FAR = 0.5
#: deviation below which one more Newton-Schulz step is exact to round-off (error ~ 0.75 e^2)
_POLAR_NEAR = 1e-8
#: the polar iteration's ``(near, far)`` and the joints' slots with end values ``(s, lambda)``, as the
#: compiled node stage takes them (:mod:`flexmb.dynamics.node.stage`, :mod:`flexmb.dynamics.step.compiled_element`)
POLAR_TOL = (_POLAR_NEAR, _POLAR_FAR)
JOINT_END_SLOTS = (_JPOS, _JMOM)


def _orthonormalize(R: NDArray) -> NDArray:
    """Orthogonal polar factor ``U V^T`` of each ``R (..., 3, 3)`` (``R = U S V^T``, its SVD).

    The end-value rotations are orthonormal to a few ulps, so the Newton-Schulz iteration
    ``X <- X + X (I - X^T X) / 2`` (quadratic convergence to the same polar factor; compiled:
    :func:`flexmb.dynamics.march.kernels.polar`) replaces the batched SVD: one step when the deviation
    ``e = max|I - X^T X|`` is below ``_POLAR_NEAR`` (the next error, ~0.75 e^2, is below round-off), a few
    more up to ``_POLAR_FAR``; matrices farther from orthonormal, or not converged, go to the SVD;
    non-finite entries are passed through (as NaN), for the caller's finiteness checks."""
    R = np.asarray(R, dtype=float)
    if R.size == 0:
        return R.copy()
    X = np.array(R if R.ndim == 3 else R.reshape(-1, 3, 3), dtype=float)  # a contiguous copy, polished in place
    ok = np.empty(X.shape[0], dtype=np.bool_)
    if not march_kernels.polar(X, _POLAR_NEAR, _POLAR_FAR, ok):
        R0 = R.reshape(-1, 3, 3)
        far = ~ok & np.isfinite(R0.reshape(-1, 9)).all(axis=1)  # a NaN/inf stays visible (the SVD would raise)
        X[~ok] = R0[~ok]
        if far.any():
            u, _, vt = np.linalg.svd(R0[far])
            X[far] = u @ vt
    return X.reshape(R.shape)
