"""Compiled joint evaluation of rigid-only models: every joint row, Jacobian block, constitutive law
and the multipliers' momenta on the bodies in one numba call per evaluation.

:func:`flexmb.dynamics.elements.joints.joint_residual` goes through the attachments layer (poses,
velocities, wrench maps of each body type) with ~200 NumPy calls and ~25 Jacobian blocks handed to
:class:`~flexmb.dynamics.layout.Triplets` one by one; on small models that glue was the largest
item of a time element (issue 6 C, ``benchmarks/README.md``).  For a model whose bodies are all
plain :class:`~flexmb.dynamics.bodies.rigid.RigidBodies` (one group, exact type), without universal
joints, damped joint laws or the consistent multiplier transport, :class:`RigidJoints` evaluates
the same equations here:

* the attachment poses at the constraint and Gauss points and the attachment velocities with their
  Jacobian blocks (the kernels of :mod:`flexmb.dynamics.kernels` the body type uses);
* the joint rows (:func:`~flexmb.dynamics.kernels.joint_rows`), the constitutive rows and the
  multiplier blocks (:mod:`flexmb.dynamics.elements.joint_kernels`), the side-A wrench;
* the multipliers onto the bodies' constitutive rows, ``-B^T lambda`` summed in the order of
  ``np.einsum`` (two interleaved partial sums over the six components), so that the residual is the
  general path's bit for bit;
* the Jacobian values written straight into the values array of the fixed pattern, block after
  block in the general path's order and shapes (checked against the pattern's recorded shapes once
  per pattern: a mismatch keeps the general path).

The first evaluation of a pattern (which records the indices) and everything that does not qualify
use the general path.  ``ENABLED = False`` switches this off (tests compare both).
"""
from __future__ import annotations

import logging

import numpy as np

from flexmb.dynamics.elements import joint_kernels
from flexmb.dynamics import kernels
from flexmb.dynamics.kernels import _jit
from flexmb.dynamics.layout import JLAM, JNA, JNB, JPHI, JQ, JS

log = logging.getLogger(__name__)

#: the compiled path is used when True and the model qualifies (tests switch it off to compare)
ENABLED = True

_SLOTS = np.array([JS, JPHI, JLAM, JQ, JNA, JNB], dtype=np.int64)


