"""NumPy reference of the modal flexible bodies (the former implementation of
:class:`flexmb.dynamics.bodies.modal.FlexibleBodies`, batched NumPy), kept only to check the compiled
kernels (tests/test_modal_kernels.py).  Dense ``G`` and ``H`` from the data (no factorization).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.bodies.modal import FlexibleBodies
from modal_reference_matrices import MassModel, mass_polynomial, strain_energy

I3 = np.eye(3)
#: key of the modal coordinates at a node in ``ElementStart.extra``
QKEY = "flex_q"


def _poly(M: NDArray, y1: NDArray, Y: NDArray) -> NDArray:
    return M[None, :, 0, None] * y1[:, None, :] + np.einsum("kj,njd->nkd", M[:, 1:], Y)


class ReferenceFlexibleBodies(FlexibleBodies):
    """The group with the former NumPy evaluation (the set-up, the node level and the marching are
    the compiled group's)."""

    def __init__(self, model, bodies: NDArray):
        super().__init__(model, bodies)
        n, nm, src = self.n, self.nm, self.src
        polys = [mass_polynomial(b.data.invariants, nm) for b in src]
        self.mm = MassModel(*(np.array([p[k] for p in polys]).reshape((n,) + polys[0][k].shape) if n else None
                              for k in range(3)))
        self.S1 = self.mm.M0[:, :3, 6:] if n else np.zeros((0, 3, nm))  # (n, 3, nm), zero on padded modes
        self.K = np.zeros((n, nm, nm))
        self.C = np.zeros((n, nm, nm))
        for k, b in enumerate(src):
            k_b = b.n_modes
            self.K[k] = np.eye(nm)
            self.K[k, :k_b, :k_b] = np.diag(b.data.omega2)
            self.C[k, :k_b, :k_b] = b.damping
        full = [b.stiffening == "full" and b.n_modes > 0 for b in src]
        self.G = self.H = None
        if any(full):
            self.G = np.zeros((n, nm, nm, nm))
            for k, b in enumerate(src):
                if full[k]:
                    s = slice(0, b.n_modes)
                    self.G[k, s, s, s] = b.data.geometric_stiffness
            if any(full[k] and b.data.quartic_stiffness is not None for k, b in enumerate(src)):
                self.H = np.zeros((n, nm, nm, nm, nm))
                for k, b in enumerate(src):
                    if full[k] and b.data.quartic_stiffness is not None:
                        s = slice(0, b.n_modes)
                        self.H[k, s, s, s, s] = b.data.quartic_stiffness
        # unit inertial preload stiffness: spin products (Kg, first six unit loads) and frame
        # accelerations (Ka: frame-origin acceleration minus gravity, then angular acceleration,
        # body axes; PRELOAD_NAMES stores alpha before a)
        self.Kg = self.Ka = None
        for k, b in enumerate(src):
            arr = (b.data.preload_stiffness_residual if b.stiffening == "full" else
                   b.data.preload_stiffness if b.stiffening == "preload" else None)
            if arr is None or not b.n_modes:
                continue
            if self.Kg is None:
                self.Kg = np.zeros((n, 6, nm, nm))
                self.Ka = np.zeros((n, 6, nm, nm))
            self.Kg[k, :, :b.n_modes, :b.n_modes] = arr[:6]
            self.Ka[k, :, :b.n_modes, :b.n_modes] = arr[[9, 10, 11, 6, 7, 8]]  # (a_O - g, alpha) order

    def _rb(self, R: NDArray) -> NDArray:
        Rb = np.zeros(R.shape[:-2] + (self.N, self.N))
        Rb[..., :3, :3] = R
        Rb[..., 3:6, 3:6] = R
        Rb[..., 6:, 6:] = np.eye(self.nm)
        return Rb

    def mass_blocks(self, st) -> NDArray:
        Rb = self._rb(st.R[self.bodies])
        return Rb @ self.mm.matrix(self.node_q(st)) @ np.swapaxes(Rb, -1, -2)

    def strain_energy(self, st) -> float:
        return float(np.sum(strain_energy(self.node_q(st), self.K, self.G, self.H)))

    def kinetic_energy(self, st, w: NDArray) -> float:
        return 0.5 * float(np.einsum("ni,nij,nj->", w, self.mass_blocks(st), w))

    def gravity_potential(self, st, g: NDArray) -> float:
        # the first mass moment S(q) (body axes) from the v-omega block of the mass matrix, skew(S)^T
        M = self.mm.matrix(self.node_q(st))
        S = np.stack([M[:, 1, 5], M[:, 2, 3], M[:, 0, 4]], axis=1)
        RS = np.einsum("bij,bj->bi", st.R[self.bodies], S)
        return -float(np.sum(self.mass * (st.x[self.bodies] @ g) + RS @ g))

    def node_attach_pose(self, st, local, data):
        b = self.bodies[local]
        R = st.R[b]
        q = self.node_q(st, local)
        r = np.einsum("nij,nj->ni", R, data.c + np.einsum("ndk,nk->nd", data.Pt, q))
        return st.x[b] + r, R @ rot.exp(np.einsum("ndk,nk->nd", data.Pr, q)) @ data.A

    def node_velocity_map(self, st, local, data):
        b = self.bodies[local]
        R = st.R[b]
        q = self.node_q(st, local)
        r = np.einsum("nij,nj->ni", R, data.c + np.einsum("ndk,nk->nd", data.Pt, q))
        Gam = rot.tangent(np.einsum("ndk,nk->nd", data.Pr, q)) @ data.Pr
        B = np.zeros((local.size, 6, self.N))
        B[:, :3, :3] = I3
        B[:, :3, 3:6] = -rot.skew(r)
        B[:, 3:, 3:6] = I3
        B[:, :3, 6:] = R @ data.Pt
        B[:, 3:, 6:] = R @ Gam
        return self.vel_cols[local], B

    def _kin_geometry(self, kin, local, data, where="gauss"):
        """``(R, T, Q, r, psi, T(psi), R Pt, R Gamma)`` of the attachments ``data`` at the Gauss
        (``where="gauss"``) or constraint points, computed once per evaluation: cached on the
        element kinematics ``kin`` (made afresh by :meth:`unpack` at every evaluation), so
        attach_pose, attach_velocity, wrench_map and _multiplier_rate share one evaluation."""
        key = ("geo", id(data), where)
        cache = vars(kin).setdefault("cache", {})
        got = cache.get(key)
        if got is None:
            if where == "gauss":
                R, T, Q = kin.R[local], kin.T[local], kin.Q[local]
            else:
                R, T, Q = kin.UR[local], kin.UT[local], kin.UQ[local]
            got = cache[key] = (R, T, Q) + self._geometry(R, Q, data)
        return got

    def _geometry(self, R, q, data):
        """``r = R (c + Pt q)``, ``psi = Pr q``, ``T(psi)``, ``R Pt``, ``R Gamma`` at points ``(m, k)``."""
        r = np.einsum("mkde,mke->mkd", R, data.c[:, None] + np.einsum("mdj,mkj->mkd", data.Pt, q))
        psi = np.einsum("mdj,mkj->mkd", data.Pr, q)
        Tp = rot.tangent(psi)
        RPt = R @ data.Pt[:, None]
        RGam = R @ Tp @ data.Pr[:, None]
        return r, psi, Tp, RPt, RGam

    def _cols_pose(self, lay, b, p):
        ip = np.arange(p)
        return np.concatenate([lay.body(b[:, None], ip[None], self.BX, 3), lay.body(b[:, None], ip[None], self.BTH, 3),
                               lay.body(b[:, None], ip[None], self.BQ, self.nm)], axis=-1)

    def attach_pose(self, ek, local, data, where):
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        X = kin.X[local] if where == "gauss" else kin.UX[local]
        R, T, Q, r, psi, Tp, RPt, RGam = self._kin_geometry(kin, local, data, where)
        x = X + r
        Ra = R @ rot.exp(psi) @ data.A[:, None]
        m = local.size
        nc = 6 + self.nm
        blk = np.zeros((m, p, 6, nc))
        blk[..., :3, :3] = I3
        blk[..., :3, 3:6] = -rot.skew(r) @ T
        blk[..., :3, 6:] = RPt
        blk[..., 3:, 3:6] = T
        blk[..., 3:, 6:] = RGam
        cj = self._cols_pose(lay, b, p)
        if where == "gauss":
            return x, Ra, cj, blk
        E = ek.te.E[:, 1:]
        cols = np.broadcast_to(cj.reshape(m, 1, nc * p), (m, p, nc * p))
        J = (E[None, :, None, :, None] * blk[:, :, :, None, :]).reshape(m, p, 6, nc * p)
        return x, Ra, cols, J

    def attach_velocity(self, ek, local, data):
        kin = ek.groups[self.group_index]
        key = ("vel", id(data))
        cache = vars(kin).setdefault("cache", {})
        got = cache.get(key)
        if got is None:
            got = cache[key] = self._attach_velocity(ek, kin, local, data)
        return got

    def _attach_velocity(self, ek, kin, local, data):
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        W = kin.W[local]
        om, qd = W[..., 3:6], W[..., 6:]
        R, T, Q, r, psi, Tp, RPt, RGam = self._kin_geometry(kin, local, data)
        u_t = np.einsum("mkdj,mkj->mkd", RPt, qd)
        u_r = np.einsum("mkdj,mkj->mkd", RGam, qd)
        nu = np.concatenate([W[..., :3] + rot.cross(om, r) + u_t, om + u_r], axis=-1)
        N, nm = self.N, self.nm
        ip = np.arange(p)
        cols = np.concatenate([lay.body(b[:, None], ip[None], self.BW, N), lay.body(b[:, None], ip[None], self.BTH, 3),
                               lay.body(b[:, None], ip[None], self.BQ, nm)], axis=-1)
        J = np.zeros((local.size, p, 6, N + 3 + nm))
        J[..., :3, :3] = I3
        J[..., :3, 3:6] = -rot.skew(r)
        J[..., :3, 6:N] = RPt
        J[..., 3:, 3:6] = I3
        J[..., 3:, 6:N] = RGam
        J[..., :3, N:N + 3] = -(rot.skew(om) @ rot.skew(r) + rot.skew(u_t)) @ T
        J[..., 3:, N:N + 3] = -rot.skew(u_r) @ T
        J[..., :3, N + 3:] = rot.skew(om) @ RPt
        dT = rot.d_tangent(psi, np.einsum("mdj,mkj->mkd", data.Pr, qd))
        J[..., 3:, N + 3:] = R @ dT @ data.Pr[:, None]
        return nu, cols, J

    def wrench_map(self, ek, local, data, wrench, target):
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        b = self.bodies[local]
        R, T, Q, r, psi, Tp, RPt, RGam = self._kin_geometry(kin, local, data)
        ip = np.arange(p)
        N, nm = self.N, self.nm
        slot = self.BW if target == "multiplier" else self.BPI
        rows = lay.body(b[:, None], ip[None], slot, N)
        m = local.size
        BT = np.zeros((m, p, N, 6))
        BT[..., :3, :3] = I3
        BT[..., 3:6, 3:] = I3
        BT[..., 3:6, :3] = rot.skew(r)
        BT[..., 6:, :3] = np.swapaxes(RPt, -1, -2)
        BT[..., 6:, 3:] = np.swapaxes(RGam, -1, -2)
        f, mo = wrench[..., :3], wrench[..., 3:]
        d = np.zeros((m, p, N, 3 + nm))
        Sf = rot.skew(f)
        d[..., 3:6, :3] = Sf @ rot.skew(r) @ T
        d[..., 3:6, 3:] = -Sf @ RPt
        Rt = np.swapaxes(R, -1, -2)
        d[..., 6:, :3] = (np.swapaxes(data.Pt[:, None], -1, -2) @ Rt @ Sf
                          + np.swapaxes(RGam, -1, -2) @ rot.skew(mo)) @ T
        u = np.einsum("mked,mke->mkd", R, mo)  # R^T m
        dTu = rot.d_tangent_T(psi, u)
        d[..., 6:, 3:] = np.swapaxes(data.Pr[:, None], -1, -2) @ dTu @ data.Pr[:, None]
        cols = np.concatenate([lay.body(b[:, None], ip[None], self.BTH, 3), lay.body(b[:, None], ip[None], self.BQ, nm)], axis=-1)
        if target != "multiplier" or nm == 0:
            return rows, BT, [(cols, d)]
        return self._multiplier_rate(ek, local, data, wrench, rows, BT, cols, d, dTu)

    def _multiplier_rate(self, ek, local, data, w, rows, BT, cols, d, dTu):
        """The multipliers ``w`` enter the constitutive law as ``Lambda = B^T w`` with a map ``B`` that
        moves with the interface; for the modal rows ``p_q = pi_q + B_q^T w`` to obey the balance of
        momenta with the reaction ``Q = w' + S(v_att) w`` (the joint's definition of its multipliers)
        the modal momentum rows get ``-h c_q``::

            c_q = B_q^T S(v_att) w - (dB_q/dt)^T w
                = Phi_r^T T(psi)^T R^T (v_att x w_f + omega x w_m) + Phi_t^T R^T (omega x w_f)
                  - Phi_r^T [d(T(psi)^T u)/dpsi] Phi_r qdot,           u = R^T w_m

        (the frame rows need nothing: their share is the ``v x pi_v`` of the moment balance).  Rows:
        the constitutive law and the modal momentum balance; Jacobian with ``w`` fixed analytic.
        ``dTu = d(T(psi)^T R^T w_m)/dpsi`` from :meth:`wrench_map` (same ``psi`` and ``u``)."""
        from modal_reference_matrices import tangent_T_second

        kin = ek.groups[self.group_index]
        lay, p, h = ek.lay, ek.te.p, ek.h
        b = self.bodies[local]
        N, nm = self.N, self.nm
        W = kin.W[local]
        R, T, Q, r, psi, Tp, RPt, RGam = self._kin_geometry(kin, local, data)
        om, qd = W[..., 3:6], W[..., 6:]
        nu, cols_v, Jv = self.attach_velocity(ek, local, data)
        wf, wm = w[..., :3], w[..., 3:]
        Rt = np.swapaxes(R, -1, -2)
        PrT = np.swapaxes(data.Pr[:, None], -1, -2)  # (m,1,nm,3)
        PtT = np.swapaxes(data.Pt[:, None], -1, -2)
        TtRt = np.swapaxes(Tp, -1, -2) @ Rt
        a = np.einsum("mdj,mkj->mkd", data.Pr, qd)
        u = np.einsum("mkde,mkd->mke", R, wm)  # R^T w_m
        # d(T^T u)/dpsi . a = Ma u: column j from u = e_j, the three in one batched call
        dTe = rot.d_tangent_T(psi[..., None, :], np.broadcast_to(I3, psi.shape[:-1] + (3, 3)))  # (m,p,j,3,3)
        Ma = np.swapaxes((dTe @ a[..., None, :, None])[..., 0], -1, -2)
        # c_q = Cw @ w (linear in w)
        m = local.size
        Cw = np.zeros((m, p, nm, 6))
        Cw[..., :3] = PrT @ TtRt @ rot.skew(nu[..., :3]) + PtT @ Rt @ rot.skew(om)
        Cw[..., 3:] = PrT @ TtRt @ rot.skew(om) - PrT @ Ma @ Rt
        # Jacobian of c_q with w fixed: columns [W (N), TH (3), Q (nm)] of attach_velocity
        z = rot.cross(nu[..., :3], wf) + rot.cross(om, wm)
        y = rot.cross(om, wf)
        dc = np.zeros((m, p, nm, N + 3 + nm))
        dz = -rot.skew(wf) @ Jv[..., :3, :]  # d(v_att x w_f)
        dz[..., :, 3:6] -= rot.skew(wm)  # d(omega x w_m), omega = W[3:6]
        dc += PrT @ TtRt @ dz
        dc[..., N:N + 3] += (PrT @ TtRt @ rot.skew(z) + PtT @ Rt @ rot.skew(y) - PrT @ Ma @ Rt @ rot.skew(wm)) @ T
        dc[..., N + 3:] += PrT @ (rot.d_tangent_T(psi, np.einsum("mkde,mkd->mke", R, z))
                                  - tangent_T_second(psi, u, a)) @ data.Pr[:, None]
        dc[..., 3:6] += PtT @ Rt @ (-rot.skew(wf))
        dc[..., 6:N] += -PrT @ dTu @ data.Pr[:, None]
        ip = np.arange(p)
        rows2 = np.concatenate([rows, lay.body(b[:, None], ip[None], self.BPI + 6, nm)], axis=-1)
        BT2 = np.concatenate([BT, h * Cw], axis=-2)
        d2 = np.concatenate([d, np.zeros((m, p, nm, d.shape[-1]))], axis=-2)
        dv = np.concatenate([np.zeros((m, p, N, dc.shape[-1])), h * dc], axis=-2)
        return rows2, BT2, [(cols, d2), (cols_v, dv)]

    # ================================================================== element equations
    def unpack(self, ek, Ug: NDArray):
        st, te = ek.st, ek.te
        x1, R1, q1 = st.x[self.bodies], st.R[self.bodies], self.node_q(st)
        sl = lambda a, k: Ug[..., a:a + k]  # noqa: E731
        X, TH, Q = sl(self.BX, 3), sl(self.BTH, 3), sl(self.BQ, self.nm)
        UTH = _poly(te.E, np.zeros_like(x1), TH)
        return SimpleNamespace(
            X=X, TH=TH, Q=Q, PI=sl(self.BPI, self.N), W=sl(self.BW, self.N), R=rot.exp(TH) @ R1[:, None],
            T=rot.tangent(TH), UX=_poly(te.E, x1, X), UR=rot.exp(UTH) @ R1[:, None], UT=rot.tangent(UTH),
            UQ=_poly(te.E, q1, Q), cache={},
        )

    def residual(self, ek, kin, r: NDArray, trip, gravity: NDArray) -> None:
        """Rows of the group (``r (n, p, slots)``) and their Jacobian blocks."""
        from modal_reference_residual import modal_residual

        modal_residual(self, ek, kin, r, trip, gravity)
