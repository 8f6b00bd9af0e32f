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
             = Qbar_m . (Rr1 exp(phi_i) e_y),  (Rr1 exp(u_phi(tau_i)))[0, 1]   universal c = 4, 5
    Rnu_a    = nu_a,i - (v_a + omega_a x r_a, omega_a)_i
    Rnu_b    = nu_b,i - (v_b + omega_b x r_b, omega_b)_i

with ``S(v) lam = (0, v x lam_f)``.  The bodies receive the multipliers (``+lambda`` at B's origin on
b, ``-lambda`` transported to A's origin on a), which is the only way joints act on bodies.  Poses,
attachment velocities and the multipliers' way into the bodies all go through
:mod:`flexmb.dynamics.elements.attachments`; every value (rows and Jacobian) comes from the compiled
joint laws, :mod:`flexmb.dynamics.elements.joint_law`, the one implementation that every path calls.
This module places them: index grids, Jacobian blocks, the chain rule through the attachments.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from flexmb.dynamics.elements import joint_law
from flexmb.dynamics.elements.attachments import ElementKin, chain
from flexmb.dynamics.elements.joint_law import FREE, HELD, component_kinds
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import JLAM, JNA, JNB, JPHI, JOINT_SLOTS, JQ, JS, Triplets
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.time_elements import once_per_time_element

#: first slots of the joint unknowns, as the kernels read them
SLOTS = np.array([JS, JPHI, JLAM, JQ, JNA, JNB], dtype=np.int64)

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
    return (-Ecoef[..., None, None] * np.eye(3), Ecoef[..., None, None], Dcoef[..., None, None] * np.eye(6),
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
    return (*frozen((J2, I2)), J3, K3, P3)


def law_data(cm, sel=None) -> SimpleNamespace:
    """The joints' laws as the kernels read them under the constraint selection ``sel`` (the layout's,
    ``lay.selection``: :class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set),
    kept in ``cm.cache`` until the selection changes (redundancy resolution): ``kind (nj, 6)``
    (:func:`~flexmb.dynamics.elements.joint_law.component_kinds`), ``k``, ``c``, ``ref (nj, 6)``
    contiguous; the components of each Jacobian block: held ``(jh, mh)``, free ``(jf, mf)``, damped free
    ``(jd, md)`` and ``damped (nj,)`` (joints with one), universal joints ``ju``."""
    sel = sel if sel is not None else Selection.full(cm)
    hit = cm.cache.joint_laws
    if hit is None or hit.key != sel.key:
        kind = component_kinds(sel.constrained, sel.universal)
        c = np.ascontiguousarray(cm.jnt_c, dtype=float)
        jd, md = np.nonzero((kind == FREE) & (c != 0))
        damped = np.zeros(cm.nj, bool)
        damped[jd] = True
        kind, k, c, ref = frozen((kind, np.asarray(cm.jnt_k, dtype=float), c, np.asarray(cm.jnt_ref, dtype=float)))
        hit = SimpleNamespace(key=sel.key, kind=kind, k=k, c=c, ref=ref, held=np.nonzero(kind == HELD),
                              free=np.nonzero(kind == FREE), damp=(jd, md), damped=damped,
                              any_damped=bool(jd.size), ju=np.nonzero(sel.universal)[0], grids={})
        cm.cache.joint_laws = hit
    return hit


def _law_grids(law, te):
    """Broadcast index grids of the law rows' Jacobian blocks (read-only, kept with :func:`law_data`
    per time element): held ``(J, K, P (mh, p, p), m (mh,))``, free ``(J, I (mf, p))``, damped
    ``(J, I (md, p))``, universal ``(J, K, P (nu, p, p))``, ``(J, I (nu, p))``."""
    hit = law.grids.get(id(te))
    if hit is None or hit[0] is not te:
        p = te.p

        def grid3(j):
            J = np.broadcast_to(j[:, None, None], (j.size, p, p))
            return J, np.broadcast_to(np.arange(p)[None, :, None], J.shape), np.broadcast_to(np.arange(p)[None, None, :], J.shape)

        def grid2(j):
            J = np.broadcast_to(j[:, None], (j.size, p))
            return J, np.broadcast_to(np.arange(p)[None, :], J.shape)

        hit = law.grids[id(te)] = (te, grid3(law.held[0]), grid2(law.free[0]), grid2(law.damp[0]),
                                   grid3(law.ju), grid2(law.ju))
    return hit[1:]


@lru_cache(maxsize=32)
def _zeros_targets(nj: int, p: int):
    """Read-only ``(nj, 6, p)`` zeros: the drive targets of a model without drives."""
    return frozen(np.zeros((nj, 6, p)))


def drive_targets(cm, t: np.ndarray):
    """``(nj,6,len(t))`` drive values and rates; zeros where not driven."""
    f = np.zeros((cm.nj, 6, t.size))
    df = np.zeros((cm.nj, 6, t.size))
    for (j, c, fn, dfn) in cm.jnt_drives:  # (a scalar or a (t.size,) value broadcast by the assignment)
        f[j, c] = np.asarray(fn(t), dtype=float)
        df[j, c] = np.asarray(dfn(t), dtype=float)
    return f, df


def constraint_targets(cm, t_cons: np.ndarray) -> np.ndarray:
    """Drive values ``(nj, 6, p)`` at the constraint points ``t_cons`` (:func:`drive_targets`; zeros
    without drives), kept for the last ``t_cons`` asked for (every Newton iteration of an element asks
    for the same times; the drives are functions of time).  Read-only, like every constant the kernels
    read (:func:`flexmb.dynamics.kernels.frozen`: one compiled signature)."""
    if not cm.jnt_drives:
        return _zeros_targets(cm.nj, t_cons.size)
    key = t_cons.tobytes()
    hit = cm.cache.drive_targets
    if hit is None or hit[0] != key:
        hit = cm.cache.drive_targets = (key, frozen(drive_targets(cm, t_cons)[0]))
    return hit[1]


def unpack_joints(lay, te, st, U):
    """The joints' unknowns at the Gauss points (views of ``U`` by slot; ``J (nj, p, 30)`` contiguous)."""
    Jv = lay.joint_view(U)
    return SimpleNamespace(
        J=np.ascontiguousarray(Jv), S=Jv[..., JS:JS + 3], PHI=Jv[..., JPHI:JPHI + 3], LAM=Jv[..., JLAM:JLAM + 6],
        Q=Jv[..., JQ:JQ + 6], NA=Jv[..., JNA:JNA + 6], NB=Jv[..., JNB:JNB + 6],
    )


def joint_residual(cm, ek: ElementKin, jk, res: np.ndarray, trip: Triplets) -> None:
    """Rows of all joints and their Jacobian, and the multipliers' contribution to the bodies.

    The values come from the joint laws (:mod:`flexmb.dynamics.elements.joint_law`); the Jacobian
    blocks are added in this order (the fused evaluator,
    :mod:`flexmb.dynamics.solve.fused`, writes its values in the same order; an attachment set's blocks
    come per body group of the set, rigid before modal):

    1. relative position / s, relative rotation / phi (all internal points), relative rows / the
       poses of A, then of B, at the constraint points;
    2. multiplier rows / lambda, lambda_f, Qbar, v_B, then / the pose of A at the Gauss points;
    3. attachment velocity rows / nu_a, / body a, then / nu_b, / body b;
    4. law rows (:func:`_law_jacobian`): held / u, free / Qbar, free / q, damped / (nu_a, nu_b),
       damped / the poses of A, then of B (Gauss points), universal cross / phi, moment / Qbar_m,
       moment / phi;
    5. the multipliers onto the bodies (:func:`onto_bodies`).
    """
    nj = cm.nj
    if nj == 0:
        return
    lay, te, h, st = ek.lay, ek.te, ek.h, ek.st
    p = te.p
    r = res[lay.joint_off:].reshape(nj, p, JOINT_SLOTS)
    J2, I2, J3, K3, P3 = _grid(nj, p)
    law = law_data(cm, lay.selection)

    # ------------------------------------------------------------------ attachment frames and velocities
    Pa = cm.att_a.pose(ek, "cons")
    Pb = cm.att_b.pose(ek, "cons")
    Ga = cm.att_a.pose(ek, "gauss")
    Gb = cm.att_b.pose(ek, "gauss")
    Va = cm.att_a.velocity(ek)
    Vb = cm.att_b.velocity(ek)
    jac = trip.jacobian  # False: residual only, no Jacobian values are computed

    # ------------------------------------------------------------------ rows (compiled joint laws)
    Rrt, US, UPHI = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3)), np.empty((nj, p, 3))
    dphi, dA, dB, dpsi = ((np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6)),
                           np.empty((nj, p, 6, 6))) if jac else (np.empty((0, 0, 3, 3)),) + (np.empty((0, 0, 6, 6)),) * 3)
    c = np.ascontiguousarray
    GaR = c(Ga.R)
    joint_law.joint_rows(te.E, te.D, float(h), c(st.s), c(st.lam), c(st.Rr), jk.J, Pa.x, Pa.R, Pb.x, Pb.R, GaR,
                         c(Va.nu), c(Vb.nu), SLOTS, r, Rrt, US, UPHI, dphi, dA, dB, dpsi, jac)
    tgt = constraint_targets(cm, ek.t_cons)
    law_nu, law_dA, law_dB = ((np.zeros((nj, p, 6, 12)), np.zeros((nj, p, 6, 6)), np.zeros((nj, p, 6, 6)))
                              if jac and law.any_damped else (np.empty((0, 0, 6, 12)),) + (_EMPTY66,) * 2)
    uni = np.empty((nj, p, 9) if jac and law.ju.size else (0, 0, 9))
    joint_law.law_rows(jk.J, SLOTS, US, UPHI, Rrt, c(st.Rr), c(st.acc), tgt, c(Ga.x), GaR, c(Gb.x),
                       law.k, law.c, law.ref, law.kind, r, jac, law_nu, law_dA, law_dB, uni)

    if jac:
        mEI3, Ecoef5, DI6, minus = _consts(te, nj)
        # relative kinematics: / joint s and phi at all internal points, / attachment poses (dx, psi)
        trip.add(lay.joint(J3, K3, JS, 3), lay.joint(J3, P3, JS, 3), mEI3)
        trip.add(lay.joint(J3, K3, JPHI, 3), lay.joint(J3, P3, JPHI, 3), Ecoef5 * dphi[:, :, None])
        rows_rel = lay.joint(J2, I2, JS, 6)
        chain(trip, rows_rel, dA, Pa.jac)
        chain(trip, rows_rel, dB, Pb.jac)
        # multiplier definition (values at the Gauss points: joint_law.multiplier_blocks)
        sNB, sL, bdR = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6))
        joint_law.multiplier_blocks(float(h), jk.J, SLOTS, GaR, sNB, bdR, sL)
        trip.add(lay.joint(J3, K3, JLAM, 6), lay.joint(J3, P3, JLAM, 6), DI6)
        trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JLAM, 3), sNB)
        trip.add(lay.joint(J2, I2, JLAM, 6), lay.joint(J2, I2, JQ, 6), bdR)
        trip.add(lay.joint(J2, I2, JLAM + 3, 3), lay.joint(J2, I2, JNB, 3), sL)
        chain(trip, lay.joint(J2, I2, JLAM, 6), dpsi, Ga.jac)
        # attachment velocities
        for slot, V in ((JNA, Va), (JNB, Vb)):
            trip.add_diag(lay.joint(J2, I2, slot, 6), lay.joint(J2, I2, slot, 6), 1.0)
            chain(trip, lay.joint(J2, I2, slot, 6), minus, V.jac)
        _law_jacobian(cm, law, ek, trip, Ga, Gb, law_nu, law_dA, law_dB, uni)

    # ------------------------------------------------------------------ multipliers onto the bodies
    onto_bodies(cm, ek, jk, res, trip, Ga, Gb)


