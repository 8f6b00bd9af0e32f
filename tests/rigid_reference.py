"""The NumPy reference of the rigid-body kernels (:func:`flexmb.dynamics.bodies.rigid_kernels.rigid_kinematics`,
:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_residual`): the former batched NumPy implementation of
``RigidBodies.unpack``, ``residual``, ``attach_pose``, ``attach_velocity``, ``wrench_map``, kept here only to check the kernels
(``tests/test_kernels.py``)."""
from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.bodies.rigid import RigidBodies

I3 = np.eye(3)


def _poly(M: NDArray, y1: NDArray, Y: NDArray) -> NDArray:
    """``M[k,0] y1 + sum_j M[k,1+j] Y_j`` for ``y1 (n,d)``, ``Y (n,p,d)`` -> ``(n,k,d)``."""
    return M[None, :, 0, None] * y1[:, None, :] + np.einsum("kj,njd->nkd", M[:, 1:], Y)



class ReferenceRigidBodies(RigidBodies):
    """``RigidBodies`` with the NumPy reference of the element equations and attachments."""

    def attach_pose(self, ek, local, data, where):
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        if where == "gauss":
            X, R, T = kin.X[local], kin.R[local], kin.T[local]
        else:
            X, R, T = kin.UX[local], kin.UR[local], kin.UT[local]
        r = np.einsum("mkde,me->mkd", R, data.c)
        x = X + r
        Ra = R @ data.A[:, None]
        m = local.size
        ip = np.arange(p)
        if where == "gauss":
            cols = np.concatenate([lay.body(b[:, None], ip[None], self.BX, 3), lay.body(b[:, None], ip[None], self.BTH, 3)], axis=-1)
            J = np.zeros((m, p, 6, 6))
            J[..., :3, :3] = I3
            J[..., :3, 3:] = -rot.skew(r) @ T
            J[..., 3:, 3:] = T
        else:
            # u(tau_k) = E[k,0] y1 + sum_j E[k,j] Y_j: the pose at tau_k depends on all internal points
            E = ek.te.E[:, 1:]  # (k, p)
            cj = np.concatenate([lay.body(b[:, None], ip[None], self.BX, 3), lay.body(b[:, None], ip[None], self.BTH, 3)], axis=-1)
            cols = np.broadcast_to(cj.reshape(m, 1, 6 * p), (m, p, 6 * p))
            blk = np.zeros((m, p, 6, 6))  # per constraint point, per unit E weight
            blk[..., :3, :3] = I3
            blk[..., :3, 3:] = -rot.skew(r) @ T
            blk[..., 3:, 3:] = T
            # J[m, k, :, (j, c)] = E[k, j] blk[m, k, :, c]
            J = (E[None, :, None, :, None] * blk[:, :, :, None, :]).reshape(m, p, 6, 6 * p)
        return x, Ra, cols, J

    def attach_velocity(self, ek, local, data):
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        R, T, W = kin.R[local], kin.T[local], kin.W[local]
        r = np.einsum("mkde,me->mkd", R, data.c)
        om = W[..., 3:]
        nu = np.concatenate([W[..., :3] + rot.cross(om, r), om], axis=-1)
        ip = np.arange(p)
        cols = np.concatenate([lay.body(b[:, None], ip[None], self.BW, 6), lay.body(b[:, None], ip[None], self.BTH, 3)], axis=-1)
        J = np.zeros((local.size, p, 6, 9))
        J[..., :3, :3] = I3
        J[..., :3, 3:6] = -rot.skew(r)
        J[..., 3:, 3:6] = I3
        J[..., :3, 6:] = -rot.skew(om) @ rot.skew(r) @ T
        return nu, cols, J

    def wrench_map(self, ek, local, data, wrench, target):
        """Rows and ``B^T`` of a wrench at the attachments (Gauss points), with the body's own
        Jacobian terms ``d(B^T w)/dU`` (the lever arm turns with the body)."""
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        R, T = kin.R[local], kin.T[local]
        r = np.einsum("mkde,me->mkd", R, data.c)
        ip = np.arange(p)
        slot = self.BW if target == "multiplier" else self.BPI
        rows = lay.body(b[:, None], ip[None], slot, 6)
        m = local.size
        BT = np.zeros((m, p, 6, 6))
        BT[..., :3, :3] = I3
        BT[..., 3:, 3:] = I3
        BT[..., 3:, :3] = rot.skew(r)
        own = []
        if np.any(data.c):
            d_own = np.zeros((m, p, 6, 3))
            d_own[..., 3:, :] = rot.skew(wrench[..., :3]) @ rot.skew(r) @ T
            own.append((lay.body(b[:, None], ip[None], self.BTH, 3), d_own))
        return rows, BT, own

    def unpack(self, ek, Ug):
        st, te = ek.st, ek.te
        x1, R1 = st.x[self.bodies], st.R[self.bodies]
        X, TH, PI, W = Ug[..., self.BX:self.BX + 3], Ug[..., self.BTH:self.BTH + 3], Ug[..., self.BPI:self.BPI + 6], Ug[..., self.BW:self.BW + 6]
        UTH = _poly(te.E, np.zeros_like(x1), TH)
        return SimpleNamespace(
            U=Ug, X=X, TH=TH, PI=PI, W=W, R=rot.exp(TH) @ R1[:, None], T=rot.tangent(TH),
            UX=_poly(te.E, x1, X), UR=rot.exp(UTH) @ R1[:, None], UT=rot.tangent(UTH),
        )

    def residual(self, ek, kin, r, trip, gravity):
        """Rows of the group (``r``: its residual view ``(n, p, 18)``) and their own Jacobian blocks."""
        lay, te, h, p, n = ek.lay, ek.te, ek.h, ek.te.p, self.n
        st = ek.st
        X, TH, PI, W, R, T = kin.X, kin.TH, kin.PI, kin.W, kin.R, kin.T
        v, om = W[..., :3], W[..., 3:]
        D0 = te.D[:, 0]
        D = te.D[:, 1:]
        Ti = rot.tangent_inv(TH)
        x1, pi1 = st.x[self.bodies], st.pi[self.vel_cols]

        r[..., self.BX:self.BX + 3] = D0[None, :, None] * x1[:, None] + np.einsum("ij,bjd->bid", D, X) - h * v
        r[..., self.BTH:self.BTH + 3] = np.einsum("ij,bjd->bid", D, TH) - h * np.einsum("bide,bie->bid", Ti, om)
        gyro = np.concatenate([np.zeros_like(v), rot.cross(v, PI[..., :3])], axis=-1)
        r[..., self.BPI:self.BPI + 6] = D0[None, :, None] * pi1[:, None] + np.einsum("ij,bjd->bid", D, PI) + h * gyro
        if np.any(gravity):
            r[..., self.BPI:self.BPI + 3] -= h * self.mass[:, None, None] * gravity
        J = R @ self.J0[:, None] @ np.swapaxes(R, -1, -2)
        Jw = np.einsum("bide,bie->bid", J, om)
        m = self.mass[:, None, None]
        r[..., self.BW:self.BW + 6] = np.concatenate([m * v, Jw], axis=-1) - PI

        if not trip.jacobian:
            return
        # ---- Jacobian
        b = self.bodies[:, None, None]
        i = np.arange(p)[None, :, None]
        j = np.arange(p)[None, None, :]
        bb, ii, jj = np.broadcast_arrays(b, i, j)
        Dij = np.broadcast_to(D[None], (n, p, p))
        for slot, k in ((self.BX, 3), (self.BTH, 3), (self.BPI, 6)):
            trip.add(lay.body(bb, ii, slot, k), lay.body(bb, jj, slot, k), Dij[..., None, None] * np.eye(k))
        bi, ip = np.meshgrid(self.bodies, np.arange(p), indexing="ij")
        trip.add_diag(lay.body(bi, ip, self.BX, 3), lay.body(bi, ip, self.BW, 3), -h)
        trip.add(lay.body(bi, ip, self.BTH, 3), lay.body(bi, ip, self.BTH, 3), -h * rot.d_tangent_inv(TH, om))
        trip.add(lay.body(bi, ip, self.BTH, 3), lay.body(bi, ip, self.BW + 3, 3), -h * Ti)
        trip.add(lay.body(bi, ip, self.BPI + 3, 3), lay.body(bi, ip, self.BPI, 3), h * rot.skew(v))
        trip.add(lay.body(bi, ip, self.BPI + 3, 3), lay.body(bi, ip, self.BW, 3), -h * rot.skew(PI[..., :3]))
        trip.add_diag(lay.body(bi, ip, self.BW, 3), lay.body(bi, ip, self.BW, 3), np.broadcast_to(m, (n, p, 3)))
        trip.add(lay.body(bi, ip, self.BW + 3, 3), lay.body(bi, ip, self.BW + 3, 3), J)
        dJw = (J @ rot.skew(om) - rot.skew(Jw)) @ T
        trip.add(lay.body(bi, ip, self.BW + 3, 3), lay.body(bi, ip, self.BTH, 3), dJw)
        trip.add_diag(lay.body(bi, ip, self.BW, 6), lay.body(bi, ip, self.BPI, 6), -1.0)



