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
``x = a**2``: a Taylor series (``_N_TERMS`` terms) for ``a < 2`` and a closed form above. The
switch is at ``a = 2`` rather than a tiny angle because the closed forms of ``(a - sin a)/a**3``,
``(1 - (a/2) cot(a/2))/a**2`` and their derivatives cancel catastrophically. For example,
d/dx of the first has a relative error of about ``1e-16/x**2`` (``3e-7`` at ``a = 1e-4``;
``2e-14`` still at ``a = 1`` for the tangent-inverse derivative). On ``[0, 2]`` the series is exact to rounding, and above it the
closed forms lose at most about one digit. Values and derivatives are therefore accurate to a few
ulps everywhere, including ``theta = 0``, and continuous across the switch to rounding.
``exp`` is valid for any angle. ``tangent_inv`` and its derivatives are singular at
``a = 2*pi`` and meant for ``a < 2*pi``.
"""
from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import factorial

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from flexmb.errors import ModelError

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
    "orientation",
    "as_matrix",
    "matrix_to_quat",
    "ORTHONORMAL_TOL",
]

#: Tolerance of ``orientation``/``as_matrix`` on ``max|R^T R - I|`` for a user-given matrix.
ORTHONORMAL_TOL = 1e-9

# Series below x = a**2 < _X_SERIES (a < 2). The truncation error is about x**_N_TERMS / (2 _N_TERMS)!,
# and (x / 4 pi**2)**_N_TERMS for the tangent-inverse coefficient, so below 1e-20 at x = 4. The
# closed forms are accurate to <= 1e-14 relative above x = 4 (checked against exact rational series
# in tests/test_rotations.py).
_X_SERIES = 4.0
_N_TERMS = 20


# ----------------------------------------------------------------------------------------------
# scalar coefficients as power series in x = |theta|**2 and closed forms
# ----------------------------------------------------------------------------------------------
def _bernoulli(n: int) -> list[Fraction]:
    """Bernoulli numbers B_0..B_n (B_1 = -1/2), exact."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(Fraction(factorial(m + 1), factorial(k) * factorial(m + 1 - k)) * b[k]
                      for k in range(m)) / (m + 1))
    return b


def _series_tables(n: int) -> dict[str, NDArray]:
    """Ascending power-series coefficients (in x) of every scalar coefficient function."""
    k = np.arange(n)
    sign = (-1.0) ** k
    fact = np.array([float(factorial(j)) for j in range(2 * n + 6)])
    bern = _bernoulli(2 * n + 4)
    # delta(x) = (1 - (a/2) cot(a/2)) / x = sum_{k>=0} (-1)^k B_{2k+2} / (2k+2)! x^k
    delta = np.array([float((-1) ** j * bern[2 * j + 2] / factorial(2 * j + 2)) for j in range(n + 1)])
    return {
        "alpha": sign / fact[2 * k + 1],           # sin a / a
        "beta": sign / fact[2 * k + 2],            # (1 - cos a) / a^2
        "gamma": sign / fact[2 * k + 3],           # (a - sin a) / a^3
        "beta_x": -(k + 1) * sign / fact[2 * k + 4],   # d beta / dx
        "gamma_x": -(k + 1) * sign / fact[2 * k + 5],  # d gamma / dx
        "delta": delta[:n],
        "delta_x": (k + 1) * delta[1:],            # d delta / dx
    }


_SERIES = _series_tables(_N_TERMS)


def _horner(c: NDArray, x: NDArray) -> NDArray:
    # drop the terms that are below rounding for the largest x of the batch (speed only)
    xm = float(np.max(x)) if x.size else 0.0
    if xm <= 0.0:
        return np.full_like(x, c[0])
    mag = np.abs(c) * xm ** np.arange(c.size)
    keep = np.nonzero(mag > 1e-18 * np.abs(c[0]))[0]
    c = c[: keep[-1] + 1] if keep.size else c[:1]
    out = np.full_like(x, c[-1])
    for ck in c[-2::-1]:
        out = out * x + ck
    return out