class RigidJoints:
    """Model-constant arrays of the compiled joint evaluation (built once per model and set of
    constrained components, :func:`rigid_joints`)."""

    def __init__(self, cm, grp):
        self.key = cm.jnt_constrained.tobytes()
        self.nj = cm.nj
        self.grp = grp
        sides = []
        for att in (cm.att_a, cm.att_b):
            if att.parts:
                _g, mask, local, data = att.parts[0]
                sel = np.nonzero(mask)[0]
                sides.append((sel.astype(np.int64), np.ascontiguousarray(local, dtype=np.int64),
                              np.ascontiguousarray(data.c), np.ascontiguousarray(data.A), bool(data.lever)))
            else:
                sides.append((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)),
                              False))
        (self.sel_a, self.loc_a, self.c_a, self.A_a, self.lever_a), \
            (self.sel_b, self.loc_b, self.c_b, self.A_b, self.lever_b) = sides
        # pose arrays with the ground entries filled (the others are overwritten per evaluation)
        self.gx_a, self.gR_a = self._ground(cm.att_a)
        self.gx_b, self.gR_b = self._ground(cm.att_b)
        # entries of side b's list that also are on side a's (for the A-side chain through B's pose)
        in_a = np.zeros(cm.nj, bool)
        in_a[self.sel_a] = True
        self.ab_in_b = np.nonzero(in_a[self.sel_b])[0].astype(np.int64)   # positions in sel_b
        in_b = np.zeros(cm.nj, bool)
        in_b[self.sel_b] = True
        self.ab_in_a = np.nonzero(in_b[self.sel_a])[0].astype(np.int64)   # positions in sel_a
        cons, univ = cm.jnt_constrained, cm.jnt_universal
        jc, cc = np.nonzero(cons & ~univ[:, None])
        jf, cf = np.nonzero(~cons & ~univ[:, None])
        self.jc, self.cc, self.jf, self.cf = (a.astype(np.int64) for a in (jc, cc, jf, cf))
        self.kf = np.ascontiguousarray(cm.jnt_k[jf, cf], dtype=float)
        self.cons = np.ascontiguousarray(cons)
        self.k, self.c, self.ref = (np.ascontiguousarray(a, dtype=float) for a in (cm.jnt_k, cm.jnt_c, cm.jnt_ref))
        self._bs = None
        self._zeros = {}
        self._nobuf = (np.empty(0), np.zeros(1, np.int64))
        self._novals = np.empty((0, 0, 0))
        self.gravity = np.asarray(cm.gravity, dtype=float)
        #: the whole element in one kernel: no force elements, bodies 0 .. nb - 1 in storage order
        self.whole = (not cm.forces.loads and cm.forces.springs is None
                      and np.array_equal(grp.bodies, np.arange(cm.nb)) and grp.nv == 6)
        self._checked = {}

    @staticmethod
    def _ground(att):
        x = np.zeros((att.n, 3))
        R = np.zeros((att.n, 3, 3))
        x[att.ground] = att.ground_point[att.ground]
        R[att.ground] = att.frame[att.ground]
        return x, R

    def shapes(self, p: int) -> list:
        """The Jacobian blocks' shapes, in the order :func:`~flexmb.dynamics.elements.joints.joint_residual`
        adds them (for this model)."""
        nj, nA, nB, nAB = self.nj, self.sel_a.size, self.sel_b.size, self.ab_in_a.size
        mc, mf = self.jc.size, self.jf.size
        out = [(nj, p, p, 3, 3), (nj, p, p, 3, 3)]
        out += [(nA, p, 6, 6 * p)] if nA else []
        out += [(nB, p, 6, 6 * p)] if nB else []
        out += [(nj, p, p, 6, 6), (nj, p, 3, 3), (nj, p, 6, 6), (nj, p, 3, 3)]
        out += [(nA, p, 6, 6)] if nA else []
        out += [(nj, p, 6)] + ([(nA, p, 6, 9)] if nA else []) + [(nj, p, 6)] + ([(nB, p, 6, 9)] if nB else [])
        out += [(mc, p, p, 1, 1)] if mc else []
        out += [(mf, p), (mf, p)] if mf else []
        if nB:
            out += ([(nB, p, 6, 3)] if self.lever_b else []) + [(nB, p, 6, 6)]
        if nA:
            out += ([(nA, p, 6, 3)] if self.lever_a else []) + [(nA, p, 6, 6)]
            out += [(nAB, p, 6, 6)] if nB and nAB else []
            out += [(nA, p, 6, 6)]
        return out

    def fits(self, trip, p: int, k0: int | None = None) -> bool:
        """Whether the pattern's blocks from ``k0`` (default: the next one) are this evaluation's
        joint blocks (checked once per pattern)."""
        return self.fits_pattern(trip._pattern, p, trip._k if k0 is None else k0)

    def fits_pattern(self, pat, p: int, k0: int) -> bool:
        """Whether the blocks of the pattern ``pat`` from ``k0`` are this evaluation's joint blocks
        (checked once per pattern); their offsets are then in ``self._offs``."""
        key = (id(pat), k0)
        hit = self._checked.get(key)
        if hit is None or hit[0] is not pat:
            want = self.shapes(p)
            ok = [tuple(s) for s in pat.shapes[k0:]] == [tuple(s) for s in want]
            if not ok:
                log.debug("compiled joint evaluation: the pattern's blocks differ; general path kept")
            hit = (pat, ok, np.asarray(pat.offsets[k0:], dtype=np.int64))
            self._checked = {key: hit}  # one pattern at a time
        self._offs = hit[2]
        return hit[1]

    def evaluate(self, cm, ek, U, res, trip) -> bool:
        """Joint rows and the multipliers' momenta into ``res``, the Jacobian values into ``trip``
        (values-only or residual-only); False (nothing done) when the pattern does not fit."""
        jac = trip.jacobian
        te, lay, st = ek.te, ek.lay, ek.st
        p = te.p
        if jac and not self.fits(trip, p):
            return False
        kin = ek.groups[self.grp.group_index]
        grp = self.grp
        if cm.jnt_drives:
            from flexmb.dynamics.elements.joints import drive_targets

            tgt = drive_targets(cm, ek.t_cons)[0]
        else:
            tgt = self._zeros.get(p)
            if tgt is None:
                tgt = self._zeros[p] = np.zeros((self.nj, 6, p))
        if jac:
            buf, offs = trip._buf, self._offs
        else:
            buf, offs = self._nobuf
        if self._bs is None or self._bs[0] is not lay:
            self._bs = (lay, lay.body_start[grp.bodies])
        Jv = U[lay.joint_off:].reshape(self.nj, p, -1)
        element(te.E, te.D, float(ek.h), st.s, st.lam, st.Rr, st.acc, Jv, _SLOTS,
                kin.U, grp._slot_starts, kin.R, kin.T, kin.UX, kin.UR, kin.UT, self._bs[1], grp.slots,
                self.sel_a, self.loc_a, self.c_a, self.A_a, self.gx_a, self.gR_a, self.lever_a,
                self.sel_b, self.loc_b, self.c_b, self.A_b, self.gx_b, self.gR_b, self.lever_b,
                self.ab_in_a, self.ab_in_b, tgt, self.k, self.c, self.ref, self.cons,
                self.jc, self.cc, self.jf, self.cf, self.kf,
                res[lay.joint_off:].reshape(self.nj, p, -1), res, jac, buf, offs)
        if jac:
            trip._k = len(trip._pattern.shapes)
        return True


    def evaluate_all(self, cm, te, st, h: float, U, lay, trip):
        """The whole element (bodies and joints; models without force elements, whose bodies are
        ``0 .. nb - 1`` in storage order): the residual, the Jacobian values into ``trip``; None when
        the pattern does not fit (nothing done)."""
        jac = trip.jacobian
        p = te.p
        grp = self.grp
        if jac and not (self.fits(trip, p, 1) and tuple(trip._pattern.shapes[0])[:2] == (grp.n, p)):
            return None
        if cm.jnt_drives:
            from flexmb.dynamics.elements.joints import drive_targets

            tgt = drive_targets(cm, st.t + h * te.tau_c)[0]
        else:
            tgt = self._zeros.get(p)
            if tgt is None:
                tgt = self._zeros[p] = np.zeros((self.nj, 6, p))
        if self._bs is None or self._bs[0] is not lay:
            self._bs = (lay, lay.body_start[grp.bodies])
        res = np.zeros(lay.size)
        nb, off = grp.n, lay.joint_off
        if jac:
            buf, offs = trip._buf, self._offs
            vals = buf[trip._pattern.offsets[0]:trip._pattern.offsets[1]].reshape(nb, p, -1)
        else:
            buf, offs = self._nobuf
            vals = self._novals
        whole_element(te.E, te.D, float(h), st.x, st.R, st.pi.reshape(nb, 6), grp.mass, grp.J0, self.gravity,
                      st.s, st.lam, st.Rr, st.acc, U[off:].reshape(self.nj, p, -1), _SLOTS,
                      U[:off].reshape(nb, p, -1), grp._slot_starts, self._bs[1], grp.slots,
                      self.sel_a, self.loc_a, self.c_a, self.A_a, self.gx_a, self.gR_a, self.lever_a,
                      self.sel_b, self.loc_b, self.c_b, self.A_b, self.gx_b, self.gR_b, self.lever_b,
                      self.ab_in_a, self.ab_in_b, tgt, self.k, self.c, self.ref, self.cons,
                      self.jc, self.cc, self.jf, self.cf, self.kf,
                      res[:off].reshape(nb, p, -1), res[off:].reshape(self.nj, p, -1), res, jac, vals, buf, offs)
        if jac:
            trip._k = len(trip._pattern.shapes)
        return res


    def gauss_xb(self, st, U, lay, p: int):
        """B's origins ``(nj, p, 3)`` at the Gauss points of the element with unknowns ``U``."""
        grp = self.grp
        out = np.empty((self.nj, p, 3))
        gauss_points_b(np.ascontiguousarray(lay.group_view(U, grp.bodies, grp.slots)), grp.BX, grp.BTH,
                       st.x[grp.bodies], st.R[grp.bodies], self.sel_b, self.loc_b, self.c_b, self.gx_b, out)
        return out