def joint_rows_reference(te, h, st, jk, Pa, Pb, Ga, Va, Vb):
    """NumPy reference of :func:`flexmb.dynamics.elements.joint_law.joint_rows` (the former code of
    ``joint_residual``): rows ``(nj, p, 30)`` (JQ slots zero), ``Rrt``, ``dphi``, ``dA``, ``dB``, ``dpsi``."""
    from flexmb.dynamics.layout import JLAM, JNA, JNB, JOINT_SLOTS, JPHI, JS

    nj, p = jk.LAM.shape[:2]
    US = te.E[None, :, 0, None] * st.s[:, None] + np.einsum("kj,njd->nkd", te.E[:, 1:], jk.S)
    UPHI = np.einsum("kj,njd->nkd", te.E[:, 1:], jk.PHI)
    r = np.zeros((nj, p, JOINT_SLOTS))
    RA, RB = Pa.R, Pb.R
    d = Pb.x - Pa.x
    RAt = np.swapaxes(RA, -1, -2)
    r[..., JS:JS + 3] = np.einsum("jkde,jke->jkd", RAt, d) - US
    Rrt = st.Rr[:, None] @ rot.exp(UPHI)
    Mrel = np.swapaxes(Rrt, -1, -2) @ RAt
    Emat = Mrel @ RB
    r[..., JPHI:JPHI + 3] = rot.axial(Emat)
    DL = rot.d_axial_left(Emat)
    dphi = DL @ (-np.swapaxes(rot.tangent(UPHI), -1, -2))
    dA = np.zeros((nj, p, 6, 6))
    dA[..., :3, :3] = -RAt
    dA[..., :3, 3:] = RAt @ rot.skew(d)
    dA[..., 3:, 3:] = -DL @ Mrel
    dB = np.zeros((nj, p, 6, 6))
    dB[..., :3, :3] = RAt
    dB[..., 3:, 3:] = DL @ Mrel
    Ra_g = Ga.R
    Qin = np.concatenate([np.einsum("jide,jie->jid", Ra_g, jk.Q[..., :3]),
                          np.einsum("jide,jie->jid", Ra_g, jk.Q[..., 3:])], axis=-1)
    vQ = jk.NB[..., :3]
    Lf = jk.LAM[..., :3]
    S_lam = np.concatenate([np.zeros_like(vQ), rot.cross(vQ, Lf)], axis=-1)
    r[..., JLAM:JLAM + 6] = (te.D[None, :, 0, None] * st.lam[:, None] + np.einsum("ij,njd->nid", te.D[:, 1:], jk.LAM)
                             - h * (Qin - S_lam))
    dpsi = np.zeros((nj, p, 6, 6))
    dpsi[..., :3, 3:] = h * rot.skew(Qin[..., :3])
    dpsi[..., 3:, 3:] = h * rot.skew(Qin[..., 3:])
    r[..., JNA:JNA + 6] = jk.NA - Va.nu
    r[..., JNB:JNB + 6] = jk.NB - Vb.nu
    return r, Rrt, dphi, dA, dB, dpsi