def _coeffs_series(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """Series values of the coefficient functions ``names`` at ``x = a**2`` (accurate for x <= 4)."""
    return [_horner(_SERIES[name], x) for name in names]


def _coeffs_closed(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """Closed-form values of the coefficient functions ``names`` at ``x = a**2 > 0``."""
    a = np.sqrt(x)
    s = np.sin(a)
    sh = np.sin(0.5 * a)
    out: dict[str, NDArray] = {}
    out["alpha"] = s / a
    out["beta"] = 2.0 * (sh / a) ** 2           # (1 - cos a)/a^2 without cancellation
    out["gamma"] = (1.0 - out["alpha"]) / x
    out["beta_x"] = (out["alpha"] - 2.0 * out["beta"]) / (2.0 * x)
    out["gamma_x"] = (out["beta"] - 3.0 * out["gamma"]) / (2.0 * x)
    if "delta" in names or "delta_x" in names:
        kappa = 0.5 * a * np.cos(0.5 * a) / sh   # (a/2) cot(a/2)
        out["delta"] = (1.0 - kappa) / x
        kappa_x = kappa / (2.0 * x) - 1.0 / (8.0 * sh**2)
        out["delta_x"] = -(kappa_x + out["delta"]) / x
    return [out[name] for name in names]


_KERNEL: list = []  # [kernel, table, {names: codes}] once compiled (lazy: numba only when used)


def _coeffs(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """Coefficient functions at ``x = |theta|**2``: series below ``_X_SERIES``, closed form above.

    All ``names`` in one compiled pass (:mod:`flexmb.rotation_kernels`); the NumPy path
    (:func:`_coeffs_numpy`) is the reference of the tests."""
    if not _KERNEL:
        from flexmb import rotation_kernels as rk

        _KERNEL[:] = [rk.coeffs_kernel, np.ascontiguousarray([_SERIES[k] for k in rk.NAMES]), {}, rk.CODE]
    kernel, table, codes, code = _KERNEL
    c = codes.get(names)
    if c is None:
        c = codes[names] = np.array([code[k] for k in names], dtype=np.int64)
    x = np.asarray(x, dtype=float)
    out = kernel(np.ascontiguousarray(x).reshape(-1), c, table, _X_SERIES)
    return [o.reshape(x.shape) for o in out]


def _coeffs_numpy(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """NumPy reference of :func:`_coeffs` (one Horner loop of NumPy calls per name)."""
    small = x < _X_SERIES
    if np.all(small):
        return _coeffs_series(x, names)
    if not np.any(small):
        return _coeffs_closed(x, names)
    # both branches on safe arguments, so neither can warn about 0/0 or overflow
    ser = _coeffs_series(np.where(small, x, 0.0), names)
    clo = _coeffs_closed(np.where(small, _X_SERIES, x), names)
    return [np.where(small, s, c) for s, c in zip(ser, clo)]


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
    alpha, beta = _coeffs(x, ("alpha", "beta"))
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
    alpha, beta, gamma = _coeffs(x, ("alpha", "beta", "gamma"))
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
    (delta,) = _coeffs(x, ("delta",))
    return _quadratic(1.0 - delta * x, -0.5 * np.ones_like(x), delta, theta)


def _d_tangent(theta, v, sign: float) -> NDArray:
    theta = _vec(theta, "theta")
    v = _vec(v, "v")
    beta, gamma, beta_x, gamma_x = _coeffs(_sq(theta), ("beta", "gamma", "beta_x", "gamma_x"))
    return _d_quadratic(theta, v, sign * beta, gamma, sign * beta_x, gamma_x)


def _d_tangent_inv(theta, v, sign: float) -> NDArray:
    theta = _vec(theta, "theta")
    v = _vec(v, "v")
    delta, delta_x = _coeffs(_sq(theta), ("delta", "delta_x"))
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
# user input conversions (delegated to scipy)
# ----------------------------------------------------------------------------------------------
def _finite(value: ArrayLike, name: str, last: int | None) -> NDArray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"`{name}` must be numeric, got {value!r}.") from err
    if last is not None and (arr.ndim < 1 or arr.shape[-1] != last):
        raise ModelError(f"`{name}` must have shape (..., {last}), got shape {arr.shape}: {value!r}.")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"`{name}` must be finite, got {value!r}.")
    return arr


def _check_matrix(matrix: ArrayLike) -> NDArray:
    R = _finite(matrix, "matrix", None)
    if R.ndim < 2 or R.shape[-2:] != (3, 3):
        raise ModelError(f"`matrix` must have shape (3, 3) or (..., 3, 3), got shape {R.shape}.")
    err = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)), initial=0.0)
    if err > ORTHONORMAL_TOL:
        raise ModelError(
            f"`matrix` is not orthonormal: max|R^T R - I| = {err:.3g} > {ORTHONORMAL_TOL:g} "
            f"for {matrix!r}. Pass an exact rotation matrix (re-orthonormalise it, e.g. with "
            "scipy.spatial.transform.Rotation.from_matrix(R).as_matrix()), or give the "
            "orientation as quat=, rotvec=, axis=/angle= or euler=.")
    det = np.linalg.det(R)
    if np.any(det < 0):
        raise ModelError(
            f"`matrix` has determinant {np.min(det):.6g}; it is a reflection, not a rotation: "
            f"{matrix!r}. Flip the sign of one axis (column) to make a right-handed frame.")
    return R.copy()