def rigid_joints(cm, te) -> RigidJoints | None:
    """The model's :class:`RigidJoints` for the time element ``te`` (cached on ``cm``, rebuilt when
    the constrained components change), or None when the compiled path does not apply."""
    if not ENABLED or not cm.nj:
        return None
    key = cm.jnt_constrained.tobytes()
    hit = cm.__dict__.get("_rigid_joints")
    if hit is not None and hit[0] is te and hit[1] == key:
        return hit[2]
    from flexmb.dynamics.bodies.rigid import RigidBodies
    from flexmb.dynamics.elements.joints import consistent_transport

    rj = None
    if len(cm.groups) == 1 and type(cm.groups[0]) is RigidBodies and not consistent_transport(te) \
            and not cm.jnt_universal.any() and not np.any(cm.jnt_c[~cm.jnt_constrained] != 0):
        rj = RigidJoints(cm, cm.groups[0])  # (damped joint laws, universal joints: general path)
    cm._rigid_joints = (te, key, rj)
    return rj


# ============================================================================ kernel
@_jit
def _put(buf, o, a):
    """``buf[o:o + a.size] = a`` (C order); returns the next offset."""
    f = a.reshape(a.size)
    for q in range(a.size):
        buf[o + q] = f[q]
    return o + a.size


@_jit
def _side(sel, loc, c, A, gx, gR, E, X, R, T, UX, UR, UT, Ug, bw, nj, p):
    """Poses at the constraint and Gauss points (full ``nj`` arrays, ground entries from ``gx``,
    ``gR``), their Jacobian blocks and the attachment velocities of one side's entries."""
    m = sel.size
    xc = np.empty((m, p, 3))
    Rc = np.empty((m, p, 3, 3))
    Jc = np.empty((m, p, 6, 6 * p))
    xg = np.empty((m, p, 3))
    Rg = np.empty((m, p, 3, 3))
    Jg = np.empty((m, p, 6, 6))
    nus = np.empty((m, p, 6))
    Jn = np.empty((m, p, 6, 9))
    if m:
        kernels.rigid_attach_pose(UX, UR, UT, loc, c, A, E, True, xc, Rc, Jc)
        kernels.rigid_attach_pose(X, R, T, loc, c, A, E, False, xg, Rg, Jg)
        kernels.rigid_attach_velocity(Ug, bw, R, T, loc, c, nus, Jn)
    Xc = np.empty((nj, p, 3))
    RC = np.empty((nj, p, 3, 3))
    Xg = np.empty((nj, p, 3))
    RG = np.empty((nj, p, 3, 3))
    nu = np.zeros((nj, p, 6))
    for j in range(nj):
        for k in range(p):
            for a in range(3):
                Xc[j, k, a] = gx[j, a]
                Xg[j, k, a] = gx[j, a]
                for e in range(3):
                    RC[j, k, a, e] = gR[j, a, e]
                    RG[j, k, a, e] = gR[j, a, e]
    for q in range(m):
        j = sel[q]
        for k in range(p):
            for a in range(3):
                Xc[j, k, a] = xc[q, k, a]
                Xg[j, k, a] = xg[q, k, a]
                for e in range(3):
                    RC[j, k, a, e] = Rc[q, k, a, e]
                    RG[j, k, a, e] = Rg[q, k, a, e]
            for a in range(6):
                nu[j, k, a] = nus[q, k, a]
    return Xc, RC, Jc, Xg, RG, Jg, nu, Jn


