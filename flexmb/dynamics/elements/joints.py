"""Joint elements: relative kinematics, multipliers and constitutive laws, batched over joints.

A joint connects attachment frame A (on body a) to frame B (on body b).  Its unknowns at each
internal point are the relative coordinates ``q = (s, phi)``, the multipliers ``lambda`` (at the
origin of B, inertial components), the reaction ``Qbar`` (frame A) and the attachment-point
velocities ``nu_a``, ``nu_b``.  Rows, for joint ``j`` and internal point ``i`` (``k`` indexes the
constraint points ``tau_c``)::

    Rrel_s   = R_A(tau_k)^T (x_B - x_A)(tau_k) - u_s(tau_k)                 position level
    Rrel_phi = axial( (Rr1 exp(u_phi(tau_k)))^T R_A^T R_B (tau_k) )          position level
    Rlam     = D_i0 lam1 + sum_j D_ij Lam_j - h [R_A Qbar_i - S(v_B,i) Lam_i] multiplier definition
    Rc       = u_c(tau_k) - target_c(t_k)              constrained component c (held or driven)
             = Qbar_c,i + k (q_c,i - q_ref) + c qdot_c,i   free component c (ideal: k = c = 0)
    Rnu_a    = nu_a,i - (v_a + omega_a x r_a, omega_a)_i
    Rnu_b    = nu_b,i - (v_b + omega_b x r_b, omega_b)_i

with ``S(v) lam = (0, v x lam_f)``.  The bodies receive the multipliers (``+lambda`` at B's origin on
b, ``-lambda`` transported to A's origin on a), which is the only way joints act on bodies.  Poses,
attachment velocities and the multipliers' way into the bodies all go through
:mod:`flexmb.dynamics.elements.attachments`: this module never reads a body's unknowns.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from flexmb import rotations as rot
from flexmb.dynamics.elements import joint_kernels
from flexmb.dynamics import kernels
from flexmb.dynamics.elements.attachments import ElementKin, chain
from flexmb.dynamics.layout import JLAM, JNA, JNB, JPHI, JOINT_SLOTS, JQ, JS, Triplets
from flexmb.dynamics.time_elements import once_per_time_element

I3 = np.eye(3)
#: first slots of the joint unknowns, as the kernels read them
_SLOTS = np.array([JS, JPHI, JLAM, JQ, JNA, JNB], dtype=np.int64)
EY = np.array([0.0, 1.0, 0.0])
EX = np.array([1.0, 0.0, 0.0])


_EMPTY66 = np.empty((0, 0, 6, 6))


@lru_cache(maxsize=32)
def _eye6(nj: int, p: int):
    """``(nj, p, 6, 6)`` identities (read-only broadcast, built once per size)."""
    return np.broadcast_to(np.eye(6), (nj, p, 6, 6))


@once_per_time_element
def _consts(te, nj: int):
    """Jacobian values that depend on the time element and the number of joints only (read-only,
    built once): ``-E_kj I3 (nj, p, p, 3, 3)``, ``E_kj (nj, p, p, 1, 1)``, ``D_kj I6 (nj, p, p, 6, 6)``
    and ``-I6 (nj, p, 6, 6)`` (``E``, ``D`` without their start-node column)."""
    p = te.p
    Ecoef = np.broadcast_to(te.E[None, :, 1:], (nj, p, p))
    Dcoef = np.broadcast_to(te.D[None, :, 1:], (nj, p, p))
    return (-Ecoef[..., None, None] * I3, Ecoef[..., None, None], Dcoef[..., None, None] * np.eye(6),
            np.broadcast_to(-np.eye(6), (nj, p, 6, 6)))


@lru_cache(maxsize=32)
def _grid(nj: int, p: int):
    """Index grids (built once per size): joint and point ``(nj, p)``, and the expansion over
    (joint, k, j') ``(nj, p, p)`` of the couplings between internal points (read-only)."""
    jn = np.arange(nj)
    J2, I2 = np.meshgrid(jn, np.arange(p), indexing="ij")
    J3 = np.broadcast_to(jn[:, None, None], (nj, p, p))
    K3 = np.broadcast_to(np.arange(p)[None, :, None], (nj, p, p))
    P3 = np.broadcast_to(np.arange(p)[None, None, :], (nj, p, p))
    for a in (J2, I2):
        a.flags.writeable = False
    return J2, I2, J3, K3, P3


def _component_sets(cm):
    """Constrained and free (non-universal) components ``(jc, cc), (jf, cf)`` of the joints, kept
    on the compiled model until the constrained set changes (redundancy resolution)."""
    key = (cm.jnt_constrained.tobytes(), cm.jnt_universal.tobytes())
    hit = getattr(cm, "_joint_component_sets", None)
    if hit is None or hit[0] != key:
        cons, univ = cm.jnt_constrained, cm.jnt_universal
        hit = (key, np.nonzero(cons & ~univ[:, None]), np.nonzero(~cons & ~univ[:, None]))
        cm._joint_component_sets = hit
    return hit[1], hit[2]


@lru_cache(maxsize=32)
def _zeros_targets(nj: int, p: int):
    """Read-only ``(nj, 6, p)`` zeros: the drive targets of a model without drives."""
    z = np.zeros((nj, 6, p))
    z.flags.writeable = False
    return z


def _law_grids(cm, te):
    """Broadcast index grids of the constitutive laws' Jacobian blocks (read-only), kept on the
    compiled model with the component sets (:func:`_component_sets`) and the time element:
    constrained ``(Jc, Kc, Pc (mc, p, p), E_kj (mc, p, p, 1, 1))``, free ``(Jf, If (mf, p))``."""
    (jc, _), (jf, _) = _component_sets(cm)
    key = cm._joint_component_sets[0]
    hit = getattr(cm, "_joint_law_grids", None)
    if hit is None or hit[0] != key or hit[1] is not te:
        p = te.p
        Jc = np.broadcast_to(jc[:, None, None], (jc.size, p, p))
        Kc = np.broadcast_to(np.arange(p)[None, :, None], Jc.shape)
        Pc = np.broadcast_to(np.arange(p)[None, None, :], Jc.shape)
        Ev = np.broadcast_to(te.E[None, :, 1:], Jc.shape)[..., None, None]
        Jf = np.broadcast_to(jf[:, None], (jf.size, p))
        If = np.broadcast_to(np.arange(p)[None, :], Jf.shape)
        hit = cm._joint_law_grids = (key, te, (Jc, Kc, Pc, Ev), (Jf, If))
    return hit[2], hit[3]


def drive_targets(cm: CompiledModel, t: np.ndarray):
    """``(nj,6,len(t))`` drive values and rates; zeros where not driven."""
    f = np.zeros((cm.nj, 6, t.size))
    df = np.zeros((cm.nj, 6, t.size))
    for (j, c, fn, dfn) in cm.jnt_drives:
        f[j, c] = np.broadcast_to(np.asarray(fn(t), dtype=float), t.shape)
        df[j, c] = np.broadcast_to(np.asarray(dfn(t), dtype=float), t.shape)
    return f, df


def unpack_joints(lay, te, st, U):
    """The joints' unknowns at the Gauss points and their polynomials at the constraint points."""
    Jv = lay.joint_view(U)
    return SimpleNamespace(
        J=np.ascontiguousarray(Jv), S=Jv[..., JS:JS + 3], PHI=Jv[..., JPHI:JPHI + 3], LAM=Jv[..., JLAM:JLAM + 6], Q=Jv[..., JQ:JQ + 6],
        NA=Jv[..., JNA:JNA + 6], NB=Jv[..., JNB:JNB + 6],
        US=te.E[None, :, 0, None] * st.s[:, None] + np.einsum("kj,njd->nkd", te.E[:, 1:], Jv[..., JS:JS + 3]),
        UPHI=np.einsum("kj,njd->nkd", te.E[:, 1:], Jv[..., JPHI:JPHI + 3]),
    )


def joint_residual(cm, ek: ElementKin, jk, res: np.ndarray, trip: Triplets) -> None:
    """Rows of all joints and their Jacobian, and the multipliers' contribution to the bodies."""
    nj = cm.nj
    if nj == 0:
        return
    lay, te, h, st = ek.lay, ek.te, ek.h, ek.st
    p = te.p
    r = res[lay.joint_off:].reshape(nj, p, JOINT_SLOTS)
    J2, I2, J3, K3, P3 = _grid(nj, p)

    # ------------------------------------------------------------------ attachment frames and velocities
    Pa = cm.att_a.pose(ek, "cons")
    Pb = cm.att_b.pose(ek, "cons")
    Ga = cm.att_a.pose(ek, "gauss")
    Gb = cm.att_b.pose(ek, "gauss")
    Va = cm.att_a.velocity(ek)
    Vb = cm.att_b.velocity(ek)
    jac = trip.jacobian  # False: residual only, no Jacobian values are computed

    # ------------------------------------------------------------------ rows (compiled kernel)
    # relative kinematics at the constraint points, multiplier definition and attachment velocities
    # at the Gauss points (flexmb.dynamics.kernels.joint_rows)
    Rrt = np.empty((nj, p, 3, 3))
    dphi, dA, dB, dpsi = ((np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6)),
                           np.empty((nj, p, 6, 6))) if jac else (np.empty((0, 0, 3, 3)),) + (np.empty((0, 0, 6, 6)),) * 3)
    c = np.ascontiguousarray
    kernels.joint_rows(te.E, te.D, float(h), c(st.s), c(st.lam), c(st.Rr), jk.J, Pa.x, Pa.R, Pb.x, Pb.R, c(Ga.R),
                       c(Va.nu), c(Vb.nu), _SLOTS, r, Rrt, dphi, dA, dB, dpsi, jac)

    if jac:
        mEI3, Ecoef5, DI6, minus = _consts(te, nj)
        # relative kinematics: / joint s and phi at all internal points, / attachment poses (dx, psi)
        trip.add(lay.joint(J3, K3, JS, 3), lay.joint(J3, P3, JS, 3), mEI3)
        trip.add(lay.joint(J3, K3, JPHI, 3), lay.joint(J3, P3, JPHI, 3), Ecoef5 * dphi[:, :, None])
        rows_rel = lay.joint(J2, I2, JS, 6)
        chain(trip, rows_rel, dA, Pa.jac)
        chain(trip, rows_rel, dB, Pb.jac)
        # multiplier definition (values at the Gauss points: joint_kernels.multiplier_blocks)
        sNB, sL, bdR = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6))
        joint_kernels.multiplier_blocks(float(h), jk.J, _SLOTS, c(Ga.R), sNB, bdR, sL)
        trip.add(lay.joint(J3, K3, JLAM, 6), lay.joint(J3, P3, JLAM, 6), DI6)
        trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JLAM, 3), sNB)
        trip.add(lay.joint(J2, I2, JLAM, 6), lay.joint(J2, I2, JQ, 6), bdR)
        trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JNB, 3), sL)
        chain(trip, lay.joint(J2, I2, JLAM, 6), dpsi, Ga.jac)
        # attachment velocities
        for slot, V in ((JNA, Va), (JNB, Vb)):
            trip.add_diag(lay.joint(J2, I2, slot, 6), lay.joint(J2, I2, slot, 6), 1.0)
            chain(trip, lay.joint(J2, I2, slot, 6), minus, V.jac)

    # ------------------------------------------------------------------ constitutive laws
    _constitutive(cm, ek, jk, r, trip, Rrt, Ga, Gb, J2, I2)

    # ------------------------------------------------------------------ multipliers onto the bodies
    onto_bodies(cm, ek, jk, res, trip, Ga, Gb)


