"""Initial state of a flexible body from nodal fields: the modal coordinates, their rates and the
floating frame's motion fitted by least squares to a displacement and a velocity field of the FE
nodes (:meth:`FlexibleBody.from_field <flexmb.model.flexible.FlexibleBody.from_field>`), instead of
fitting ``q0``, ``qd0`` and the frame velocity by hand.

Kinematics (the floating frame of reference, :mod:`flexmb.model.flexible`): node ``n`` with
undeformed body-frame position ``X0_n`` is at ``x + R (X0_n + Phi_n q)`` and moves with
``v_n = V + w x R (X0_n + Phi_n q) + R Phi_n qd`` (``V`` the frame origin's velocity, ``w`` the
angular velocity, inertial components).

* Displacement ``u_n`` (from the undeformed mesh placed at the given ``position``/``orientation``,
  body-frame components): ``u_n = t + theta x X0_n + Phi_n q``, linear least squares in the frame's
  small translation ``t``, small rotation ``theta`` and ``q``. The rigid part moves the frame
  (``x + R t``, ``R exp(theta)``); ``q`` is ``q0``.
* Velocity ``v_n`` (inertial): linear least squares in ``V``, ``w`` and ``qd`` at the fitted pose.

Each fit must be determined (the nodes given see every mode and the frame's six motions) and must
reproduce the field: a relative RMS residual above ``tol`` is a ModelError naming the worst node
(the field is not a motion of the reduced body), so nothing is dropped without a word.
"""
from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError

__all__ = ["FieldFit", "fit_nodal_fields"]

logger = logging.getLogger(__name__)

#: default largest relative RMS residual of a fitted field
FIELD_TOL = 1e-2
#: rigid rotation in a displacement field above which its linearization distorts the body (rad)
MAX_ROTATION = 0.05


class FieldFit(NamedTuple):
    """Result of :func:`fit_nodal_fields`: the arguments of a FlexibleBody and the fit residuals.

    Attributes
    ----------
    q0, qd0 : ndarray, shape (nm,)
        Modal coordinates [m sqrt(kg)] and rates.
    position : ndarray, shape (3,)
        Frame origin [m] (the given one moved by the displacement's rigid part).
    orientation : ndarray, shape (3, 3)
        Frame rotation.
    velocity, angular_velocity : ndarray, shape (3,)
        Frame origin velocity [m/s] and angular velocity (inertial components) [rad/s].
    residual_displacement, residual_velocity : float
        Relative RMS residual of each fit (0 for a field of the basis; nan when not given).
    """

    q0: NDArray[np.float64]
    qd0: NDArray[np.float64]
    position: NDArray[np.float64]
    orientation: NDArray[np.float64]
    velocity: NDArray[np.float64]
    angular_velocity: NDArray[np.float64]
    residual_displacement: float
    residual_velocity: float


def _skew_rows(r: NDArray[np.float64]) -> NDArray[np.float64]:
    """``-skew(r_n)`` for every row, shape (k, 3, 3): ``a x r_n = -skew(r_n) a``."""
    out = np.zeros((len(r), 3, 3))
    out[:, 0, 1], out[:, 0, 2] = r[:, 2], -r[:, 1]
    out[:, 1, 0], out[:, 1, 2] = -r[:, 2], r[:, 0]
    out[:, 2, 0], out[:, 2, 1] = r[:, 1], -r[:, 0]
    return out


def _field(name: str, value: Any, k: int, owner: str) -> NDArray[np.float64]:
    try:
        a = None if isinstance(value, (str, bytes)) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != (k, 3) or not np.all(np.isfinite(a)):
        raise ModelError(f"{owner}: {name} must be finite nodal vectors of shape ({k}, 3) (one row per node given); "
                         f"got {'shape ' + str(a.shape) if a is not None else repr(value)[:60]}")
    return a


def _solve(A: NDArray, b: NDArray, names: list[str], what: str, owner: str, nodes: NDArray, tol: float):
    """Least squares ``A x = b`` (rows: 3 per node); ModelError when undetermined or not reproduced."""
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0
    x, _, rank, sv = np.linalg.lstsq(A / scale, b, rcond=None)
    if rank < A.shape[1]:
        _, _, Vt = np.linalg.svd(A / scale, full_matrices=False)
        free = [names[i] for i in np.flatnonzero(np.abs(Vt[-1]) > 0.3)]
        raise ModelError(f"{owner}: the {what} at the {len(nodes)} node(s) given does not determine {', '.join(free)} "
                         f"(rank {rank} of {A.shape[1]}); give the field at more nodes (default: every node)")
    x = x / scale
    res = (A @ x - b).reshape(-1, 3)
    norm = float(np.sqrt(np.mean(b**2)))
    rel = float(np.sqrt(np.mean(res**2))) / norm if norm > 0 else float(np.abs(res).max() > 0)
    if rel > tol:
        worst = int(np.argmax(np.linalg.norm(res, axis=1)))
        raise ModelError(
            f"{owner}: the {what} is not a motion of the reduced body: relative RMS residual {rel:.3g} > tol = {tol:g} "
            f"(worst at node {int(nodes[worst])}: {np.linalg.norm(res[worst]):.3g} off); the modes cannot represent it. "
            f"Keep more modes in the data, check the field's frame and units, or pass tol= to accept the fit")
    return x, rel