def _law_jacobian(cm, law, ek, trip, Ga, Gb, law_nu, law_dA, law_dB, uni) -> None:
    """Jacobian blocks of the law rows (order: :func:`joint_residual`, item 4); the values that are
    not constants come from :func:`flexmb.dynamics.elements.joint_law.law_rows`."""
    lay, te = ek.lay, ek.te
    p, nj = te.p, cm.nj
    (Jh, Kh, Ph), (Jf, If), (Jd, Id), (Ju3, Ku3, Pu3), (Ju, Iu) = _law_grids(law, te)
    (jh, mh), (jf, mf), (jd, md) = law.held, law.free, law.damp
    if jh.size:  # held: u_m(tau_k) depends on q_m at all internal points through E
        rows = (lay.joint(Jh, Kh, JQ, 1)[..., 0] + mh[:, None, None])[..., None]
        cols = (lay.joint(Jh, Ph, JS, 1)[..., 0] + mh[:, None, None])[..., None]
        trip.add(rows, cols, np.broadcast_to(te.E[None, :, 1:], Jh.shape)[..., None, None])
    if jf.size:  # free: Qbar_m + k q_m (+ c qdot_m)
        row = lay.joint(Jf, If, JQ, 1)[..., 0] + mf[:, None]
        trip.add_diag(row, lay.joint(Jf, If, JQ, 1)[..., 0] + mf[:, None], 1.0)
        trip.add_diag(row, lay.joint(Jf, If, JS, 1)[..., 0] + mf[:, None], law.k[jf, mf][:, None])
    if jd.size:  # dampers: / (nu_a, nu_b), / the attachment poses at the Gauss points
        rows = (lay.joint(Jd, Id, JQ, 1) + md[:, None, None])
        cols = np.concatenate([lay.joint(Jd, Id, JNA, 6), lay.joint(Jd, Id, JNB, 6)], axis=-1)
        trip.add(rows, cols, law_nu[jd, :, md][:, :, None, :])
        J2, I2 = _grid(nj, p)[:2]
        rows6 = lay.joint(J2, I2, JQ, 6)
        chain(trip, rows6, law_dA, Ga.jac, sel=law.damped)
        chain(trip, rows6, law_dB, Gb.jac, sel=law.damped)
    if law.ju.size:  # universal: the cross / phi (all points, through E), the moment / Qbar_m and / phi
        trip.add(lay.joint(Ju3, Ku3, JQ + 5, 1), lay.joint(Ju3, Pu3, JPHI, 3),
                 te.E[None, :, 1:, None, None] * uni[law.ju][:, :, None, None, 0:3])
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JQ + 3, 3), uni[law.ju][..., None, 3:6])
        trip.add(lay.joint(Ju, Iu, JQ + 4, 1), lay.joint(Ju, Iu, JPHI, 3), uni[law.ju][..., None, 6:9])


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
    # (that of A is the opposite) (compiled: joint_law.side_a_wrench)
    wa = np.empty((nj, p, 6))
    dW_lam, dW_xb = (np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6))) if jac else (_EMPTY66, _EMPTY66)
    joint_law.side_a_wrench(np.ascontiguousarray(L), Ga.x, Gb.x, wa, dW_lam, dW_xb, jac)
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
def transport_matrices(te):
    """``A = D[:, 1:]^-1`` and ``D[:, 1:]`` (p x p, contiguous) of a time element (computed once)."""
    Dh = np.ascontiguousarray(te.D[:, 1:], dtype=float)
    return np.ascontiguousarray(np.linalg.inv(Dh)), Dh