def onto_bodies(cm, ek: ElementKin, jk, res: np.ndarray, trip: Triplets, Ga=None, Gb=None) -> None:
    """The multipliers' generalized momenta on the bodies' constitutive rows (Gauss points):
    ``+lambda`` at B's origin on body b, ``-lambda`` transported across ``x_B - x_A`` on body a,
    plus the collocation-consistent transport moment ``mu`` of each side (:func:`_transport_moment`).
    ``Ga``, ``Gb``: the attachment poses at the Gauss points (computed when None)."""
    lay, p, nj = ek.lay, ek.te.p, cm.nj
    Ga = cm.att_a.pose(ek, "gauss") if Ga is None else Ga
    Gb = cm.att_b.pose(ek, "gauss") if Gb is None else Gb
    J2, I2 = _grid(nj, p)[:2]
    jac = trip.jacobian
    L = jk.LAM
    # side A: wa = -(lam_f, lam_m + (x_B - x_A) x lam_f), its derivatives / lam and / (dx, psi) of B
    # (that of A is the opposite) (compiled: joint_kernels.side_a_wrench)
    wa = np.empty((nj, p, 6))
    dW_lam, dW_xb = (np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6))) if jac else (_EMPTY66, _EMPTY66)
    joint_kernels.side_a_wrench(L, Ga.x, Gb.x, wa, dW_lam, dW_xb, jac)
    if not jac:
        cm.att_b.scatter(ek, res, trip, L, "multiplier")
        cm.att_a.scatter(ek, res, trip, wa, "multiplier")
    else:
        cm.att_b.scatter(ek, res, trip, L, "multiplier", [(lay.joint(J2, I2, JLAM, 6), _eye6(nj, p))])
        cm.att_a.scatter(ek, res, trip, wa, "multiplier",
                         [(lay.joint(J2, I2, JLAM, 6), dW_lam), (Gb.jac, dW_xb), (Ga.jac, -dW_xb)])
    if consistent_transport(ek.te):
        _transport_moment(cm, ek, jk, res, trip, Gb, cm.att_b, 1.0)
        _transport_moment(cm, ek, jk, res, trip, Gb, cm.att_a, -1.0)


