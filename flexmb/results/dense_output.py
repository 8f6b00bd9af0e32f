"""Results at requested times (dense output) from the time nodes of a :class:`~flexmb.Solution`.

The time-element solution is most accurate at the nodes (order ``2p``); between them the element
polynomial of degree ``p`` is accurate to order ``p + 1``.  Dense output keeps the accuracy of the
nodes as far as a local cubic allows (order 4, so ``p + 1`` or better for ``p <= 3``), using the
values *and* derivatives the nodes carry:

* body positions: cubic Hermite interpolation on each element between the node positions ``x_k``
  and velocities ``v_k`` (``x(tau) = H0 x_k + H1 h v_k + H2 x_{k+1} + H3 h v_{k+1}``);
* body rotations: cubic Hermite interpolation of the rotation vector relative to the element
  start, ``R(tau) = exp(theta(tau)) R_k`` with ``theta(0) = 0``, ``theta(1) = log(R_{k+1} R_k^T)``,
  ``theta'(0) = h omega_k``, ``theta'(1) = h T(theta_1)^-1 omega_{k+1}`` (``omega`` inertial,
  ``T`` the tangent operator of :mod:`flexmb.rotations`);
* joint reactions: :meth:`~flexmb.Solution.reactions_at` (their recovery's own polynomials);
* every other nodal quantity (velocities, angular velocities, joint relative coordinates and
  velocities, multipliers, energies): the not-a-knot cubic spline through the nodes
  (:class:`scipy.interpolate.CubicSpline`; error ``O(h^4)`` on smooth motion).

Quantities at the internal points (``t_internal``, e.g. the Gauss-point joint reactions) are
returned unchanged; ``extra`` arrays with one row per node are splined like the others.  Requested times outside ``[t[0], t[-1]]`` are refused.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import CubicSpline

from flexmb import rotations as rot
from flexmb.errors import ModelError

__all__ = ["hermite_positions", "hermite_rotations", "sample"]


def _hermite_basis(tau: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    t2, t3 = tau * tau, tau * tau * tau
    return 2 * t3 - 3 * t2 + 1, t3 - 2 * t2 + tau, -2 * t3 + 3 * t2, t3 - t2


def _locate(t: NDArray, times: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """Element index ``k`` (``t[k] <= time <= t[k+1]``), element length and local ``tau``."""
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, max(t.size - 2, 0))
    h = t[k + 1] - t[k]
    return k, h, (times - t[k]) / h


def hermite_positions(t: NDArray, x: NDArray, v: NDArray, times: NDArray) -> NDArray:
    """Cubic Hermite interpolation of positions ``x (nt, ..., 3)`` with velocities ``v`` (same
    shape) at ``times (m,)``; returns ``(m, ..., 3)``."""
    k, h, tau = _locate(t, times)
    H0, H1, H2, H3 = (b.reshape((-1,) + (1,) * (x.ndim - 1)) for b in _hermite_basis(tau))
    hh = h.reshape((-1,) + (1,) * (x.ndim - 1))
    return H0 * x[k] + H1 * hh * v[k] + H2 * x[k + 1] + H3 * hh * v[k + 1]


def hermite_rotations(t: NDArray, R: NDArray, omega: NDArray, times: NDArray) -> NDArray:
    """Cubic Hermite interpolation of rotations ``R (nt, n, 3, 3)`` with inertial angular
    velocities ``omega (nt, n, 3)`` at ``times (m,)``; returns ``(m, n, 3, 3)`` (module docstring)."""
    k, h, tau = _locate(t, times)
    th1 = rot.log(R[k + 1] @ np.swapaxes(R[k], -1, -2))  # (m, n, 3)
    d0 = h[:, None, None] * omega[k]
    d1 = h[:, None, None] * np.einsum("mnij,mnj->mni", rot.tangent_inv(th1), omega[k + 1])
    _, H1, H2, H3 = (b[:, None, None] for b in _hermite_basis(tau))
    theta = H1 * d0 + H2 * th1 + H3 * d1
    return rot.exp(theta) @ R[k]


def _spline(t: NDArray, y: NDArray, times: NDArray) -> NDArray:
    if y.size == 0 or t.size < 2:
        return np.broadcast_to(y[:1], (times.size,) + y.shape[1:]).copy() if t.size else y
    return CubicSpline(t, y, axis=0, bc_type="not-a-knot")(times)


def sample(sol, times: ArrayLike):
    """A new :class:`~flexmb.Solution` whose time nodes are ``times`` (strictly increasing, within
    the solution's time span), interpolated as described in the module docstring.  Statistics,
    internal-point arrays and ``extra`` are carried over unchanged; ``meta["t_eval"]`` records the
    interpolation."""
    times = np.array(times, dtype=float).reshape(-1)
    if times.size == 0:
        raise ModelError("t_eval is empty; give at least one time")
    if not np.all(np.isfinite(times)):
        raise ModelError(f"t_eval contains non-finite values ({times[~np.isfinite(times)][:3].tolist()}); give finite times")
    if times.size > 1 and not np.all(np.diff(times) > 0):
        raise ModelError("t_eval must be strictly increasing; sort it and remove duplicates")
    t = sol.t
    span = 1e-12 * max(1.0, abs(t[-1]))
    if times[0] < t[0] - span or times[-1] > t[-1] + span:
        raise ModelError(f"t_eval spans [{times[0]:.6g}, {times[-1]:.6g}] s, outside the run [{t[0]:.6g}, {t[-1]:.6g}] s; "
                         f"request times within the simulated interval")
    requested, times = times, np.clip(times, t[0], t[-1])
    if t.size < 2:
        pos, R = sol.body_position[[0] * times.size], sol.body_rotation[[0] * times.size]
    else:
        pos = hermite_positions(t, sol.body_position, sol.body_velocity, times)
        R = hermite_rotations(t, sol.body_rotation, sol.body_angular_velocity, times)
    # exact at the nodes: keep the node values bit-identical where a requested time is a node
    idx_all = np.clip(np.searchsorted(t, times), 0, t.size - 1)
    hit = np.abs(t[idx_all] - times) <= span
    if hit.any():
        idx = idx_all[hit]
        pos[hit], R[hit] = sol.body_position[idx], sol.body_rotation[idx]
    # node reactions: their own interpolation to the nodal order (flexmb.dynamics.node.reactions)
    force, moment = sol.reactions_at(times) if sol.nj else (np.zeros((times.size, 0, 3)),) * 2
    meta = dict(sol.meta)
    meta["t_eval"] = {"n": int(times.size), "method": "cubic Hermite (positions, rotations), cubic spline (others)"}
    return type(sol)(
        t=requested, body_names=sol.body_names, body_position=pos, body_rotation=R,
        body_velocity=_spline(t, sol.body_velocity, times),
        body_angular_velocity=_spline(t, sol.body_angular_velocity, times),
        t_internal=sol.t_internal,
        kinetic_energy=_spline(t, sol.kinetic_energy, times), potential_energy=_spline(t, sol.potential_energy, times),
        joint_names=sol.joint_names, joint_types=sol.joint_types,
        joint_rel_position=_spline(t, sol.joint_rel_position, times),
        joint_rel_rotation=_spline(t, sol.joint_rel_rotation, times),
        joint_rel_velocity=_spline(t, sol.joint_rel_velocity, times),
        joint_force=force, joint_moment=moment,
        joint_force_internal=sol.joint_force_internal, joint_moment_internal=sol.joint_moment_internal,
        joint_multiplier=_spline(t, sol.joint_multiplier, times),
        stats=sol.stats, meta=meta,
        extra={k: (_spline(t, v, times) if v.ndim and v.shape[0] == t.size and v.dtype.kind == "f" else v)
               for k, v in sol.extra.items()},
    )
