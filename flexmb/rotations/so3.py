"""SO(3) maps batched over leading axes: skew, exp, log, tangent operators and their exact derivatives.

Conventions
-----------
* Vectors have shape ``(..., 3)`` and matrices ``(..., 3, 3)``; every function broadcasts over the
  leading axes and is vectorised (no Python loop over the batch).
* ``skew(a) @ b == cross(a, b)``; ``axial`` is its left inverse on the antisymmetric part.
* Rotation vector ``theta`` with angle ``a = |theta|``: ``exp(theta)`` is the Rodrigues formula.
* Tangent operator ``T(theta)`` (left Jacobian of ``exp``):

  - left / spatial increment: ``R = exp(theta) R0`` gives ``skew(omega) = Rdot R^T`` with
    ``omega = T(theta) thetadot``, and ``exp(theta + d) = exp(T(theta) d) exp(theta)`` to first order;
  - right / body increment: ``R = R0 exp(phi)`` gives ``skew(Omega) = R^T Rdot`` with
    ``Omega = T(phi)^T phidot = T(-phi) phidot``.

* ``d_*`` functions return exact Jacobians. ``d_f(theta, v)`` has shape ``(..., 3, 3)`` and
  entry ``[..., i, j] = d(f(theta) v)_i / d theta_j`` for a fixed ``v``.

Numerics
--------
The scalar coefficients are even functions of ``a``, so they are evaluated as functions of
``x = a**2``: a Taylor series (``N_TERMS`` terms) for ``a < 2`` and a closed form above. The
switch is at ``a = 2`` rather than a tiny angle because the closed forms of ``(a - sin a)/a**3``,
``(1 - (a/2) cot(a/2))/a**2`` and their derivatives cancel catastrophically. For example,
d/dx of the first has a relative error of about ``1e-16/x**2`` (``3e-7`` at ``a = 1e-4``;
``2e-14`` still at ``a = 1`` for the tangent-inverse derivative). On ``[0, 2]`` the series is exact to rounding, and above it the
closed forms lose at most about one digit. Values and derivatives are therefore accurate to a few
ulps everywhere, including ``theta = 0``, and continuous across the switch to rounding.
``exp`` is valid for any angle. ``tangent_inv`` and its derivatives are singular at
``a = 2*pi`` and meant for ``a < 2*pi``.

Modules: the coefficient tables and functions are :mod:`flexmb.rotations.coeffs` (compiled pass:
:mod:`flexmb.rotations.kernels`); the user-facing :func:`orientation` and :func:`as_matrix` are
:mod:`flexmb.rotations.orientation`. The package :mod:`flexmb.rotations` re-exports the public names of all three.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from flexmb.rotations.coeffs import N_TERMS, coefficients

__all__ = [
    "skew",
    "cross",
    "axial",
    "exp",
    "log",
    "tangent",
    "tangent_inv",
    "d_tangent",
    "d_tangent_T",
    "d_tangent_inv",
    "d_tangent_inv_T",
    "d_exp_apply",
    "d_exp_T_apply",
    "d_axial_left",
    "d_axial_right",
    "d_axial_rel",
    "d_log_rel",
    "matrix_to_quat",
]

# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _vec(v: ArrayLike, name: str) -> NDArray:
    v = np.asarray(v, dtype=float)
    if v.ndim < 1 or v.shape[-1] != 3:
        raise ValueError(f"`{name}` must have shape (..., 3), got {v.shape}.")
    return v


def _mat(m: ArrayLike, name: str) -> NDArray:
    m = np.asarray(m, dtype=float)
    if m.ndim < 2 or m.shape[-2:] != (3, 3):
        raise ValueError(f"`{name}` must have shape (..., 3, 3), got {m.shape}.")
    return m


def _sq(theta: NDArray) -> NDArray:
    return np.einsum("...i,...i->...", theta, theta)


_I3 = np.eye(3)
_I3.flags.writeable = False


def _outer(u: NDArray, w: NDArray) -> NDArray:
    return u[..., :, None] * w[..., None, :]


def _quadratic(c0: NDArray, c1: NDArray, c2: NDArray, theta: NDArray) -> NDArray:
    """``c0 I + c1 skew(theta) + c2 theta theta^T``, shape (..., 3, 3)."""
    c0, c1, c2 = (np.asarray(c)[..., None, None] for c in (c0, c1, c2))
    return c0 * _I3 + c1 * skew(theta) + c2 * _outer(theta, theta)


def _d_quadratic(theta: NDArray, v: NDArray, c1, c2, c1_x, c2_x) -> NDArray:
    """Jacobian ``d(M(theta) v)/d theta`` of ``M = I + c1(x) skew(theta) + c2(x) skew(theta)^2``.

    With ``theta x (theta x v) = theta (theta.v) - v x``::

        d(Mv) = -c1 skew(v) + c2 [(theta.v) I + theta v^T - 2 v theta^T]
                + 2 [c1_x theta x v + c2_x theta x (theta x v)] theta^T
    """
    theta, v = np.broadcast_arrays(theta, v)
    tv = np.einsum("...i,...i->...", theta, v)[..., None, None]
    txv = cross(theta, v)
    ttv = cross(theta, txv)
    c1, c2, c1_x, c2_x = (np.asarray(c)[..., None, None] for c in (c1, c2, c1_x, c2_x))
    return (-c1 * skew(v)
            + c2 * (tv * _I3 + _outer(theta, v) - 2.0 * _outer(v, theta))
            + 2.0 * _outer(c1_x[..., 0] * txv + c2_x[..., 0] * ttv, theta))


# ----------------------------------------------------------------------------------------------
# basic maps
# ----------------------------------------------------------------------------------------------
def skew(v: ArrayLike) -> NDArray:
    """Skew-symmetric cross-product matrix.

    Parameters
    ----------
    v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``skew(v) @ b == np.cross(v, b)``.
    """
    v = _vec(v, "v")
    out = np.zeros(v.shape + (3,), dtype=v.dtype)
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def cross(a: NDArray, b: NDArray) -> NDArray:
    """``np.cross(a, b)`` over the last axis, broadcast; faster than numpy's for small batches."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape)
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def axial(A: ArrayLike) -> NDArray:
    """Axial vector of the antisymmetric part, ``vee((A - A^T)/2)``.

    Parameters
    ----------
    A : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 3)
        ``axial(skew(v)) == v``.
    """
    A = _mat(A, "A")
    out = np.empty(A.shape[:-1], dtype=A.dtype)
    out[..., 0] = A[..., 2, 1] - A[..., 1, 2]
    out[..., 1] = A[..., 0, 2] - A[..., 2, 0]
    out[..., 2] = A[..., 1, 0] - A[..., 0, 1]
    return 0.5 * out


