"""Modal flexible bodies (floating frame of reference): equations in modified momenta, batched over
the bodies of the group (modes padded to the group's largest count with inert modes).

Unknowns of body ``b`` at internal point ``i`` (``N = 6 + nm``, ``18 + 3 nm`` slots)::

    x(3) | theta(3) | q(nm) | pi(N) | w(N)

``x`` frame origin ``O`` (inertial), ``theta`` rotation increment (``R = exp(theta) R1``), ``q``
modal coordinates, ``pi`` modified momenta (force; moment about ``O``; modal; first six inertial),
``w = (v, omega, qdot)`` (internal only; ``v`` velocity of ``O``, ``omega`` inertial).  Rows::

    Rx     = D_i0 x1 + sum_j D_ij X_j - h v_i
    Rtheta = sum_j D_ij Theta_j - h T(Theta_i)^-1 omega_i
    Rq     = D_i0 q1 + sum_j D_ij Q_j - h qdot_i
    Rpi_v  = D_i0 pi1 + sum_j D_ij Pi_j - h (F + m g)
    Rpi_om = ...                        + h v x Pi_v - h (M_O + (R S(q)) x g)
    Rpi_q  = ...                        - h (Q_q + dT/dq - f_el(q) - C qdot - K_s q + S1^T R^T g)
    Rw     = Rb Mb(q) Rb^T w - Pi - Lambda                      Rb = diag(R, R, I)

``Mb`` and ``dT/dq`` from the mass blocks of :mod:`.modal_matrices`; ``f_el`` the elastic force
(``K``, and with ``stiffening="full"`` the cubic ``G`` and quartic ``H`` terms through their
low-rank factors, :mod:`flexmb.fe.reduction.energy_factors`); ``K_s = sum_c s_c Kg[c]`` the
unit inertial preload stiffness scaled by the frame's motion in body axes: the spin products of
``Omega = R^T omega``, the angular acceleration and the frame-origin acceleration minus gravity
(:mod:`.modal_residual`) (``"full"``: the residual ``Kg_res``; ``"preload"``: the full ``Kg``;
``"none"``: 0).

Every evaluation is a few compiled calls per group (:mod:`.modal_kernels`: rows and Jacobian;
:mod:`.modal_attach`: interface poses, velocities, ``B^T`` and the multiplier-map rate), O(nm^2)
per body and point with the strain-energy factors of ranks R3, R4 (O((R3 + R4) nm^2)).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies import modal_attach as ma
from flexmb.dynamics.bodies import modal_kernels as mk
from flexmb.dynamics.bodies import modal_laws as ml
from flexmb.dynamics.bodies.modal_matrices import group_data
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import attachment_index, node_columns
from flexmb.dynamics.march.kernels import end_values, extrapolate

I3 = np.eye(3)
#: key of the modal coordinates at a node in ``ElementStart.extra``
QKEY = "flex_q"


class FlexibleBodies:
    """A group of modal flexible bodies (model indices ``bodies``).

    Data (padded to ``nm`` modes): ``mass (n,)``, ``J0 (n,3,3)`` undeformed inertia about the centre
    of mass (body axes), ``S0``, ``S1`` first moments, ``data``: the kernels' arrays
    (:func:`~flexmb.dynamics.bodies.modal_matrices.group_data`), ``q0``, ``qd0 (n,nm)``.
    """

    kind = "flexible"

    def __init__(self, model, bodies: NDArray):
        self.bodies = frozen(np.asarray(bodies, dtype=np.int64))  # (kernel constant)
        self.n = n = self.bodies.size
        src = [model.bodies[b] for b in self.bodies]
        self.src = src
        self.nm_b = np.array([b.n_modes for b in src], dtype=np.int64)
        nm = self.nm = int(self.nm_b.max(initial=0))
        self.N = N = 6 + nm
        self.nv = N
        self.slots = 6 + nm + 2 * N
        self.BX, self.BTH, self.BQ, self.BPI, self.BW = 0, 3, 6, 6 + nm, 6 + nm + N
        self.mass = frozen(np.array([b.mass for b in src], dtype=float).reshape(n))  # (kernel constant)
        self.data = group_data(src, nm)
        self.S0, self.S1 = self.data["S0"], self.data["S1"]
        #: modal damping matrices (n, nm, nm) (padded): the rows' law, read by the energy audit
        self.C = self.data["C"]
        #: unit preload stiffness of the frame accelerations (n, 6, nm, nm) or None: the marching driver
        #: stores the projected node velocity for them (``simulate._advance``, NODE_VELOCITY)
        self.Ka = self.data["Ka"] if self.data["Ka"].shape[0] else None
        #: undeformed inertia about the centre of mass, body axes (n, 3, 3) (model magnitudes)
        self.J0 = np.array([b.data.invariants.inertia_tensor_com for b in src], dtype=float).reshape(n, 3, 3)
        self.q0 = np.zeros((n, nm))
        self.qd0 = np.zeros((n, nm))
        for k, b in enumerate(src):
            self.q0[k, :b.n_modes] = b.q0
            self.qd0[k, :b.n_modes] = b.qd0
        self._pos = {int(b): k for k, b in enumerate(self.bodies)}
        self._positions = np.arange(n, dtype=np.int64)
        self._pos_slots = self._mom_slots = None  # the warm predictor's slot lists (predict_warm)
        self._iface_data = None  # the interfaces' attachment data (node outputs, :meth:`interfaces`), built once

    @property
    def equations(self) -> dict:
        return {self.BX: "position kinematics", self.BTH: "rotation kinematics", self.BQ: "modal kinematics",
                self.BPI: "momentum balance (v, omega, modal)", self.BW: "velocity (constitutive law)"}

    def local_index(self, bodies: NDArray) -> NDArray:
        return np.array([self._pos[int(b)] for b in bodies], dtype=np.int64)

    # ================================================================== node level
    def node_q(self, st, local=None) -> NDArray:
        q = getattr(st, "extra", {}).get(QKEY, self.q0)
        return q if local is None else q[local]

    def initial(self, model):
        x = np.array([b.position for b in self.src]).reshape(self.n, 3)
        R = np.array([b.orientation for b in self.src]).reshape(self.n, 3, 3)
        w = np.concatenate([np.array([b.velocity for b in self.src]).reshape(self.n, 3),
                            np.array([b.angular_velocity for b in self.src]).reshape(self.n, 3), self.qd0], axis=1)
        return x, R, w

    def initial_extra(self) -> dict:
        return {QKEY: self.q0.copy()}

    def mass_blocks(self, st) -> NDArray:
        """World-axes mass matrices ``(n, N, N)`` at a node (compiled, :func:`.modal_laws.mass_blocks`)."""
        d = self.data
        out = np.empty((self.n, self.N, self.N))
        ml.mass_blocks(np.ascontiguousarray(st.R[self.bodies]), np.ascontiguousarray(self.node_q(st)), self._positions, self.mass,
                       d["S0"], d["S1"], d["J0"], d["J1"], d["J2"], d["psi0"], d["dpsi"], d["Mq"], out)
        return out

    def inverse_mass_blocks(self, st) -> NDArray:
        """Inverse world-axes mass matrices ``(n, N, N)`` at a node (compiled,
        :func:`.modal_laws.inverse_mass_blocks`)."""
        d = self.data
        out = np.empty((self.n, self.N, self.N))
        if self.n:
            ml.inverse_mass_blocks(np.ascontiguousarray(st.R[self.bodies]), np.ascontiguousarray(self.node_q(st)),
                                   self._positions, self.mass, d["S0"], d["S1"], d["J0"], d["J1"], d["J2"], d["psi0"],
                                   d["dpsi"], d["Mq"], out)
        return out

    def momenta(self, st, w: NDArray) -> NDArray:
        return np.einsum("nij,nj->ni", self.mass_blocks(st), w)

    def velocities(self, st, p: NDArray) -> NDArray:
        return np.linalg.solve(self.mass_blocks(st), p[..., None])[..., 0]

    def kinetic_energy(self, st, w: NDArray) -> float:
        """Kinetic energy of the group at the node ``st`` with velocities ``w (n, N)`` [J] (compiled,
        :func:`.modal_laws.kinetic_energies`)."""
        if not self.n:
            return 0.0
        d = self.data
        out = np.empty(self.n)
        ml.kinetic_energies(np.ascontiguousarray(st.R[self.bodies]), np.ascontiguousarray(self.node_q(st)),
                            self._positions, self.mass, d["S0"], d["S1"], d["J0"], d["J1"], d["J2"], d["psi0"],
                            d["dpsi"], d["Mq"], np.ascontiguousarray(w, dtype=float), out)
        return float(out.sum())

    def gravity_potential(self, st, g: NDArray) -> float:
        """Potential of gravity ``g (3,)`` of the group at the node ``st`` [J] (compiled,
        :func:`.modal_laws.gravity_potential`)."""
        return float(ml.gravity_potential(np.ascontiguousarray(st.x), np.ascontiguousarray(st.R),
                                          np.ascontiguousarray(self.node_q(st)), self.bodies, self.mass, self.S0,
                                          self.S1, np.ascontiguousarray(g, dtype=float)))

    def strain_energies(self, st) -> NDArray:
        """Strain energy of every body of the group at the node ``st``, ``(n,)`` [J]."""
        d = self.data
        out = np.empty(self.n)
        ml.strain_energies(np.ascontiguousarray(self.node_q(st)), self._positions, d["K"], d["cs"], d["cu"], d["cV"],
                           d["ql"], d["qA"], out)
        return out

    def strain_energy(self, st) -> float:
        return float(self.strain_energies(st).sum())

    def frame_output(self, st, w: NDArray):
        return st.x[self.bodies], st.R[self.bodies], w[:, :3], w[:, 3:6]

    def node_output(self, st, w: NDArray) -> dict:
        """Recorded per node (output only): ``modal/<body>``, ``modal_rate/<body>`` (own modes) and,
        per interface, ``interface/<body>/<name>/{position, rotation, velocity, angular_velocity}``
        (inertial; the interface frame as the mesh gives it, A = I): every interface of the group in one
        compiled call (:func:`.modal_attach.node_interfaces`), then :meth:`node_extra`."""
        q = self.node_q(st)
        w = np.ascontiguousarray(w, dtype=float)
        local, data, _ = self.interfaces()
        m = local.size
        xo, Ro, nu = np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 6))
        if m:
            ma.node_interfaces(st.x, np.ascontiguousarray(st.R), np.ascontiguousarray(q), w, local, self.bodies,
                               data.c, data.A, data.Pt, data.Pr, xo, Ro, nu)
        return self.node_extra(q, w, xo, Ro, nu)

    def node_extra(self, q: NDArray, w: NDArray, xo: NDArray, Ro: NDArray, nu: NDArray) -> dict:
        """The node outputs of :meth:`node_output` from the modal coordinates ``q (n, nm)``, the velocities
        ``w (n, N)`` and the interfaces' positions ``xo (m, 3)``, frames ``Ro (m, 3, 3)`` and velocities
        ``nu (m, 6)`` (:meth:`interfaces` order; also the compiled node stage's,
        :mod:`flexmb.dynamics.node.stage_modal`)."""
        out = {}
        start = self.interfaces()[2]
        for k, body in enumerate(self.src):  # output only: one entry per body and interface
            nmk = self.nm_b[k]
            out[f"modal/{body.name}"] = q[k, :nmk].copy()
            out[f"modal_rate/{body.name}"] = w[k, 6:6 + nmk].copy()
            for i, f in enumerate(body.data.interfaces):
                key, j = f"interface/{body.name}/{f.name}", start[k] + i
                out[f"{key}/position"], out[f"{key}/rotation"] = xo[j], Ro[j]
                out[f"{key}/velocity"], out[f"{key}/angular_velocity"] = nu[j, :3], nu[j, 3:]
        return out

    def interfaces(self):
        """``(local, data, start)``: the attachments at every interface of every body of the group (A = I;
        body ``k``'s from ``start[k]``, in the order of its interfaces), built once."""
        hit = self._iface_data
        if hit is None:
            names = [[f.name for f in b.data.interfaces] for b in self.src]
            local = np.array([k for k, nk in enumerate(names) for _ in nk], dtype=np.int64)
            start = np.concatenate([[0], np.cumsum([len(nk) for nk in names])]).astype(np.int64)
            pts = np.array([f.position for b in self.src for f in b.data.interfaces], dtype=float).reshape(-1, 3)
            data = self.attach_data(local, pts, np.tile(I3, (local.size, 1, 1)), [n for nk in names for n in nk])
            for key, value in vars(data).items():  # the kernels' constants: read-only (kernels.frozen)
                setattr(data, key, frozen(value))
            hit = self._iface_data = (frozen(local), data, frozen(start))
        return hit

    # ================================================================== attachments (contract)
    def attach_data(self, local: NDArray, point: NDArray, frame: NDArray, site) -> SimpleNamespace:
        m = local.size
        Pt = np.zeros((m, 3, self.nm))
        Pr = np.zeros((m, 3, self.nm))
        for k in range(m):  # set-up only
            s = None if site is None else site[k]
            if s is None:
                continue
            body = self.src[local[k]]
            f = s if hasattr(s, "modal_map") else body.interface(s)  # an interface's name, or a site with its map
            mm = np.asarray(f.modal_map, dtype=float)
            Pt[k, :, :body.n_modes] = mm[:3]
            Pr[k, :, :body.n_modes] = mm[3:]
        return SimpleNamespace(c=np.ascontiguousarray(np.asarray(point, float).reshape(m, 3)),
                               A=np.ascontiguousarray(frame, dtype=float), Pt=Pt, Pr=Pr)

    def _node_attach(self, st, local, data, velocity_map: bool):
        m = local.size
        x, R = np.empty((m, 3)), np.empty((m, 3, 3))
        B = np.empty((m, 6, self.N) if velocity_map else (0, 6, self.N))
        ma.node_attach(st.x, np.ascontiguousarray(st.R), np.ascontiguousarray(self.node_q(st)),
                       np.asarray(local, dtype=np.int64), self.bodies, data.c, data.A, data.Pt, data.Pr, x, R, B)
        return x, R, B

    def node_attach(self, st, local, data):
        """Interface frames and velocity maps at a node in one compiled call
        (:func:`.modal_attach.node_attach`): ``x (m, 3)``, ``R (m, 3, 3)``, the columns ``(m, N)`` and ``B
        (m, 6, N)`` (optional contract method, :mod:`flexmb.dynamics.bodies`: the node frames ask for both)."""
        x, R, B = self._node_attach(st, local, data, True)
        return x, R, node_columns(data, self.vel_cols, local), B

    def node_attach_pose(self, st, local, data):
        x, R, _ = self._node_attach(st, local, data, False)
        return x, R

    def node_velocity_map(self, st, local, data):
        return self.vel_cols[local], self._node_attach(st, local, data, True)[2]

    def _index(self, lay, p, local, data, kind: str):
        """Global indices ``(m, p, c)`` of slot runs of the attachments' bodies, per kind of block
        (:func:`~flexmb.dynamics.layout.attachment_index`: built once per layout)."""
        N, nm = self.N, self.nm
        parts = {"pose": ((self.BX, 3), (self.BTH, 3), (self.BQ, nm)),
                 "velocity": ((self.BW, N), (self.BTH, 3), (self.BQ, nm)),
                 "own": ((self.BTH, 3), (self.BQ, nm)),
                 "multiplier": ((self.BW, N), (self.BPI + 6, nm)),
                 "force": ((self.BPI, N),)}[kind]
        return attachment_index(data, lay, self.bodies[local], kind, parts)

    def attach_pose(self, ek, local, data, where):
        """Interface frames at the Gauss points (``where="gauss"``) or the constraint points and the
        Jacobian of ``(dx, psi)`` on the body's ``(x, theta, q)`` (constraint points: of every internal
        point, weighted by ``E``), compiled (:func:`.modal_attach.attach_pose`)."""
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        gauss = where == "gauss"
        X, R, T, Q = (kin.Xc, kin.R, kin.T, kin.Qc) if gauss else (kin.UX, kin.UR, kin.UT, kin.UQ)
        m, nc = local.size, 6 + self.nm
        x, Ra = np.empty((m, p, 3)), np.empty((m, p, 3, 3))
        J = np.empty((m, p, 6, nc) if gauss else (m, p, 6, nc * p))
        ma.attach_pose(X, R, T, Q, local, data.c, data.A, data.Pt, data.Pr, ek.te.E, not gauss, x, Ra, J)
        cols = self._index(lay, p, local, data, "pose")[0 if gauss else 1]
        return x, Ra, cols, J

    def attach_velocity(self, ek, local, data):
        """Interface velocities at the Gauss points and their Jacobian on ``(w, theta, q)`` (compiled,
        :func:`.modal_attach.attach_velocity`)."""
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        m, N, nm = local.size, self.N, self.nm
        nu, J = np.empty((m, p, 6)), np.empty((m, p, 6, N + 3 + nm))
        ma.attach_velocity(kin.U, self.BW, kin.R, kin.T, kin.Qc, local, data.c, data.Pt, data.Pr, nu, J)
        return nu, self._index(lay, p, local, data, "velocity"), J

    def wrench_map(self, ek, local, data, wrench, target):
        """Rows and ``B^T`` of wrenches at the interfaces (Gauss points), with the body's own
        Jacobian terms (compiled, :func:`.modal_attach.wrench_map`).

        Multipliers (``target="multiplier"``) enter the constitutive law as ``Lambda = B^T w`` with a
        map ``B`` that moves with the interface; for the modal rows ``p_q = pi_q + B_q^T w`` to obey the
        balance of momenta with the reaction ``Q = w' + S(v_att) w`` (the joint's definition of its
        multipliers) the modal momentum rows get ``-h c_q``::

            c_q = B_q^T S(v_att) w - (dB_q/dt)^T w
                = Phi_r^T T(psi)^T R^T (v_att x w_f + omega x w_m) + Phi_t^T R^T (omega x w_f)
                  - Phi_r^T [d(T(psi)^T u)/dpsi] Phi_r qdot,           u = R^T w_m

        (the frame rows need nothing: their share is the ``v x pi_v`` of the moment balance); its
        Jacobian with ``w`` fixed is the second ``own`` block (columns ``(w, theta, q)``)."""
        kin = ek.groups[self.group_index]
        lay, p = ek.lay, ek.te.p
        N, nm, m = self.N, self.nm, local.size
        rate = target == "multiplier" and nm > 0
        nr = N + nm if rate else N
        BT, d = np.empty((m, p, nr, 6)), np.empty((m, p, nr, 3 + nm))
        dv = np.empty((m, p, nr, N + 3 + nm) if rate else (0, 0, 0, 0))
        ma.wrench_map(kin.U, self.BW, float(ek.h), kin.R, kin.T, kin.Qc, local, data.c, data.Pt, data.Pr,
                      np.ascontiguousarray(wrench, dtype=float), rate, BT, d, dv)
        rows = self._index(lay, p, local, data, "multiplier" if target == "multiplier" else "force")
        cols = self._index(lay, p, local, data, "own")
        if not rate:
            return rows[..., :N], BT, [(cols, d)]
        return rows, BT, [(cols, d), (self._index(lay, p, local, data, "velocity"), dv)]

    # ================================================================== element equations
    def unpack(self, ek, Ug: NDArray):
        """The group's unknowns ``Ug (n, p, slots)`` and their kinematics: ``R``, ``T`` at the Gauss
        points, ``UX``, ``UR``, ``UT``, ``UQ`` of the polynomials at the constraint points (compiled:
        :func:`.modal_kernels.modal_kinematics`)."""
        st, te = ek.st, ek.te
        n, p, nm = self.n, te.p, self.nm
        Ug = np.ascontiguousarray(Ug)
        R, T, UR, UT = (np.empty((n, p, 3, 3)) for _ in range(4))
        UX, Xc = np.empty((n, p, 3)), np.empty((n, p, 3))
        UQ, Qc = np.empty((n, p, nm)), np.empty((n, p, nm))
        if n:
            mk.modal_kinematics(te.E, st.x[self.bodies], st.R[self.bodies], np.ascontiguousarray(self.node_q(st)), Ug,
                                nm, R, T, UX, UR, UT, UQ, Xc, Qc)
        return SimpleNamespace(U=Ug, X=Ug[..., :3], Xc=Xc, TH=Ug[..., 3:6], Q=Ug[..., 6:6 + nm], Qc=Qc,
                               PI=Ug[..., self.BPI:self.BPI + self.N], W=Ug[..., self.BW:self.BW + self.N], R=R, T=T,
                               UX=UX, UR=UR, UT=UT, UQ=UQ)

    def residual(self, ek, kin, r: NDArray, trip, gravity: NDArray) -> None:
        """Rows of the group (``r (n, p, slots)``) and their Jacobian values (:mod:`.modal_residual`)."""
        from flexmb.dynamics.bodies.modal_residual import modal_residual

        modal_residual(self, ek, kin, r, trip, gravity)

    # ================================================================== time marching
    def end_values(self, te, st, Ug: NDArray):
        """End values of the frame ``x``, ``R``, all ``N`` modified momenta ``pi`` and the modal coordinates
        ``q (n, nm)`` in one compiled call (:func:`flexmb.dynamics.march.kernels.end_values`, the rigid
        body's: ``x`` and ``q`` the slots with start values; the compiled node stage,
        :mod:`flexmb.dynamics.node.stage_modal`, calls it the same way)."""
        b, n, nm = self.bodies, self.n, self.nm
        pos, mom = self.end_slots()
        y1 = np.empty((n, 3 + nm))
        y1[:, :3] = st.x[b]
        y1[:, 3:] = self.node_q(st)
        y, pi, R, th = np.empty((n, 3 + nm)), np.empty((n, self.N)), np.empty((n, 3, 3)), np.empty((n, 3))
        end_values(te.end, Ug, pos, y1, mom, np.ascontiguousarray(st.pi[self.vel_cols]), self.BTH,
                   np.ascontiguousarray(st.R[b]), True, y, pi, R, th)
        return np.ascontiguousarray(y[:, :3]), R, pi, {QKEY: np.ascontiguousarray(y[:, 3:])}

    def end_slots(self):
        """The slots with end values: ``x`` and ``q`` (positions: extrapolated through their start values)
        and the momenta ``pi`` (``(3 + nm,)``, ``(N,)``; also the warm predictor's)."""
        if self._pos_slots is None:
            self._pos_slots = np.concatenate([self.BX + np.arange(3), self.BQ + np.arange(self.nm)]).astype(np.int64)
            self._mom_slots = (self.BPI + np.arange(self.N)).astype(np.int64)
        return self._pos_slots, self._mom_slots

    def predict_cold(self, te, st, h: float, w: NDArray, Ug: NDArray) -> None:
        c = te.c[None, :, None]
        b = self.bodies
        Ug[..., self.BX:self.BX + 3] = st.x[b][:, None] + h * c * w[:, None, :3]
        Ug[..., self.BTH:self.BTH + 3] = h * c * w[:, None, 3:6]
        Ug[..., self.BQ:self.BQ + self.nm] = self.node_q(st)[:, None] + h * c * w[:, None, 6:]
        Ug[..., self.BPI:self.BPI + self.N] = st.pi[self.vel_cols][:, None]
        Ug[..., self.BW:self.BW + self.N] = w[:, None]

    def predict_warm(self, te, st, st_prev, Ug: NDArray, Up: NDArray, Pe: NDArray, Pi: NDArray) -> None:
        """Extrapolate the previous element's polynomials (degree p through the start value for ``x``,
        ``q``, ``theta`` and ``pi``, degree p - 1 for ``w``) to the new internal points; rotations re-based
        on the new start, momenta shifted by the gauge reset (compiled, the rigid body's kernel:
        :func:`flexmb.dynamics.march.kernels.extrapolate` with the extrapolation matrices ``Pe``,
        ``Pi`` of :func:`~flexmb.dynamics.march.kernels.extrapolation_matrices`)."""
        pos, mom = self.end_slots()  # x and q: the slots extrapolated through their start values
        start = np.concatenate([st_prev.x[self.bodies], self.node_q(st_prev)], axis=1)
        extrapolate(Pe, Pi, te.end, Up, Ug, pos, start, self.BTH, mom,
                    np.ascontiguousarray(st_prev.pi[self.vel_cols]), np.ascontiguousarray(st.pi[self.vel_cols]))

    def scales(self, L: float, V: float) -> NDArray:
        m = self.mass.max(initial=0.0)
        J = np.abs(self.data["J0"]).max(initial=0.0) if self.n else 0.0
        sm = np.sqrt(m)
        one = np.ones(self.slots)
        one[self.BX:self.BX + 3] = L
        one[self.BQ:self.BQ + self.nm] = 1e-2 * sm * L
        one[self.BPI:self.BPI + 3] = m * V
        one[self.BPI + 3:self.BPI + 6] = J * V / L
        one[self.BPI + 6:self.BPI + self.N] = sm * V
        one[self.BW:self.BW + 3] = V
        one[self.BW + 3:self.BW + 6] = V / L
        one[self.BW + 6:self.BW + self.N] = sm * V
        return np.tile(one, (self.n, 1))


def body_energies(body, q: NDArray, Wb: NDArray | None = None):
    """Strain energy ``(T,)`` of one ``FlexibleBody`` element at modal coordinates ``q (T, nm)`` and,
    with body-axes velocities ``Wb (T, 6 + nm)``, its kinetic energy ``(T,)`` (outputs: the laws of
    :mod:`.modal_laws`, the same as the dynamics')."""
    q = np.ascontiguousarray(q, dtype=float)
    T, nm = q.shape
    d = group_data([body], nm)
    idx = np.zeros(T, dtype=np.int64)
    U = np.empty(T)
    ml.strain_energies(q, idx, d["K"], d["cs"], d["cu"], d["cV"], d["ql"], d["qA"], U)
    if Wb is None:
        return U, None
    M = np.empty((T, 6 + nm, 6 + nm))
    ml.mass_blocks(np.ascontiguousarray(np.broadcast_to(I3, (T, 3, 3))), q, idx, np.array([body.mass]), d["S0"],
                   d["S1"], d["J0"], d["J1"], d["J2"], d["psi0"], d["dpsi"], d["Mq"], M)
    return U, 0.5 * np.einsum("tr,trs,ts->t", Wb, M, Wb)