def orientation(matrix: ArrayLike | None = None, *, quat: ArrayLike | None = None,
                rotvec: ArrayLike | None = None, axis: ArrayLike | None = None,
                angle: ArrayLike | None = None, euler: ArrayLike | None = None, seq: str = "ZXZ",
                bryant: ArrayLike | None = None, degrees: bool = False) -> NDArray:
    """Rotation matrix from exactly one user-facing description of an orientation.

    Everything except the validation of ``matrix`` is delegated to
    `scipy.spatial.transform.Rotation`. Each argument may carry leading batch axes.

    Parameters
    ----------
    matrix : array_like, shape (..., 3, 3), optional
        Rotation matrix. It must be orthonormal to within `ORTHONORMAL_TOL` with ``det = +1``.
        It is returned unchanged (as a float copy).
    quat : array_like, shape (..., 4), optional
        Quaternion, **scalar first** ``(w, x, y, z)``. It is normalised; it must be nonzero.
    rotvec : array_like, shape (..., 3), optional
        Rotation vector (axis times angle), so ``orientation(rotvec=t) == exp(t)``.
    axis : array_like, shape (..., 3), optional
        Rotation axis (nonzero, normalised here), given together with ``angle``.
    angle : array_like, shape (...), optional
        Rotation angle about ``axis`` (right-hand rule).
    euler : array_like, shape (..., 3), optional
        Euler angles for the sequence ``seq``.
    seq : str
        scipy axis sequence for ``euler``. Uppercase means intrinsic (rotating axes) and
        lowercase means extrinsic (fixed axes). The default ``"ZXZ"`` gives the classical
        ``R = Rz(psi) Rx(theta) Rz(phi)``.
    bryant : array_like, shape (..., 3), optional
        Bryant (Cardan, Tait-Bryan) angles: intrinsic x-y'-z'', ``R = Rx(a) Ry(b) Rz(c)``
        (scipy ``"XYZ"``).
    degrees : bool
        Angles in ``angle``, ``euler``, ``bryant`` and ``rotvec`` are in degrees.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Rotation matrix mapping body-frame components to inertial components.

    Raises
    ------
    ModelError
        A subclass of ``ValueError``. It is raised for none or several descriptions, bad shapes,
        non-finite values, a non-orthonormal or reflecting matrix, a zero axis or quaternion, or an
        invalid ``seq``.
    """
    given = {name: val for name, val in (("matrix", matrix), ("quat", quat), ("rotvec", rotvec),
                                          ("axis", axis), ("angle", angle), ("euler", euler),
                                          ("bryant", bryant)) if val is not None}
    if ("axis" in given) != ("angle" in given):
        raise ModelError("`axis` and `angle` must be given together, e.g. "
                         "orientation(axis=(0, 0, 1), angle=0.5).")
    if len(set(given) - {"angle"}) != 1:
        raise ModelError(
            f"orientation needs exactly one of matrix=, quat=, rotvec=, axis= with angle=, "
            f"euler= or bryant=; got {sorted(given) or 'none'}.")
    if "matrix" in given:
        return _check_matrix(matrix)
    if "quat" in given:
        q = _finite(quat, "quat", 4)
        norm = np.linalg.norm(q, axis=-1)
        if np.any(norm < 1e-12):
            raise ModelError(f"`quat` must be nonzero (scalar-first w, x, y, z), got {quat!r}.")
        return Rotation.from_quat(q, scalar_first=True).as_matrix()
    if "rotvec" in given:
        return Rotation.from_rotvec(_finite(rotvec, "rotvec", 3), degrees=degrees).as_matrix()
    if "axis" in given:
        ax = _finite(axis, "axis", 3)
        ang = _finite(angle, "angle", None)
        norm = np.linalg.norm(ax, axis=-1)
        if np.any(norm < 1e-12):
            raise ModelError(f"`axis` must be a nonzero vector, got {axis!r}.")
        rv = ax / norm[..., None] * ang[..., None]
        return Rotation.from_rotvec(rv, degrees=degrees).as_matrix()
    if "bryant" in given:
        euler, seq = bryant, "XYZ"
    name = "bryant" if "bryant" in given else "euler"
    ang = _finite(euler, name, 3)
    if not (isinstance(seq, str) and len(seq) == 3):
        raise ModelError(f"`seq` must be a 3-letter axis sequence such as 'ZXZ' (intrinsic) or "
                         f"'zxz' (extrinsic), got {seq!r}.")
    try:
        return Rotation.from_euler(seq, ang, degrees=degrees).as_matrix()
    except ValueError as err:
        raise ModelError(f"invalid Euler sequence seq={seq!r}: {err} Use three letters from x, y, "
                         "z, all uppercase (intrinsic) or all lowercase (extrinsic), "
                         "with no two consecutive axes equal.") from err