def exp(theta: ArrayLike) -> NDArray:
    """Rotation matrix of a rotation vector (Rodrigues formula), valid for any angle.

    Parameters
    ----------
    theta : array_like, shape (..., 3)
        Rotation vector (axis times angle in radians).

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``I + sin(a)/a skew(theta) + (1 - cos a)/a**2 skew(theta)**2``, ``a = |theta|``.
    """
    theta = _vec(theta, "theta")
    x = _sq(theta)
    alpha, beta = coefficients(x, ("alpha", "beta"))
    return _quadratic(1.0 - beta * x, alpha, beta, theta)


def log(R: ArrayLike) -> NDArray:
    """Rotation vector of a rotation matrix, the inverse of `exp` for angles in ``[0, pi]``.

    Delegates to `scipy.spatial.transform.Rotation` (quaternion route), which is accurate near
    the identity and near a half turn.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices. Slightly non-orthonormal input is projected onto SO(3) by scipy.

    Returns
    -------
    ndarray, shape (..., 3)
        ``theta`` with ``|theta| <= pi`` and ``exp(theta) == R``. At exactly ``|theta| = pi``
        the sign of ``theta`` is arbitrary.
    """
    R = _mat(R, "R")
    if R.size == 0:
        return np.zeros(R.shape[:-1])
    return Rotation.from_matrix(R).as_rotvec()