def consistent_transport(te) -> bool:
    """Whether the time element uses the collocation-consistent transport of the multipliers
    (:func:`_transport_moment` and the matching gauge reset): ``te.transport == "consistent"``,
    which :meth:`~flexmb.dynamics.time_elements.TimeElement.of_order` allows for odd ``p`` only.

    The end value weighs the start value by ``e_0 = (-1)^p``.  The part of the node momenta normal to
    the constraints (absorbed by the reactions, no work) is therefore reflected at every node for
    odd ``p`` and stays bounded, while for even ``p`` it is carried over unchanged and accumulates
    the element's residue: with the consistent transport, p = 2 at 24 steps per period gains a
    radial momentum of 0.09 kg m/s per period on the pendulum and its energy error grows like t^2
    (docs/energy-drift.md).  The default stays ``"node"``: the consistent transport has a 2-5x larger
    error constant at p = 3 and costs ~1.4 ms per element (measured, docs/energy-drift.md).  The
    ``"symmetric"`` transport (any ``p``) uses this element and removes that mode by the symmetric
    projection of the node momenta (:mod:`flexmb.dynamics.variants.symmetric_projection`)."""
    tr = getattr(te, "transport", "node")
    return tr == "symmetric" or (tr == "consistent" and te.p % 2 == 1)