def fit_nodal_fields(data, *, displacement: Any = None, node_velocity: Any = None, nodes: Any = None,
                     position: Any = (0.0, 0.0, 0.0), orientation: Any = None, tol: float = FIELD_TOL,
                     owner: str = "FlexibleBody.from_field") -> FieldFit:
    """Fit the modal coordinates, their rates and the frame's motion to nodal fields.

    Parameters
    ----------
    data : FlexibleBodyData
    displacement : array_like, shape (k, 3), optional
        Displacement of the nodes from the undeformed mesh placed at ``position``/``orientation``,
        body-frame components [m]. None: ``q0 = 0``, the frame as given.
    node_velocity : array_like, shape (k, 3), optional
        Inertial velocity of the nodes [m/s]. None: at rest.
    nodes : sequence of int or str, optional
        The nodes the fields are given at (indices into ``data.points``, or an interface name);
        default every node (k = n_nodes).
    position, orientation
        The frame's pose the displacement is measured from (as :class:`FlexibleBody`).
    tol : float
        Largest relative RMS residual accepted (default 1e-2).

    Returns
    -------
    FieldFit
    """
    from flexmb.model.checks import index_list, number, vec3
    from flexmb.model.frames import rotation_input  # the one rule for orientation input (frames.py)
    from flexmb.rotations.so3 import exp

    tol = number("tol", tol, owner, positive=True)
    if nodes is None:
        idx = np.arange(data.n_nodes)
    elif isinstance(nodes, str):
        idx = np.asarray(data.interface(nodes).nodes, dtype=np.int64).reshape(-1)
    else:
        idx = index_list("nodes", nodes, data.n_nodes, owner)
    x0 = vec3("position", position, owner)
    R0 = rotation_input("orientation", orientation, owner)
    X = np.asarray(data.points, dtype=float)[idx]
    Phi = np.asarray(data.mode_shapes, dtype=float)[idx]  # (k, 3, nm)
    nm, k = data.n_modes, idx.size
    modes = [f"mode {i}" for i in range(nm)]
    q0, x, R, res_u = np.zeros(nm), x0, R0, float("nan")
    if displacement is not None:
        u = _field("displacement", displacement, k, owner)
        A = np.concatenate([np.broadcast_to(np.eye(3), (k, 3, 3)), _skew_rows(X), Phi], axis=2).reshape(3 * k, -1)
        names = ["the frame's translation x", "y", "z", "the frame's rotation about x", "y", "z"] + modes
        sol, res_u = _solve(A, u.reshape(-1), names, "displacement", owner, idx, tol)
        t, theta, q0 = sol[:3], sol[3:6], sol[6:]
        if np.linalg.norm(theta) > MAX_ROTATION:
            raise ModelError(f"{owner}: the displacement turns the body by {np.linalg.norm(theta):.3g} rad as a whole "
                             f"(> {MAX_ROTATION} rad, where a displacement field no longer describes a rotation); give "
                             "the rotation as orientation= and the displacement from that pose")
        x, R = x0 + R0 @ t, R0 @ exp(theta)
    V, w, qd0, res_v = np.zeros(3), np.zeros(3), np.zeros(nm), float("nan")
    if node_velocity is not None:
        v = _field("node_velocity", node_velocity, k, owner)
        r = np.einsum("ij,kj->ki", R, X + Phi @ q0)  # R (X0 + Phi q0), (k, 3)
        A = np.concatenate([np.broadcast_to(np.eye(3), (k, 3, 3)), _skew_rows(r), np.einsum("ij,kjm->kim", R, Phi)],
                           axis=2).reshape(3 * k, -1)
        names = ["the frame's velocity x", "y", "z", "its angular velocity x", "y", "z"] + modes
        sol, res_v = _solve(A, v.reshape(-1), names, "node velocity", owner, idx, tol)
        V, w, qd0 = sol[:3], sol[3:6], sol[6:]
    logger.info("%s: fitted q0 %s, qd0 %s (relative RMS residuals: displacement %.3g, velocity %.3g)", owner,
                np.round(q0, 12).tolist(), np.round(qd0, 12).tolist(), res_u, res_v)
    return FieldFit(q0, qd0, x, R, V, w, res_u, res_v)