# ----------------------------------------------------------------------------------------------
# tangent operators
# ----------------------------------------------------------------------------------------------
def tangent(theta: ArrayLike) -> NDArray:
    """Tangent operator ``T(theta)`` of the rotation vector (left Jacobian of `exp`).

    ``T = I + (1 - cos a)/a**2 skew(theta) + (a - sin a)/a**3 skew(theta)**2``, so that
    ``d/de exp(theta + e d)|_0 = skew(T d) exp(theta)`` and ``T(theta) theta = theta``.
    ``T(theta)^T = T(-theta)`` is the right Jacobian.

    Parameters
    ----------
    theta : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    theta = _vec(theta, "theta")
    x = _sq(theta)
    alpha, beta, gamma = coefficients(x, ("alpha", "beta", "gamma"))
    return _quadratic(alpha, beta, gamma, theta)  # 1 - gamma x == alpha


def tangent_inv(theta: ArrayLike) -> NDArray:
    """Inverse tangent operator ``T(theta)^-1``, for ``|theta| < 2 pi``.

    ``T^-1 = I - skew(theta)/2 + (1 - (a/2) cot(a/2))/a**2 skew(theta)**2``.

    Parameters
    ----------
    theta : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Singular (``inf``/``nan``) at ``|theta| = 2 pi``.
    """
    theta = _vec(theta, "theta")
    x = _sq(theta)
    (delta,) = coefficients(x, ("delta",))
    return _quadratic(1.0 - delta * x, -0.5 * np.ones_like(x), delta, theta)


def _d_tangent(theta, v, sign: float) -> NDArray:
    theta = _vec(theta, "theta")
    v = _vec(v, "v")
    beta, gamma, beta_x, gamma_x = coefficients(_sq(theta), ("beta", "gamma", "beta_x", "gamma_x"))
    return _d_quadratic(theta, v, sign * beta, gamma, sign * beta_x, gamma_x)


def _d_tangent_inv(theta, v, sign: float) -> NDArray:
    theta = _vec(theta, "theta")
    v = _vec(v, "v")
    delta, delta_x = coefficients(_sq(theta), ("delta", "delta_x"))
    half = np.full_like(delta, -0.5 * sign)
    return _d_quadratic(theta, v, half, delta, np.zeros_like(delta), delta_x)


def d_tangent(theta: ArrayLike, v: ArrayLike) -> NDArray:
    """Jacobian ``d(T(theta) v)/d theta`` for fixed ``v``.

    For example, ``d omega / d theta`` of ``omega = T(theta) thetadot``.

    Parameters
    ----------
    theta, v : array_like, shape (..., 3)
        Broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``[..., i, j] = d(T v)_i / d theta_j``.
    """
    return _d_tangent(theta, v, 1.0)


def d_tangent_T(theta: ArrayLike, v: ArrayLike) -> NDArray:
    """Jacobian ``d(T(theta)^T v)/d theta`` for fixed ``v`` (right / body-frame form).

    For example, ``d Omega / d phi`` of ``Omega = T(phi)^T phidot``.

    Parameters
    ----------
    theta, v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _d_tangent(theta, v, -1.0)


def d_tangent_inv(theta: ArrayLike, v: ArrayLike) -> NDArray:
    """Jacobian ``d(T(theta)^-1 v)/d theta`` for fixed ``v``, for ``|theta| < 2 pi``.

    For example, ``d thetadot / d theta`` of ``thetadot = T(theta)^-1 omega``.

    Parameters
    ----------
    theta, v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _d_tangent_inv(theta, v, 1.0)


def d_tangent_inv_T(theta: ArrayLike, v: ArrayLike) -> NDArray:
    """Jacobian ``d(T(theta)^-T v)/d theta`` for fixed ``v`` (right form), for ``|theta| < 2 pi``.

    For example, ``d phidot / d phi`` of ``phidot = T(phi)^-T Omega``.

    Parameters
    ----------
    theta, v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _d_tangent_inv(theta, v, -1.0)


def d_exp_apply(theta: ArrayLike, c: ArrayLike) -> NDArray:
    """Jacobian ``d(exp(theta) c)/d theta = -skew(exp(theta) c) T(theta)`` for fixed ``c``.

    The Jacobian does not depend on how the rotation is composed. ``-exp(theta) skew(c) T(theta)^T``
    is the same matrix.

    Parameters
    ----------
    theta, c : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    theta = _vec(theta, "theta")
    c = _vec(c, "c")
    Rc = np.einsum("...ij,...j->...i", exp(theta), c)
    return -skew(Rc) @ tangent(theta)


def d_exp_T_apply(theta: ArrayLike, c: ArrayLike) -> NDArray:
    """Jacobian ``d(exp(theta)^T c)/d theta = exp(theta)^T skew(c) T(theta)`` for fixed ``c``.

    Parameters
    ----------
    theta, c : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    theta = _vec(theta, "theta")
    c = _vec(c, "c")
    R = exp(theta)
    return np.swapaxes(R, -1, -2) @ skew(c) @ tangent(theta)