@once_per_time_element
def _dinv(te):
    """``A = D[:, 1:]^-1``, ``D[:, 1:]`` (p x p), ``AD[j, i, k] = A_ji D_ik`` and ``delta_jk (1, p, p, 1, 1)``
    of a time element (computed once per time element)."""
    Dh = np.ascontiguousarray(te.D[:, 1:], dtype=float)
    A = np.linalg.inv(Dh)
    return A, Dh, A[:, :, None] * Dh[None, :, :], np.eye(te.p)[None, :, :, None, None]


def transport_moment(te, h: float, f, r, rd):
    """``mu (m, p, 3)`` of :func:`_transport_moment` for forces ``f``, levers ``r`` and their rates
    ``rd`` at the Gauss points (each ``(m, p, 3)``), and ``sum_k D_ik f_k``.  With ``r = x_B - y`` and
    ``rd = v_B`` (``y`` a fixed point) ``lambda_m + r x lambda_f + mu`` is the polynomial of the
    joint's moment impulse about ``y`` that collocates ``Q_m + (x_B - y) x Q_f``
    (:func:`flexmb.dynamics.node.reactions.element_record`)."""
    A, Dh = _dinv(te)[:2]
    Df = np.einsum("ik,mkd->mid", Dh, f)
    rhs = rot.cross(r, Df) - np.einsum("ik,mkd->mid", Dh, rot.cross(r, f)) + h * rot.cross(rd, f)
    return np.einsum("ji,mid->mjd", A, rhs), Df