_SPEC_FORMS = {"matrix": 1, "quat": 1, "rotvec": 1, "axis_angle": 2, "euler": 2, "bryant": 1}


def as_matrix(spec) -> NDArray:
    """Rotation matrix from a compact orientation specification (for model input).

    Parameters
    ----------
    spec : array_like or Mapping or tuple or scipy Rotation
        One of:

        * a rotation matrix, shape (3, 3) or (..., 3, 3), validated as in `orientation`;
        * a mapping of `orientation` keywords, e.g. ``{"euler": (0, 90, 0), "seq": "ZXZ",
          "degrees": True}``;
        * ``("matrix", R)``, ``("quat", (w, x, y, z))``, ``("rotvec", theta)``,
          ``("axis_angle", axis, angle)``, ``("euler", seq, angles)`` or ``("bryant", angles)``,
          with angles in radians (use the mapping form for degrees);
        * a `scipy.spatial.transform.Rotation`.

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Raises
    ------
    ModelError
        For an unrecognised specification or invalid values (see `orientation`).
    """
    if isinstance(spec, Rotation):
        return spec.as_matrix()
    if isinstance(spec, Mapping):
        try:
            return orientation(**spec)
        except TypeError as err:
            raise ModelError(f"invalid orientation keywords in {spec!r}: {err}") from err
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind, args = spec[0].lower(), spec[1:]
        if kind not in _SPEC_FORMS or len(args) != _SPEC_FORMS[kind]:
            raise ModelError(
                f"unrecognised orientation {spec!r}. Use ('matrix', R), ('quat', (w, x, y, z)), "
                "('rotvec', theta), ('axis_angle', axis, angle), ('euler', seq, angles) or "
                "('bryant', angles).")
        if kind == "axis_angle":
            return orientation(axis=args[0], angle=args[1])
        if kind == "euler":
            return orientation(euler=args[1], seq=args[0])
        return orientation(**{kind: args[0]})
    return orientation(matrix=spec)


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