def transport_moment(te, h: float, f, r, rd):
    """``mu (m, p, 3)`` of :func:`_transport_moment` for forces ``f``, levers ``r`` and their rates
    ``rd`` at the Gauss points (each ``(m, p, 3)``; compiled:
    :func:`flexmb.dynamics.elements.joint_law.transport_moment`).  With ``r = x_B - y`` and ``rd = v_B``
    (``y`` a fixed point) ``lambda_m + r x lambda_f + mu`` is the polynomial of the joint's moment
    impulse about ``y`` that collocates ``Q_m + (x_B - y) x Q_f``
    (:func:`flexmb.dynamics.node.reactions.element_record`)."""
    A, Dh = transport_matrices(te)
    c = np.ascontiguousarray
    f, r, rd = c(f, dtype=float), c(r, dtype=float), c(rd, dtype=float)
    mu, Df = np.empty(f.shape), np.empty(f.shape)
    z = np.empty((0, 0, 0, 3, 3))
    joint_law.transport_moment(A, Dh, float(h), f, r, rd, mu, Df, z, z, z, False)
    return mu


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
    (``-mu``: same sign as the multipliers; the law and its derivatives:
    :func:`flexmb.dynamics.elements.joint_law.transport_moment`).  With it the body momenta
    ``p = pi + Lambda`` of the element are the Gauss collocation of Newton-Euler with the reactions at
    the Gauss points, the gauge reset extrapolates the same polynomial
    (:func:`flexmb.dynamics.march.marching.end_values`) and the element is symmetric (time-reversible),
    which removes the secular energy growth.  Jacobian blocks per body group of the side: / lambda_f,
    / v_B (nu_b), / the body's v, / the body's x, then / the pose of B through each of its groups.
    """
    lay, te, h = ek.lay, ek.te, ek.h
    p = te.p
    if not att.parts:
        return
    A, Dh = transport_matrices(te)
    jac = trip.jacobian
    ip = np.arange(p)
    for g, mask, local, data in att.parts:
        grp, kin = att.groups[g], ek.groups[g]
        b = grp.bodies[local]
        jn = np.nonzero(mask)[0]
        m = jn.size
        f = np.ascontiguousarray(sign * jk.LAM[mask][..., :3])               # (m,p,3)
        r = np.ascontiguousarray(Gb.x[mask] - kin.X[local])                  # (m,p,3)
        rd = np.ascontiguousarray(jk.NB[mask][..., :3] - kin.W[local][..., :3])  # (m,p,3)
        mu, Df = np.empty((m, p, 3)), np.empty((m, p, 3))
        shape = (m, p, p, 3, 3) if jac else (0, 0, 0, 3, 3)
        d_f, d_r, d_rd = np.empty(shape), np.empty(shape), np.empty(shape)
        joint_law.transport_moment(A, Dh, float(h), f, r, rd, mu, Df, d_f, d_r, d_rd, jac)
        rows = lay.body(b[:, None], ip[None], grp.BW + 3, 3)  # (m,p,3)
        np.add.at(res, rows, -mu)
        if not jac:
            continue
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