def _transport_moment(cm, ek: ElementKin, jk, res, trip, Gb, att, sign: float) -> None:
    """Collocation-consistent transport of the multipliers onto one side's bodies (issue 8 §3).

    The side's force ``f = sign lambda_f`` acts at ``P = x_B`` with the lever ``r = P - x_ref``
    from the body's reference point (``x``, velocity ``v``: the first slots of its ``x`` and ``w``).
    The bodies receive ``B_i^T (sign lambda_i)`` at the Gauss points, an interpolation of the
    transported multipliers; the time element's momentum polynomial must instead collocate the
    balance with the reaction's wrench ``B^T Q`` at every Gauss point.  The difference is a moment
    about the reference point ``mu`` (zero at the start node, where ``lambda_1 = 0``)::

        sum_j D_ij mu_j = r_i x (sum_j D_ij f_j) - sum_j D_ij (r_j x f_j) + h rdot_i x f_i,
        rdot_i = nu_B,i - v_i                                        (D = D[:, 1:], p x p)

    (p = 1: ``mu = (h/2) rdot x f``), added to the moment rows of the constitutive law
    (``-mu``: same sign as the multipliers).  With it the body momenta ``p = pi + Lambda`` of the
    element are the Gauss collocation of Newton-Euler with the reactions at the Gauss points, the
    gauge reset extrapolates the same polynomial (:func:`flexmb.dynamics.march.marching.end_values`) and
    the element is symmetric (time-reversible), which removes the secular energy growth.
    """
    lay, te, h = ek.lay, ek.te, ek.h
    p = te.p
    if not att.parts:
        return
    A, Dh, AD, eye = _dinv(te)
    jac = trip.jacobian
    ip = np.arange(p)
    for g, mask, local, data in att.parts:
        grp, kin = att.groups[g], ek.groups[g]
        b = grp.bodies[local]
        jn = np.nonzero(mask)[0]
        m = jn.size
        f = sign * jk.LAM[mask][..., :3]                     # (m,p,3)
        r = Gb.x[mask] - kin.X[local]                        # (m,p,3)
        rd = jk.NB[mask][..., :3] - kin.W[local][..., :3]    # (m,p,3)
        mu, Df = transport_moment(te, h, f, r, rd)
        rows = lay.body(b[:, None], ip[None], grp.BW + 3, 3)  # (m,p,3)
        np.add.at(res, rows, -mu)
        if not jac:
            continue
        # d mu_j / d f_k = sum_i A_ji D_ik skew(r_i) - delta_jk skew(r_k) + h A_jk skew(rdot_k)
        Cr = np.einsum("jik,mid->mjkd", AD, r)
        d_f = rot.skew(Cr) - eye * rot.skew(r)[:, None] \
            + h * A[None, :, :, None, None] * rot.skew(rd)[:, None]
        # d mu_j / d r_k = -A_jk skew(Df_k) + delta_jk skew(f_k);  d mu_j / d rdot_k = -h A_jk skew(f_k)
        d_r = -A[None, :, :, None, None] * rot.skew(Df)[:, None] + eye * rot.skew(f)[:, None]
        d_rd = -h * A[None, :, :, None, None] * rot.skew(f)[:, None]
        R4 = np.broadcast_to(rows[:, :, None, :], (m, p, p, 3))
        Jj = np.broadcast_to(jn[:, None, None], (m, p, p))
        Kk = np.broadcast_to(ip[None, None, :], (m, p, p))
        Bk = np.broadcast_to(b[:, None, None], (m, p, p))
        trip.add(R4, lay.joint(Jj, Kk, JLAM, 3), -sign * d_f)
        trip.add(R4, lay.joint(Jj, Kk, JNB, 3), -d_rd)
        trip.add(R4, lay.body(Bk, Kk, grp.BW, 3), d_rd)
        trip.add(R4, lay.body(Bk, Kk, grp.BX, 3), d_r)
        for jc in Gb.jac:  # r depends on x_B (body b's pose at the Gauss points)
            mm = jc.mask & mask
            if not mm.any():
                continue
            sel = mm[mask]          # entries of this side's part
            inner = mm[jc.mask]     # entries of the pose block
            cols = jc.cols[inner]   # (m', p, c)
            c = cols.shape[-1]
            vals = np.einsum("mjkde,mkec->mjkdc", -d_r[sel], jc.J[inner][..., :3, :])
            trip.add(R4[sel], np.broadcast_to(cols[:, None], (sel.sum(), p, p, c)), vals)


