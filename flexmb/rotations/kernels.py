"""Compiled (numba) evaluation of the scalar rotation coefficient functions of
:mod:`flexmb.rotations` for several names in one pass.

The NumPy path (``rotation_coeffs.coefficients_series`` / ``coefficients_closed``) makes one Horner loop of small
NumPy calls per name; on the tiny batches of one time-element evaluation (a few points) that
Python overhead dominated the flexible-body evaluation (~110 calls per evaluation of the X3
slider-crank).  This kernel evaluates every requested name at every ``x`` in one call: the same
power-series tables (all ``N_TERMS`` terms, as :mod:`flexmb.dynamics.kernels` does) below
``x = X_SERIES`` and the same closed forms above, so it agrees with the NumPy functions to
round-off (``tests/test_rotations.py`` checks both against exact rational series).

Imported lazily by :func:`flexmb.rotations.coeffs.coefficients`; compiled with ``cache=True``, ``fastmath``
off (the conventions of :mod:`flexmb.dynamics.kernels`).
"""
from __future__ import annotations

import logging

import numpy as np
from numba import njit

from flexmb.numba_cache import refresh as _refresh_cache

log = logging.getLogger(__name__)
_refresh_cache()  # stale cached kernels of changed callees removed first (flexmb/numba_cache.py)

#: order of the rows of the series table and of the name codes
NAMES = ("alpha", "beta", "gamma", "beta_x", "gamma_x", "delta", "delta_x")
CODE = {name: k for k, name in enumerate(NAMES)}


def _jit(fn):
    try:
        return njit(cache=True, fastmath=False, nogil=True)(fn)
    except RuntimeError as exc:  # numba: no cache locator available
        log.info("numba cannot cache %s (%s); set NUMBA_CACHE_DIR to a writable directory", fn.__name__, exc)
        return njit(cache=False, fastmath=False, nogil=True)(fn)


@_jit
def coeffs_kernel(x, codes, table, x_series):
    """Coefficient functions ``codes`` (k,) (rows of ``table`` (7, n_terms), order :data:`NAMES`)
    at ``x`` (n,) = ``|theta|^2``; returns (k, n).  Series below ``x_series``, closed form above."""
    k = codes.size
    n = x.size
    nt = table.shape[1]
    out = np.empty((k, n))
    vals = np.empty(7)
    for i in range(n):
        xi = x[i]
        if xi < x_series:
            for j in range(k):
                c = codes[j]
                acc = table[c, nt - 1]
                for t in range(nt - 2, -1, -1):
                    acc = acc * xi + table[c, t]
                out[j, i] = acc
        else:
            a = np.sqrt(xi)
            s = np.sin(a)
            sh = np.sin(0.5 * a)
            alpha = s / a
            beta = 2.0 * (sh / a) ** 2
            gamma = (1.0 - alpha) / xi
            vals[0] = alpha
            vals[1] = beta
            vals[2] = gamma
            vals[3] = (alpha - 2.0 * beta) / (2.0 * xi)
            vals[4] = (beta - 3.0 * gamma) / (2.0 * xi)
            kappa = 0.5 * a * np.cos(0.5 * a) / sh
            delta = (1.0 - kappa) / xi
            vals[5] = delta
            kappa_x = kappa / (2.0 * xi) - 1.0 / (8.0 * sh * sh)
            vals[6] = -(kappa_x + delta) / xi
            for j in range(k):
                out[j, i] = vals[codes[j]]
    return out