@_jit
def _bt_dot(BT, w, out):
    """``out = BT @ w`` (6 x 6 times 6) summed as ``np.einsum`` does: two interleaved partial sums."""
    for r in range(6):
        s0 = BT[r, 0] * w[0]
        s1 = BT[r, 1] * w[1]
        s0 += BT[r, 2] * w[2]
        s1 += BT[r, 3] * w[3]
        s0 += BT[r, 4] * w[4]
        s1 += BT[r, 5] * w[5]
        out[r] = s0 + s1


@_jit
def _mm(A, B, out):
    """``out = A @ B`` (2-D)."""
    for a in range(A.shape[0]):
        for b in range(B.shape[1]):
            s = 0.0
            for l in range(A.shape[1]):
                s += A[a, l] * B[l, b]
            out[a, b] = s


@_jit
def _scatter(res, sel, loc, c, R, T, W, bs, slots, bw, lever, BT, own):
    """``res[rows of w] -= B^T W`` for one side's entries (rows in entry order, as the general
    path's scatter); ``BT (m, p, 6, 6)``, ``own (m, p, 6, 3)`` (if ``lever``) for the Jacobian."""
    m, p = sel.size, W.shape[1]
    Wm = np.empty((m, p, 6))
    for q in range(m):
        for k in range(p):
            for a in range(6):
                Wm[q, k, a] = W[sel[q], k, a]
    out = np.empty((m, p, 6))
    kernels.rigid_wrench_map(R, T, loc, c, Wm, out, BT, own if lever else np.empty((0, 0, 6, 3)))
    v = np.empty(6)
    for q in range(m):
        b = loc[q]
        for k in range(p):
            _bt_dot(BT[q, k], Wm[q, k], v)
            row = bs[b] + k * slots + bw
            for a in range(6):
                res[row + a] += -v[a]