def _constitutive(cm, ek, jk, r, trip, Rrt, Ga, Gb, J2, I2):
    lay, te, st = ek.lay, ek.te, ek.st
    nj, p = cm.nj, te.p
    cons = cm.jnt_constrained
    tgt = drive_targets(cm, ek.t_cons)[0] if cm.jnt_drives else _zeros_targets(nj, p)
    # constrained: u_c(tau_k) + acc_c - target_c; free: Qbar_c + k (q_c + acc_c - ref_c) + c qdot_c
    # (qdot in frame A from the attachment velocities nu; compiled: joint_kernels.constitutive_rows)
    joint_kernels.constitutive_rows(jk.J, _SLOTS, jk.US, jk.UPHI, st.acc, tgt, Ga.x, Ga.R, Gb.x,
                                    cm.jnt_k, cm.jnt_c, cm.jnt_ref, cons, r, JQ)
    rc = r[..., JQ:JQ + 6]

    # universal joints: cross condition on comp 5, moment along y_B free on comp 4
    univ = cm.jnt_universal
    if univ.any():
        u = np.where(univ)[0]
        rc[u, :, 5] = Rrt[u][..., 0, 1]
        Rr_g = st.Rr[u][:, None] @ rot.exp(jk.PHI[u])
        rc[u, :, 4] = np.einsum("jid,jid->ji", jk.Q[u][..., 3:], Rr_g @ EY)
    if not trip.jacobian:
        return

    # Jacobian of the constitutive rows
    (jc, cc_idx), (jf, cf) = _component_sets(cm)
    (Jc, Kc, Pc, Ev), (Jf, If) = _law_grids(cm, te)
    if jc.size:
        # constrained: u_c(tau_k) depends on q_c at all internal points through E
        rows = (lay.joint(Jc, Kc, JQ, 1)[..., 0] + cc_idx[:, None, None])[..., None]
        cols = (lay.joint(Jc, Pc, JS, 1)[..., 0] + cc_idx[:, None, None])[..., None]
        trip.add(rows, cols, Ev)
    if univ.any():
        ju = np.where(univ)[0]
        Jc = np.broadcast_to(ju[:, None, None], (ju.size, p, p))
        Kc = np.broadcast_to(np.arange(p)[None, :, None], Jc.shape)
        Pc = np.broadcast_to(np.arange(p)[None, None, :], Jc.shape)
        for c in range(3):
            trip.add(lay.joint(Jc, Kc, JQ + c, 1), lay.joint(Jc, Pc, JS + c, 1),
                     np.broadcast_to(te.E[None, :, 1:], Jc.shape)[..., None, None])
        # comp 5: g = ex . Rr ey, dg/dphi = -(Rr^T ex)^T skew(ey) T(phi)^T
        gphi = -np.einsum("jkd,de,jkef->jkf", np.swapaxes(Rrt[ju], -1, -2) @ EX, rot.skew(EY),
                          np.swapaxes(rot.tangent(jk.UPHI[ju]), -1, -2))
        trip.add(lay.joint(Jc, Kc, JQ + 5, 1), lay.joint(Jc, Pc, JPHI, 3),
                 te.E[None, :, 1:, None, None] * gphi[:, :, None, None, :])
        # comp 4: Qm . (Rr_i ey): / Qm and / phi_i
        Rr_g = st.Rr[ju][:, None] @ rot.exp(jk.PHI[ju])
        Ju, Iu = J2[ju], I2[ju]
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JQ + 3, 3), (Rr_g @ EY)[..., None, :])
        dphi4 = -np.einsum("jid,jide,ef,jifg->jig", jk.Q[ju][..., 3:], Rr_g, rot.skew(EY),
                           np.swapaxes(rot.tangent(jk.PHI[ju]), -1, -2))
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JPHI, 3), dphi4[..., None, :])
        trip.add_diag(lay.joint(Ju, Iu, JQ + 3, 1), lay.joint(Ju, Iu, JQ + 3, 1), 1.0)
    # free components (non-universal): Qbar_c + k q_c + c qdot_c
    if jf.size:
        row = lay.joint(Jf, If, JQ, 1)[..., 0] + cf[:, None]
        trip.add_diag(row, lay.joint(Jf, If, JQ, 1)[..., 0] + cf[:, None], 1.0)
        trip.add_diag(row, lay.joint(Jf, If, JS, 1)[..., 0] + cf[:, None], cm.jnt_k[jf, cf][:, None])
        damp = cm.jnt_c[jf, cf] != 0
        if damp.any():
            dg = Gb.x - Ga.x
            urel = jk.NB[..., :3] - jk.NA[..., :3] - rot.cross(jk.NA[..., 3:], dg)
            Rat_g = np.swapaxes(Ga.R, -1, -2)
            _damping_jacobian(cm, ek, jk, trip, jf[damp], cf[damp], row[damp], Rat_g, urel, dg, Ga, Gb)