# ----------------------------------------------------------------------------------------------
# rotation-mismatch residuals
# ----------------------------------------------------------------------------------------------
def d_axial_left(E: ArrayLike) -> NDArray:
    """Linearisation of ``axial(E)`` under a left perturbation ``E <- (I + skew(e)) E``.

    Parameters
    ----------
    E : array_like, shape (..., 3, 3)
        Any 3x3 matrix. It does not have to be a rotation.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``D = (tr(E) I - E)/2`` with ``d axial(E) = D e``.
    """
    E = _mat(E, "E")
    tr = np.trace(E, axis1=-2, axis2=-1)[..., None, None]
    return 0.5 * (tr * np.eye(3) - E)


def d_axial_right(E: ArrayLike) -> NDArray:
    """Linearisation of ``axial(E)`` under a right perturbation ``E <- E (I + skew(e))``.

    Parameters
    ----------
    E : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
        ``D = (tr(E) I - E^T)/2`` with ``d axial(E) = D e``.
    """
    E = _mat(E, "E")
    return d_axial_left(np.swapaxes(E, -1, -2))


def _increment(increment: str) -> str:
    if increment not in ("left", "right"):
        raise ValueError(f"`increment` must be 'left' or 'right', got {increment!r}.")
    return increment


def d_axial_rel(A: ArrayLike, B: ArrayLike, increment: str = "left") -> tuple[NDArray, NDArray]:
    """Jacobians of the mismatch ``r = axial(A^T B)`` with respect to increments of ``A`` and ``B``.

    Parameters
    ----------
    A, B : array_like, shape (..., 3, 3)
        Rotation matrices, broadcast against each other.
    increment : {"left", "right"}
        ``"left"`` (spatial): ``A <- exp(da) A``, ``B <- exp(db) B``.
        ``"right"`` (body): ``A <- A exp(da)``, ``B <- B exp(db)``.

    Returns
    -------
    J_a, J_b : ndarray, shape (..., 3, 3)
        ``dr = J_a da + J_b db``. With ``E = A^T B`` and ``D = (tr(E) I - E)/2``, this is
        ``J_b = D A^T = -J_a`` for left increments, and ``J_a = -D``,
        ``J_b = (tr(E) I - E^T)/2`` for right increments.
    """
    A = _mat(A, "A")
    B = _mat(B, "B")
    At = np.swapaxes(A, -1, -2)
    E = At @ B
    if _increment(increment) == "left":
        J_b = d_axial_left(E) @ At
        return -J_b, J_b
    return -d_axial_left(E), d_axial_right(E)


def d_log_rel(A: ArrayLike, B: ArrayLike, increment: str = "left") -> tuple[NDArray, NDArray]:
    """Jacobians of the mismatch ``r = log(A^T B)`` with respect to increments of ``A`` and ``B``.

    Parameters
    ----------
    A, B : array_like, shape (..., 3, 3)
        Rotation matrices whose relative angle is below pi.
    increment : {"left", "right"}
        As in `d_axial_rel`.

    Returns
    -------
    J_a, J_b : ndarray, shape (..., 3, 3)
        ``dr = J_a da + J_b db``. With ``Ti = tangent_inv(r)``, this is ``J_b = Ti A^T = -J_a``
        for left increments, and ``J_a = -Ti``, ``J_b = Ti^T`` for right increments.
    """
    A = _mat(A, "A")
    B = _mat(B, "B")
    At = np.swapaxes(A, -1, -2)
    Ti = tangent_inv(log(At @ B))
    if _increment(increment) == "left":
        J_b = Ti @ At
        return -J_b, J_b
    return -Ti, np.swapaxes(Ti, -1, -2)


# ----------------------------------------------------------------------------------------------
# conversions
# ----------------------------------------------------------------------------------------------
def matrix_to_quat(R: ArrayLike) -> NDArray:
    """Unit quaternions of rotation matrices, scalar first, canonical sign ``w >= 0``.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices. Slightly non-orthonormal input is projected onto SO(3) by scipy.

    Returns
    -------
    ndarray, shape (..., 4)
        ``(w, x, y, z)`` with ``w >= 0``. If ``w == 0``, the first nonzero component is positive.
    """
    R = _mat(R, "R")
    if R.size == 0:
        return np.zeros(R.shape[:-2] + (4,))
    return Rotation.from_matrix(R).as_quat(canonical=True, scalar_first=True)