@_jit
def element(E, D, h, s1, lam1, Rr, acc, Jv, sl, Ug, bsl, R, T, UX, UR, UT, bs, slots,
            sel_a, loc_a, c_a, A_a, gx_a, gR_a, lever_a, sel_b, loc_b, c_b, A_b, gx_b, gR_b, lever_b,
            ab_in_a, ab_in_b, tgt, kk, cd, ref, cons, jc, cc, jf, cf, kf, r, res, jac, buf, offs):
    """Everything :func:`flexmb.dynamics.elements.joints.joint_residual` computes for a rigid-only model
    (see the module docstring): joint rows into ``r (nj, p, 30)``, the multipliers onto the bodies'
    constitutive rows of ``res``, and (``jac``) the Jacobian blocks into ``buf`` at ``offs``."""
    nj, p = Jv.shape[0], Jv.shape[1]
    BX, BTH, BW = bsl[0], bsl[1], bsl[3]
    X = Ug[:, :, BX:BX + 3].copy()
    JSs, JPHIs, JLAMs, JQs = sl[0], sl[1], sl[2], sl[3]
    Xca, Rca, Jca, Xga, Rga, Jga, nua, Jna = _side(sel_a, loc_a, c_a, A_a, gx_a, gR_a, E, X, R, T, UX, UR, UT,
                                                   Ug, BW, nj, p)
    Xcb, Rcb, Jcb, Xgb, Rgb, Jgb, nub, Jnb = _side(sel_b, loc_b, c_b, A_b, gx_b, gR_b, E, X, R, T, UX, UR, UT,
                                                   Ug, BW, nj, p)
    Jc = np.ascontiguousarray(Jv)
    Rrt = np.empty((nj, p, 3, 3))
    if jac:
        dphi, dA, dB, dpsi = (np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6)),
                              np.empty((nj, p, 6, 6)))
    else:
        dphi, dA, dB, dpsi = (np.empty((0, 0, 3, 3)), np.empty((0, 0, 6, 6)), np.empty((0, 0, 6, 6)),
                              np.empty((0, 0, 6, 6)))
    kernels.joint_rows(E, D, h, s1, lam1, Rr, Jc, Xca, Rca, Xcb, Rcb, Rga, nua, nub, sl, r, Rrt,
                       dphi, dA, dB, dpsi, jac)
    # constitutive laws (the relative coordinates' polynomials as unpack_joints sums them)
    US = np.empty((nj, p, 3))
    UPHI = np.empty((nj, p, 3))
    for j in range(nj):
        for k in range(p):
            for d in range(3):
                a = 0.0
                b = 0.0
                for q in range(p):
                    a += E[k, q + 1] * Jc[j, q, JSs + d]
                    b += E[k, q + 1] * Jc[j, q, JPHIs + d]
                US[j, k, d] = E[k, 0] * s1[j, d] + a
                UPHI[j, k, d] = b
    joint_kernels.constitutive_rows(Jc, sl, US, UPHI, acc, tgt, Xga, Rga, Xgb, kk, cd, ref, cons, r, JQs)
    # multipliers onto the bodies: +lambda on b, the side-A wrench on a
    L = Jc[:, :, JLAMs:JLAMs + 6].copy()
    wa = np.empty((nj, p, 6))
    if jac:
        dW_lam, dW_xb = np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6))
    else:
        dW_lam, dW_xb = np.empty((0, 0, 6, 6)), np.empty((0, 0, 6, 6))
    joint_kernels.side_a_wrench(L, Xga, Xgb, wa, dW_lam, dW_xb, jac)
    nA, nB = sel_a.size, sel_b.size
    BTb, ownb = np.empty((nB, p, 6, 6)), np.empty((nB, p, 6, 3))
    BTa, owna = np.empty((nA, p, 6, 6)), np.empty((nA, p, 6, 3))
    _scatter(res, sel_b, loc_b, c_b, R, T, L, bs, slots, BW, lever_b, BTb, ownb)
    _scatter(res, sel_a, loc_a, c_a, R, T, wa, bs, slots, BW, lever_a, BTa, owna)
    if not jac:
        return
    # ------------------------------------------------------------------ Jacobian blocks
    o = offs[0]
    n = 0
    # relative kinematics / s and phi at all internal points
    for j in range(nj):
        for k in range(p):
            for q in range(p):
                for a in range(3):
                    for b in range(3):
                        buf[o + n] = -E[k, q + 1] if a == b else 0.0
                        n += 1
    for j in range(nj):
        for k in range(p):
            for q in range(p):
                for a in range(3):
                    for b in range(3):
                        buf[o + n] = E[k, q + 1] * dphi[j, k, a, b]
                        n += 1
    o += n
    tmp = np.empty((6, 6 * p))
    for dR, Js, sel in ((dA, Jca, sel_a), (dB, Jcb, sel_b)):
        for q in range(sel.size):
            for k in range(p):
                _mm(dR[sel[q], k], Js[q, k], tmp)
                o = _put(buf, o, tmp)
    n = 0
    for j in range(nj):
        for k in range(p):
            for q in range(p):
                for a in range(6):
                    for b in range(6):
                        buf[o + n] = D[k, q + 1] if a == b else 0.0
                        n += 1
    o += n
    sNB, sL, bdR = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6))
    joint_kernels.multiplier_blocks(h, Jc, sl, Rga, sNB, bdR, sL)
    o = _put(buf, o, sNB)
    o = _put(buf, o, bdR)
    o = _put(buf, o, sL)
    t66 = np.empty((6, 6))
    for q in range(nA):
        for k in range(p):
            _mm(dpsi[sel_a[q], k], Jga[q, k], t66)
            o = _put(buf, o, t66)
    # attachment velocities: identity and -J
    for q in range(nj * p * 6):
        buf[o + q] = 1.0
    o += nj * p * 6
    o = _put(buf, o, -Jna)
    for q in range(nj * p * 6):
        buf[o + q] = 1.0
    o += nj * p * 6
    o = _put(buf, o, -Jnb)
    # constitutive laws: constrained u_c(tau_k) / q_c; free Qbar_c + k q_c
    if jc.size:
        for m in range(jc.size):
            for k in range(p):
                for q in range(p):
                    buf[o] = E[k, q + 1]
                    o += 1
    if jf.size:
        for q in range(jf.size * p):
            buf[o + q] = 1.0
        o += jf.size * p
        for m in range(jf.size):
            for k in range(p):
                buf[o] = kf[m]
                o += 1
    # multipliers onto the bodies
    if nB:
        if lever_b:
            o = _put(buf, o, -ownb)
        o = _put(buf, o, -BTb)
    if nA:
        if lever_a:
            o = _put(buf, o, -owna)
        nBT = np.empty((6, 6))
        for q in range(nA):
            for k in range(p):
                for a in range(6):
                    for b in range(6):
                        nBT[a, b] = -BTa[q, k, a, b]
                _mm(nBT, dW_lam[sel_a[q], k], t66)
                o = _put(buf, o, t66)
        t2 = np.empty((6, 6))
        mdW = np.empty((6, 6))
        if nB:
            for z in range(ab_in_a.size):
                qa, qb = ab_in_a[z], ab_in_b[z]
                for k in range(p):
                    for a in range(6):
                        for b in range(6):
                            nBT[a, b] = -BTa[qa, k, a, b]
                    _mm(nBT, dW_xb[sel_a[qa], k], t2)
                    _mm(t2, Jgb[qb, k], t66)
                    o = _put(buf, o, t66)
        for q in range(nA):
            for k in range(p):
                for a in range(6):
                    for b in range(6):
                        nBT[a, b] = -BTa[q, k, a, b]
                        mdW[a, b] = -dW_xb[sel_a[q], k, a, b]
                _mm(nBT, mdW, t2)
                _mm(t2, Jga[q, k], t66)
                o = _put(buf, o, t66)


