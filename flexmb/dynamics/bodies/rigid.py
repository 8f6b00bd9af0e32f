"""Rigid bodies: free-body equations in modified momenta, batched over the bodies of the group.

Unknowns of body ``b`` at internal point ``i`` (18 slots, reference point = centre of mass ``G``)::

    x(3) | theta(3) | pi(6) | w(6)

``x`` position of ``G``, ``theta`` rotation increment (``R = exp(theta) R1``), ``pi`` modified
momenta (force part, moment part about ``G``; inertial), ``w = (v, omega)`` (internal only).
Rows::

    Rx     = D_i0 x1 + sum_j D_ij X_j - h v_i                         (kinematics of x)
    Rtheta = sum_j D_ij Theta_j - h T(Theta_i)^-1 omega_i              (incremental rotation)
    Rpi    = D_i0 pi1 + sum_j D_ij Pi_j - h [F_i - (0, v_i x pi_f,i)]  (free body, Eq. 12)
    Rw     = M_i w_i - Pi_i - Lambda_i                                  (constitutive law, Eq. 21)

``M_i = diag(m I, R_i J0 R_i^T)``; ``F_i`` (external forces) and ``Lambda_i`` (multipliers of the
joints) arrive through :mod:`flexmb.dynamics.elements.attachments` as wrenches at attachment points:
``F`` on the ``pi`` rows (``target="force"``), ``Lambda`` on the ``w`` rows (``"multiplier"``).
The body-type contract (see :mod:`flexmb.dynamics.bodies`) is implemented by :class:`RigidBodies`.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.bodies import rigid_kernels as kernels
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import attachment_index, node_columns
from flexmb.dynamics.march.kernels import end_values, extrapolate

I3 = np.eye(3)
I6 = np.eye(6)

SLOTS = 18
BX, BTH, BPI, BW = 0, 3, 6, 12
#: equation names by first slot (for error messages)
EQUATIONS = {BX: "position kinematics", BTH: "rotation kinematics", BPI: "momentum balance",
             BW: "velocity (constitutive law)"}


def frame_end_values(group, te, st, Ug: NDArray, n_pi: int):
    """End values of a body group whose unknowns start with a floating frame: reference-point
    position ``x (n, 3)``, rotation ``R (n, 3, 3)`` (the rotation vector's end value applied to the
    start rotation) and the first ``n_pi`` modified momenta ``pi (n, n_pi)``, from the start values
    in ``st`` and the internal values ``Ug (n, p, slots)`` through the end row of the time element
    (``y2 = end[0] y1 + end[1:] @ Y``; compiled: :func:`flexmb.dynamics.march.kernels.end_values`).
    Shared by every body type with a floating frame."""
    b = group.bodies
    n = b.size
    slots = getattr(group, "_end_slots", None)
    if slots is None or slots[1].size != n_pi:
        slots = group._end_slots = (group.BX + np.arange(3, dtype=np.int64), group.BPI + np.arange(n_pi, dtype=np.int64))
    if n == st.x.shape[0]:  # every body of the model (in order): no copies of the start values
        x1, R1 = st.x, st.R
        pi1 = st.pi.reshape(n, -1) if n * n_pi == st.pi.size else st.pi[group.vel_cols][:, :n_pi]
    else:
        x1, R1, pi1 = st.x[b], st.R[b], st.pi[group.vel_cols][:, :n_pi]
    x, pi, R, th = np.empty((n, 3)), np.empty((n, n_pi)), np.empty((n, 3, 3)), np.empty((n, 3))
    end_values(te.end, Ug, slots[0], x1, slots[1], pi1, group.BTH, R1, True, x, pi, R, th)
    return x, R, pi


class RigidBodies:
    """A group of rigid bodies (model indices ``bodies``), evaluated as one batch.

    Data: ``mass (n,)`` [kg], ``J0 (n, 3, 3)`` inertia about ``G`` in body axes, ``com (n, 3)``
    centre of mass in the body frame.
    """

    kind = "rigid"
    slots = SLOTS
    #: first slot of each unknown (the layout of one body at one internal point)
    BX, BTH, BPI, BW = BX, BTH, BPI, BW
    #: velocity coordinates per body (v of G, omega; inertial)
    nv = 6

    @property
    def equations(self) -> dict:
        return {self.BX: EQUATIONS[BX], self.BTH: EQUATIONS[BTH], self.BPI: EQUATIONS[BPI], self.BW: EQUATIONS[BW]}

    def __init__(self, model, bodies: NDArray):
        self.bodies = np.asarray(bodies, dtype=np.int64)
        self.n = self.bodies.size
        src = [model.bodies[b] for b in self.bodies]
        self.mass = np.array([b.mass for b in src], dtype=float).reshape(self.n)
        self.J0 = np.array([b.inertia for b in src], dtype=float).reshape(self.n, 3, 3)
        self.com = np.array([b.com for b in src], dtype=float).reshape(self.n, 3)
        #: ``J0^-1 (n, 3, 3)`` (the inverse mass at a node)
        self.J0inv = np.linalg.inv(self.J0) if self.n else self.J0
        self._pos = {int(b): k for k, b in enumerate(self.bodies)}
        #: first slots of x, theta, pi, w (the compiled kernels read the unknowns through them)
        self._slot_starts = np.array([self.BX, self.BTH, self.BPI, self.BW], dtype=np.int64)
        # the kernels' constants, read-only (flexmb.dynamics.kernels.frozen: one specialization per kernel)
        self.bodies, self.mass, self.J0, self.J0inv, self._slot_starts = frozen(
            (self.bodies, self.mass, self.J0, self.J0inv, self._slot_starts))
        self._pos_slots = self.BX + np.arange(3, dtype=np.int64)
        self._mom_slots = self.BPI + np.arange(6, dtype=np.int64)
        #: the group holds every body of the model, in order (its rows of a node's arrays: the arrays; read by
        #: the recorder and the compiled node stage too)
        self.every_body = self.n == len(model.bodies) and bool(np.array_equal(self.bodies, np.arange(self.n)))

    def local_index(self, bodies: NDArray) -> NDArray:
        return np.array([self._pos[int(b)] for b in bodies], dtype=np.int64)

    # ================================================================== set-up and nodes
    def initial(self, model):
        """Initial ``x (n,3)`` of ``G``, ``R (n,3,3)``, velocities ``w (n,6)`` from the model."""
        src = [model.bodies[b] for b in self.bodies]
        R = np.array([b.orientation for b in src]).reshape(self.n, 3, 3)
        rc = np.einsum("nij,nj->ni", R, self.com)
        x = np.array([b.position for b in src]).reshape(self.n, 3) + rc
        om = np.array([b.angular_velocity for b in src]).reshape(self.n, 3)
        v = np.array([b.velocity for b in src]).reshape(self.n, 3) + rot.cross(om, rc)
        return x, R, np.concatenate([v, om], axis=1)

    def mass_blocks(self, st) -> NDArray:
        """Mass matrices ``(n, 6, 6)`` at a node (velocity coordinates ``w``)."""
        M = np.zeros((self.n, 6, 6))
        M[:, :3, :3] = self.mass[:, None, None] * I3
        R = st.R[self.bodies]
        M[:, 3:, 3:] = R @ self.J0 @ np.swapaxes(R, -1, -2)
        return M

    def inverse_mass_blocks(self, st) -> NDArray:
        """``diag(I / m, R J0^-1 R^T) (n, 6, 6)`` at a node (compiled)."""
        out = np.empty((self.n, 6, 6))
        kernels.rigid_inverse_mass(st.R, self.bodies, self.J0inv, self.mass, out)
        return out

    def momenta(self, st, w: NDArray) -> NDArray:
        """Momenta ``M w (n, 6)`` for velocities ``w (n, 6)`` (compiled)."""
        out = np.empty((self.n, 6))
        kernels.rigid_momenta(st.R, self.bodies, self.J0, self.mass, np.ascontiguousarray(w, dtype=float), out)
        return out

    def velocities(self, st, p: NDArray) -> NDArray:
        """Velocities ``w = M^-1 p (n, 6)`` for momenta ``p (n, 6)``."""
        return np.einsum("nij,nj->ni", self.inverse_mass_blocks(st), p)

    def node_frames_energy(self, st, w: NDArray):
        """``(pos, rotm, vel, om, kinetic energy)`` at a node in one compiled call
        (:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_node_output`): :meth:`frame_output` and
        :meth:`kinetic_energy` together (optional contract method, :mod:`flexmb.dynamics.bodies`)."""
        n = self.n
        pos, rotm, vel, om = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3))
        ke = kernels.rigid_node_output(st.x, st.R, self.bodies, np.ascontiguousarray(w, dtype=float), self.com,
                                       self.mass, self.J0, pos, rotm, vel, om)
        return pos, rotm, vel, om, ke

    def kinetic_energy(self, st, w: NDArray) -> float:
        return float(self.node_frames_energy(st, w)[4])

    def gravity_potential(self, st, g: NDArray) -> float:
        return float(kernels.rigid_gravity_potential(st.x, self.bodies, self.mass, g))

    def frame_output(self, st, w: NDArray):
        """Body frame origin position, rotation, origin velocity and angular velocity at a node."""
        return self.node_frames_energy(st, w)[:4]

    # ================================================================== attachments (contract)
    def attach_data(self, local: NDArray, point: NDArray, frame: NDArray, site) -> SimpleNamespace:
        if site is not None and any(s is not None for s in site):
            raise ValueError("a rigid body has no interfaces: attach by point")
        c = np.ascontiguousarray(point - self.com[local], dtype=float)
        return SimpleNamespace(c=c, A=np.ascontiguousarray(frame, dtype=float), lever=bool(np.any(c)))

    def node_attach(self, st, local, data):
        """Attachment frames and velocity maps at a node in one compiled call
        (:func:`~flexmb.dynamics.bodies.rigid_kernels.rigid_node_attach`): ``x (m, 3)``, ``R (m, 3, 3)``,
        the columns ``(m, 6)`` and ``B (m, 6, 6)`` (optional contract method, :mod:`flexmb.dynamics.bodies`)."""
        m = local.size
        x, R, B = np.empty((m, 3)), np.empty((m, 3, 3)), np.empty((m, 6, 6))
        kernels.rigid_node_attach(st.x, st.R, self.bodies, local, data.c, data.A, x, R, B)
        return x, R, node_columns(data, self.vel_cols, local), B

    def node_attach_pose(self, st, local, data):
        x, R, _, _ = self.node_attach(st, local, data)
        return x, R

    def node_velocity_map(self, st, local, data):
        _, _, cols, B = self.node_attach(st, local, data)
        return cols, B

    def attach_pose(self, ek, local, data, where):
        """Attachment frames at the Gauss points (``where="gauss"``) or the constraint points and the
        Jacobian of ``(dx, psi)``: on ``(x, theta)`` of the same point (Gauss), or of every internal
        point weighted by ``E`` (constraint points: ``u(tau_k) = E[k,0] y1 + sum_j E[k,j] Y_j``)."""
        kin = ek.groups[self.group_index]
        p = ek.te.p
        gauss = where == "gauss"
        X, R, T = (kin.X, kin.R, kin.T) if gauss else (kin.UX, kin.UR, kin.UT)
        m = local.size
        x = np.empty((m, p, 3))
        Ra = np.empty((m, p, 3, 3))
        J = np.empty((m, p, 6, 6) if gauss else (m, p, 6, 6 * p))
        kernels.rigid_attach_pose(np.ascontiguousarray(X), R, T, local, data.c, data.A, ek.te.E, not gauss, x, Ra, J)
        cols = attachment_index(data, ek.lay, self.bodies[local], "pose", ((self.BX, 3), (self.BTH, 3)))
        return x, Ra, cols[0 if gauss else 1], J

    def attach_velocity(self, ek, local, data):
        kin = ek.groups[self.group_index]
        p = ek.te.p
        m = local.size
        nu = np.empty((m, p, 6))
        J = np.empty((m, p, 6, 9))
        kernels.rigid_attach_velocity(kin.U, self.BW, kin.R, kin.T, local, data.c, nu, J)
        return nu, attachment_index(data, ek.lay, self.bodies[local], "velocity", ((self.BW, 6), (self.BTH, 3))), J

    def wrench_map(self, ek, local, data, wrench, target):
        """Rows and ``B^T`` of a wrench at the attachments (Gauss points), with the body's own
        Jacobian terms ``d(B^T w)/dU`` (the lever arm turns with the body)."""
        kin = ek.groups[self.group_index]
        p = ek.te.p
        b = self.bodies[local]
        multiplier = target == "multiplier"
        rows = attachment_index(data, ek.lay, b, target, ((self.BW if multiplier else self.BPI, 6),))
        m = local.size
        BT = np.empty((m, p, 6, 6))
        lever = data.lever if hasattr(data, "lever") else bool(np.any(data.c))
        own_vals = np.empty((m, p, 6, 3) if lever else (0, 0, 6, 3))
        kernels.rigid_wrench_map(kin.R, kin.T, local, data.c, np.ascontiguousarray(wrench), np.empty((m, p, 6)), BT, own_vals)
        own = [(attachment_index(data, ek.lay, b, "own", ((self.BTH, 3),)), own_vals)] if lever else []
        return rows, BT, own

    # ================================================================== element equations
    def unpack(self, ek, Ug: NDArray):
        """The group's unknowns ``Ug (n, p, 18)`` and their kinematics: rotations ``R`` and tangent
        operators ``T`` at the Gauss points, positions ``UX``, rotations ``UR`` and ``UT`` of the
        polynomials at the constraint points (compiled kernel, :mod:`flexmb.dynamics.kernels`)."""
        st, te = ek.st, ek.te
        n, p = self.n, te.p
        Ug = np.ascontiguousarray(Ug)
        R = np.empty((n, p, 3, 3))
        T = np.empty((n, p, 3, 3))
        UX = np.empty((n, p, 3))
        UR = np.empty((n, p, 3, 3))
        UT = np.empty((n, p, 3, 3))
        if n:
            kernels.rigid_kinematics(te.E, st.x[self.bodies], st.R[self.bodies], Ug, self.BX, self.BTH, R, T, UX, UR, UT)
        return SimpleNamespace(
            U=Ug, X=Ug[..., self.BX:self.BX + 3], TH=Ug[..., self.BTH:self.BTH + 3], PI=Ug[..., self.BPI:self.BPI + 6],
            W=Ug[..., self.BW:self.BW + 6], R=R, T=T, UX=UX, UR=UR, UT=UT,
        )

    def residual(self, ek, kin, r: NDArray, trip, gravity: NDArray) -> None:
        """Rows of the group (``r``: its residual view ``(n, p, 18)``) and their own Jacobian blocks,
        computed by one compiled kernel (:func:`flexmb.dynamics.kernels.rigid_residual`); the row and
        column of every value are fixed per model (:func:`~flexmb.dynamics.kernels.rigid_jacobian_indices`)."""
        te, p, n = ek.te, ek.te.p, self.n
        if n == 0:
            return
        st = ek.st
        jac = trip.jacobian
        vals = np.empty((n, p, 12 * p + kernels.RIGID_N_LOCAL) if jac else (0, 0, 0))
        kernels.rigid_residual(te.D, float(ek.h), st.x[self.bodies], st.pi[self.vel_cols], kin.U, kin.R, kin.T,
                               self.mass, self.J0, np.asarray(gravity, dtype=float), self._slot_starts, r, vals, jac)
        if not jac:
            return
        if trip.values_only:
            trip.add_diag(None, None, vals)
        else:
            rows, cols = kernels.rigid_jacobian_indices(ek.lay.body_start[self.bodies], p, self.slots,
                                                        tuple(int(k) for k in self._slot_starts))
            trip.add_diag(rows, cols, vals)

    # ================================================================== time marching
    def end_values(self, te, st, Ug: NDArray):
        """End values ``x (n,3)``, ``R (n,3,3)``, ``pi (n,6)`` of the element from its internal values."""
        return frame_end_values(self, te, st, Ug, 6)

    def predict_cold(self, te, st, h: float, w: NDArray, Ug: NDArray) -> None:
        """Constant-velocity guess into ``Ug (n, p, 18)`` from node velocities ``w (n, 6)``."""
        c = te.c
        b = self.bodies
        Ug[..., self.BX:self.BX + 3] = st.x[b][:, None] + h * c[None, :, None] * w[:, None, :3]
        Ug[..., self.BTH:self.BTH + 3] = h * c[None, :, None] * w[:, None, 3:]
        Ug[..., self.BPI:self.BPI + 6] = st.pi[self.vel_cols][:, None]
        Ug[..., self.BW:self.BW + 6] = w[:, None]

    def predict_warm(self, te, st, st_prev, Ug: NDArray, Up: NDArray, Pe: NDArray, Pi: NDArray) -> None:
        """Extrapolate the previous element's polynomials (degree p through the start value for ``x``,
        ``theta`` and ``pi``, degree p - 1 for ``w``) to the new internal points; rotations re-based on
        the new start, momenta shifted by the gauge reset (compiled:
        :func:`flexmb.dynamics.march.kernels.extrapolate` with the extrapolation matrices ``Pe``,
        ``Pi`` of :func:`~flexmb.dynamics.march.kernels.extrapolation_matrices`)."""
        if self.every_body:  # every body in order: the node's arrays as they are (the same values)
            x1, pi1, pi2 = st_prev.x, st_prev.pi.reshape(self.n, 6), st.pi.reshape(self.n, 6)
        else:
            x1, pi1, pi2 = st_prev.x[self.bodies], st_prev.pi[self.vel_cols], st.pi[self.vel_cols]
        extrapolate(Pe, Pi, te.end, Up, Ug, self._pos_slots, x1, self.BTH, self._mom_slots, pi1, pi2)

    def scales(self, L: float, V: float) -> NDArray:
        """Absolute magnitudes of the 18 unknowns (convergence test), shape (n, 18), the same row for
        every body: position ``L``, rotation 1, momenta ``m V`` and ``J V / L`` (``m``, ``J`` the group's
        largest mass and principal inertia), velocities ``V`` and ``V / L``."""
        c = getattr(self, "_scale_consts", None)
        if c is None:  # the largest mass and principal inertia, each slot's magnitude (constant: once)
            kind = np.ones(self.slots, dtype=np.int64)  # index into the magnitudes below
            for first, k in ((self.BX, 0), (self.BTH, 1), (self.BPI, 2), (self.BPI + 3, 3), (self.BW, 4),
                             (self.BW + 3, 5)):
                kind[first:first + 3] = k
            Jm = np.linalg.eigvalsh(self.J0).max(initial=0.0) if self.n else 0.0
            c = self._scale_consts = (self.mass.max(initial=0.0), Jm, np.tile(kind, (self.n, 1)))
        m, Jm, kind = c
        return np.array([L, 1.0, m * V, Jm * V / L, V, V / L])[kind]  # (one fancy index: (n, 18))
