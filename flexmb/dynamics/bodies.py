"""Rigid-body elements: free-body equations in modified momenta, batched over bodies and points.

For body ``b`` at internal point ``i`` (centre of mass ``x``, inertial components)::

    Rx     = D_i0 x1 + sum_j D_ij X_j - h v_i                         (kinematics of x)
    Rtheta = sum_j D_ij Theta_j - h T(Theta_i)^-1 omega_i              (incremental rotation)
    Rpi    = D_i0 pi1 + sum_j D_ij Pi_j - h [F_i - (0, v_i x pi_f,i)]  (free body, Eq. 12)
    Rw     = M_i w_i - Pi_i - Lambda_i                                  (constitutive law, Eq. 21)

``M_i = diag(m I, R_i J0 R_i^T)``; ``F_i`` are the external forces (``forces.py``) and
``Lambda_i`` the multipliers of the joints acting on the body, transported to the centre of mass
(``joints.py``).  A different body type (modal flexible body) provides the same rows for its own
unknowns and the same attachment kinematics; joint code does not change.
"""
from __future__ import annotations

import numpy as np

from flexmb import rotations as rot
from flexmb.dynamics.kinematics import Kin
from flexmb.dynamics.layout import BODY_SLOTS, BPI, BTH, BW, BX, Layout, Triplets
from flexmb.dynamics.system import CompiledModel, ElementStart

I3 = np.eye(3)
I6 = np.eye(6)


def body_residual(cm: CompiledModel, lay: Layout, kin: Kin, st: ElementStart, res: np.ndarray, trip: Triplets) -> None:
    nb, p, h, te = cm.nb, kin.te.p, kin.h, kin.te
    if nb == 0:
        return
    r = res[: lay.joint_off].reshape(nb, p, BODY_SLOTS)
    X, TH, PI, W, R, T = (a[:nb] for a in (kin.X, kin.TH, kin.PI, kin.W, kin.R, kin.T))
    v, om = W[..., :3], W[..., 3:]
    D0 = te.D[:, 0]
    D = te.D[:, 1:]
    Ti = rot.tangent_inv(TH)

    r[..., BX:BX + 3] = D0[None, :, None] * st.x[:, None] + np.einsum("ij,bjd->bid", D, X) - h * v
    r[..., BTH:BTH + 3] = np.einsum("ij,bjd->bid", D, TH) - h * np.einsum("bide,bie->bid", Ti, om)
    gyro = np.concatenate([np.zeros_like(v), rot.cross(v, PI[..., :3])], axis=-1)
    r[..., BPI:BPI + 6] = D0[None, :, None] * st.pi[:, None] + np.einsum("ij,bjd->bid", D, PI) + h * gyro
    J = R @ cm.body_J0[:, None] @ np.swapaxes(R, -1, -2)
    Jw = np.einsum("bide,bie->bid", J, om)
    m = cm.body_mass[:, None, None]
    r[..., BW:BW + 6] = np.concatenate([m * v, Jw], axis=-1) - PI

    # ---- Jacobian
    b = np.arange(nb)[:, None, None]
    i = np.arange(p)[None, :, None]
    j = np.arange(p)[None, None, :]
    bb, ii, jj = np.broadcast_arrays(b, i, j)
    Dij = np.broadcast_to(D[None], (nb, p, p))
    # D couplings of x, theta, pi
    for slot, n in ((BX, 3), (BTH, 3), (BPI, 6)):
        trip.add(lay.body(bb, ii, slot, n), lay.body(bb, jj, slot, n), Dij[..., None, None] * np.eye(n))
    bi, ip = np.meshgrid(np.arange(nb), np.arange(p), indexing="ij")
    # Rx / v
    trip.add_diag(lay.body(bi, ip, BX, 3), lay.body(bi, ip, BW, 3), -h)
    # Rtheta / theta_i and / omega_i
    trip.add(lay.body(bi, ip, BTH, 3), lay.body(bi, ip, BTH, 3), -h * rot.d_tangent_inv(TH, om))
    trip.add(lay.body(bi, ip, BTH, 3), lay.body(bi, ip, BW + 3, 3), -h * Ti)
    # Rpi moment rows / pi_f and / v
    trip.add(lay.body(bi, ip, BPI + 3, 3), lay.body(bi, ip, BPI, 3), h * rot.skew(v))
    trip.add(lay.body(bi, ip, BPI + 3, 3), lay.body(bi, ip, BW, 3), -h * rot.skew(PI[..., :3]))
    # Rw / w, / theta, / pi
    trip.add_diag(lay.body(bi, ip, BW, 3), lay.body(bi, ip, BW, 3), np.broadcast_to(m, (nb, p, 3)))
    trip.add(lay.body(bi, ip, BW + 3, 3), lay.body(bi, ip, BW + 3, 3), J)
    dJw = (J @ rot.skew(om) - rot.skew(Jw)) @ T
    trip.add(lay.body(bi, ip, BW + 3, 3), lay.body(bi, ip, BTH, 3), dJw)
    trip.add_diag(lay.body(bi, ip, BW, 6), lay.body(bi, ip, BPI, 6), -1.0)


def body_end_velocity(cm: CompiledModel, x, R, pi, lam_body) -> np.ndarray:
    """Velocities ``w (nb,6)`` at a time node from ``M w = pi + Lambda``."""
    p = pi + lam_body
    J = R @ cm.body_J0 @ np.swapaxes(R, -1, -2)
    v = p[:, :3] / cm.body_mass[:, None]
    om = np.linalg.solve(J, p[:, 3:, None])[..., 0]
    return np.concatenate([v, om], axis=1)