@_jit
def whole_element(E, D, h, x1, R1, pi1, mass, J0, g, s1, lam1, Rr, acc, Jv, sl, Ug, bsl, bs, slots,
                  sel_a, loc_a, c_a, A_a, gx_a, gR_a, lever_a, sel_b, loc_b, c_b, A_b, gx_b, gR_b, lever_b,
                  ab_in_a, ab_in_b, tgt, kk, cd, ref, cons, jc, cc, jf, cf, kf, rb, r, res, jac, vals, buf, offs):
    """A whole time element of a rigid-only model without force elements: the bodies' kinematics
    and rows (:func:`~flexmb.dynamics.kernels.rigid_kinematics`,
    :func:`~flexmb.dynamics.kernels.rigid_residual`, Jacobian values into ``vals``: the first block
    of the pattern), then :func:`element`."""
    n, p = Ug.shape[0], Ug.shape[1]
    R = np.empty((n, p, 3, 3))
    T = np.empty((n, p, 3, 3))
    UX = np.empty((n, p, 3))
    UR = np.empty((n, p, 3, 3))
    UT = np.empty((n, p, 3, 3))
    kernels.rigid_kinematics(E, x1, R1, Ug, bsl[0], bsl[1], R, T, UX, UR, UT)
    kernels.rigid_residual(D, h, x1, pi1, Ug, R, T, mass, J0, g, bsl, rb, vals, jac)
    element(E, D, h, s1, lam1, Rr, acc, Jv, sl, Ug, bsl, R, T, UX, UR, UT, bs, slots,
            sel_a, loc_a, c_a, A_a, gx_a, gR_a, lever_a, sel_b, loc_b, c_b, A_b, gx_b, gR_b, lever_b,
            ab_in_a, ab_in_b, tgt, kk, cd, ref, cons, jc, cc, jf, cf, kf, r, res, jac, buf, offs)


@_jit
def gauss_points_b(Ug, bx, bth, x1, R1, sel, loc, c, gx, out):
    """B's origins ``out (nj, p, 3)`` at the Gauss points: ``X + R c`` with ``R = exp(theta) R1``
    (the operations of :func:`~flexmb.dynamics.kernels.rigid_kinematics` and
    :func:`~flexmb.dynamics.kernels.rigid_attach_pose`); ground entries ``gx``."""
    p = Ug.shape[1]
    Rt = np.empty((3, 3))
    Tt = np.empty((3, 3))
    R = np.empty((3, 3))
    r = np.empty(3)
    for j in range(out.shape[0]):
        for i in range(p):
            for a in range(3):
                out[j, i, a] = gx[j, a]
    for q in range(sel.size):
        b = loc[q]
        for i in range(p):
            kernels.exp_tangent(Ug[b, i, bth:bth + 3], Rt, Tt)
            for a in range(3):
                for d in range(3):
                    R[a, d] = Rt[a, 0] * R1[b, 0, d] + Rt[a, 1] * R1[b, 1, d] + Rt[a, 2] * R1[b, 2, d]
            kernels._rc(R, c[q], r)
            for a in range(3):
                out[sel[q], i, a] = Ug[b, i, bx + a] + r[a]
