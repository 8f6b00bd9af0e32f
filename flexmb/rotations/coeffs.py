"""The scalar coefficient functions of the SO(3) maps in :mod:`flexmb.rotations`, as functions of
``x = |theta|**2``: power-series tables (exact Bernoulli numbers), their Horner evaluation below
``X_SERIES``, the closed forms above it, and :func:`coefficients`, which evaluates both in one compiled
pass (:mod:`flexmb.rotations.kernels`) with :func:`coefficients_numpy` as the reference of the tests.

=========  ================================
name       function of a = sqrt(x)
=========  ================================
alpha      sin a / a
beta       (1 - cos a) / a**2
gamma      (a - sin a) / a**3
delta      (1 - (a/2) cot(a/2)) / a**2
*_x        d/dx of beta, gamma, delta
=========  ================================

See the "Numerics" section of :mod:`flexmb.rotations` for why the switch is at a = 2. Every name
is re-exported by :mod:`flexmb.rotations` (``rotations.coefficients`` etc. keep working).
"""
from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np
from numpy.typing import NDArray

# Series below x = a**2 < X_SERIES (a < 2). The truncation error is about x**N_TERMS / (2 N_TERMS)!,
# and (x / 4 pi**2)**N_TERMS for the tangent-inverse coefficient, so below 1e-20 at x = 4. The
# closed forms are accurate to <= 1e-14 relative above x = 4 (checked against exact rational series
# in tests/test_rotations.py).
X_SERIES = 4.0
N_TERMS = 20


def bernoulli(n: int) -> list[Fraction]:
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
    bern = bernoulli(2 * n + 4)
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


SERIES = _series_tables(N_TERMS)


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


def coefficients_series(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """Series values of the coefficient functions ``names`` at ``x = a**2`` (accurate for x <= 4)."""
    return [_horner(SERIES[name], x) for name in names]


def coefficients_closed(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
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


def coefficients(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """Coefficient functions at ``x = |theta|**2``: series below ``X_SERIES``, closed form above.

    All ``names`` in one compiled pass (:mod:`flexmb.rotations.kernels`); the NumPy path
    (:func:`coefficients_numpy`) is the reference of the tests."""
    if not _KERNEL:
        from flexmb.rotations import kernels as rk

        _KERNEL[:] = [rk.coeffs_kernel, np.ascontiguousarray([SERIES[k] for k in rk.NAMES]), {}, rk.CODE]
    kernel, table, codes, code = _KERNEL
    c = codes.get(names)
    if c is None:
        c = codes[names] = np.array([code[k] for k in names], dtype=np.int64)
    x = np.asarray(x, dtype=float)
    out = kernel(np.ascontiguousarray(x).reshape(-1), c, table, X_SERIES)
    return [o.reshape(x.shape) for o in out]


def coefficients_numpy(x: NDArray, names: tuple[str, ...]) -> list[NDArray]:
    """NumPy reference of :func:`coefficients` (one Horner loop of NumPy calls per name)."""
    small = x < X_SERIES
    if np.all(small):
        return coefficients_series(x, names)
    if not np.any(small):
        return coefficients_closed(x, names)
    # both branches on safe arguments, so neither can warn about 0/0 or overflow
    ser = coefficients_series(np.where(small, x, 0.0), names)
    clo = coefficients_closed(np.where(small, X_SERIES, x), names)
    return [np.where(small, s, c) for s, c in zip(ser, clo)]