def _damping_jacobian(cm, ek, jk, trip, jf, cf, row, Rat_g, urel, dg, Ga, Gb):
    """Jacobian of ``c * qdot_c`` for damped free components (qdot from nu, frame A)."""
    lay, p = ek.lay, ek.te.p
    n = jf.size
    cval = cm.jnt_c[jf, cf]
    Jf = np.broadcast_to(jf[:, None], (n, p))
    If = np.broadcast_to(np.arange(p)[None, :], Jf.shape)
    rot_c = cf >= 3
    ccomp = np.where(rot_c, cf - 3, cf)
    e_row = Rat_g[jf][np.arange(n)[:, None], If, ccomp[:, None]]  # (n,p,3) row of R_A^T
    scale = cval[:, None, None]
    row_ = row[..., None]
    # rotational: wrel = R_A^T (om_b - om_a) ; translational: sdot = R_A^T (v_b - v_a - om_a x d)
    trip.add(row_, lay.joint(Jf, If, JNB, 3), np.where(rot_c[:, None, None], 0.0, scale * e_row)[..., None, :])
    trip.add(row_, lay.joint(Jf, If, JNA, 3), np.where(rot_c[:, None, None], 0.0, -scale * e_row)[..., None, :])
    trip.add(row_, lay.joint(Jf, If, JNB + 3, 3), np.where(rot_c[:, None, None], scale * e_row, 0.0)[..., None, :])
    om_a = jk.NA[jf][..., 3:]
    val_oma = np.where(rot_c[:, None, None], -scale * e_row, scale * np.einsum("nid,nide->nie", e_row, rot.skew(dg[jf])))
    trip.add(row_, lay.joint(Jf, If, JNA + 3, 3), val_oma[..., None, :])
    # dependence on the attachment poses: frame A turns (R_A^T u), d = x_B - x_A moves
    u_vec = np.where(rot_c[:, None, None], jk.NB[jf][..., 3:] - jk.NA[jf][..., 3:], urel[jf])
    dd = np.where(rot_c[:, None, None], 0.0, -scale * np.einsum("nid,nide->nie", e_row, rot.skew(om_a)))
    # rows of all six law components of the damped joints (zero blocks for the undamped ones)
    dA6 = np.zeros((cm.nj, p, 6, 6))
    dA6[jf, :, cf, 3:] = scale * np.einsum("nid,nide->nie", e_row, rot.skew(u_vec))
    dA6[jf, :, cf, :3] = -dd
    dB6 = np.zeros_like(dA6)
    dB6[..., :3] = -dA6[..., :3]
    sel = np.zeros(cm.nj, bool)
    sel[jf] = True
    J2, I2 = _grid(cm.nj, p)[:2]
    rows6 = lay.joint(J2, I2, JQ, 6)
    chain(trip, rows6, dA6, Ga.jac, sel=sel)
    chain(trip, rows6, dB6, Gb.jac, sel=sel)
