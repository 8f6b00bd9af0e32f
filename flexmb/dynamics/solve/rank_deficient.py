"""Newton on (nearly) rank-deficient iteration matrices, used by
:func:`flexmb.dynamics.solve.newton.newton_solve`: the near-null directions of a stalled iterate are reset to
the predictor's (:func:`near_null_basis`, :func:`restore_null_components`), and an exactly singular
matrix is solved by damped (Levenberg-Marquardt) least squares in the scaled metric
(:func:`least_squares_solve`).

Where this happens: at a change point of a closed loop (the cranks of a parallelogram four-bar
aligned with the coupler) the joints' constraint Jacobian loses rank, so the Newton matrix of the
element has one null direction per dependence (a self-stress: multipliers in equilibrium with no
load).  Along it the multipliers are undetermined (round-off moves them by ``eps / sigma_min``)
and the position equations of the dependent direction are consistent only to the discretization
error, which a plain Newton step turns into multipliers of ``1 / sigma_min`` or into divergence.

Near-null reset.  At a stalled iterate (residual at round-off) the directions in which the scaled
matrix ``Js`` is singular to ``null_tol`` are found by two steps of block inverse iteration with the
factorization in hand (12 fixed pseudo-random vectors: ~24 solves, no new factorization); moving along
them changes the residual by ``sigma`` x the move, so the iterate's components there are reset to the
predictor's, and the residual is evaluated again to confirm it.

Least squares.  The correction minimizes, over ``y = Dc^-1 dU`` (unknowns in units of their magnitudes
``s = scale + |U|``),

    || Dr (F + J dU) ||^2 + mu^2 || y ||^2,        Dr = 1 / (|J| s)   (row i: the magnitude of its terms)

(``s = scale + |U0|``, fixed for the solve, so that the total change from ``U0`` is the least-norm
one in that metric along the null directions: every correction lies in the range of ``Js^T``)

so the dependent directions (singular values of ``Js = Dr J Dc`` below ``mu``) are left where
they are (minimum-norm change) and the others get the Newton correction.  It is computed from the
sparse augmented system (no normal equations, no fill of ``J^T J``), in the form whose condition
number is ``|Js| / mu`` (not its square: round-off along the null directions stays ~eps / mu)::

    [ mu I   Js    ] [ r / mu ]   [ -Dr F ]
    [ Js^T  -mu I  ] [   y    ] = [   0   ]

The iteration has converged when the scaled correction is below ``tol``; the iterate is then a
stationary point of the scaled residual, and it is accepted when that residual -- now only the
inconsistency of the dependent equations -- is below ``options.dependent_tol`` (a backward error:
the equations hold to that fraction of their terms' magnitudes).
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

log = logging.getLogger(__name__)


def row_scales(J, s: np.ndarray) -> np.ndarray:
    """``1 / sum_j |J_ij| s_j`` per row ``(n,)`` (1 for empty rows): the inverse magnitude of each
    equation's terms when every unknown moves by its magnitude ``s``."""
    A = abs(J) if sp.issparse(J) else np.abs(np.asarray(J))
    den = np.asarray(A @ s).reshape(-1)
    return 1.0 / np.where(den > 0, den, 1.0)


def damped_correction(F: np.ndarray, J, s: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
    """Levenberg-Marquardt correction ``dU`` ``(n,)`` in the scaled metric (module docstring) and
    the predicted scaled residual ``max |Dr (F + J dU)|`` after it."""
    n = F.size
    dr = row_scales(J, s)
    Js = sp.diags(dr) @ sp.csr_matrix(J) @ sp.diags(s)
    K = sp.bmat([[mu * sp.identity(n), Js], [Js.T, -mu * sp.identity(n)]], format="csc")
    rhs = np.concatenate([-dr * F, np.zeros(n)])
    x = spla.splu(K, permc_spec="COLAMD").solve(rhs)
    r, y = mu * x[:n], x[n:]
    return s * y, float(np.abs(r).max()) if n else 0.0


def least_squares_solve(evaluate: Callable, U0: np.ndarray, scale: np.ndarray, options, max_iter: int = 40):
    """Damped least-squares iterations from ``U0``; returns ``(converged, U, iterations, err, rho,
    message)`` with ``rho`` the scaled residual (backward error) of the returned iterate."""
    U = U0.copy()
    mu = options.lm_damping
    err = np.inf
    rho = np.inf
    prev_err = None
    s = scale + np.abs(U0)  # one metric for the whole solve: the change from U0 is least-norm in it
    for k in range(1, max_iter + 1):
        F, J = evaluate(U)
        if not np.all(np.isfinite(F)):
            return False, U, k, err, rho, "residual is not finite"
        rho = float(np.max(np.abs(F) * row_scales(J, s))) if F.size else 0.0
        try:
            dU, _ = damped_correction(F, J, s, mu)
        except RuntimeError as exc:
            return False, U, k, err, rho, f"least-squares solve failed ({exc})"
        err = float(np.max(np.abs(dU) / (scale + np.abs(U + dU)))) if dU.size else 0.0
        if err <= options.tol:
            if rho <= options.dependent_tol:
                return True, U + dU, k, err, rho, "converged in least squares"
            return False, U, k, err, rho, (f"least squares: stationary with residual {rho:.3g} "
                                           f"> dependent_tol {options.dependent_tol:.3g}")
        if prev_err is not None and err > options.divergence_rate * prev_err and k > 3:
            return False, U, k, err, rho, "least squares diverging"
        U = U + dU
        prev_err = err
    return False, U, max_iter, err, rho, f"least squares: no convergence in {max_iter} iterations"


def near_null_basis(solve: Callable, J, s: np.ndarray, tau: float, m: int = 12) -> np.ndarray:
    """Orthonormal basis ``(n, k)`` of the directions in which the scaled matrix ``Js = Dr J Dc``
    (:func:`row_scales`, ``Dc = diag(s)``) is singular to ``tau`` (relative to its O(1) entries):
    two steps of block inverse iteration with the existing factorization ``solve`` (``J^-1``) from
    ``m`` fixed pseudo-random vectors (reproducible: a resumed run repeats it bit for bit); the
    directions amplified by more than ``1 / tau`` are kept.  ``k = 0`` when none is."""
    n = s.size
    if not n:
        return np.zeros((0, 0))
    m = min(m, n)
    dr = row_scales(J, s)
    P = np.random.default_rng(12345).standard_normal((n, m))

    def apply(Y):  # Js^-1 Y, column by column
        return np.column_stack([solve(Y[:, i] / dr) / s for i in range(Y.shape[1])])

    Y = apply(P)
    Q, _ = np.linalg.qr(Y)
    Y2 = apply(Q)  # gains ~ 1 / sigma^2 ... 1 / sigma along the near-null directions
    W, g, _ = np.linalg.svd(Y2, full_matrices=False)
    # a direction with singular value sigma is amplified by ~1 / sigma per step; compare with the
    # gain of the first step's well-determined part (~1): keep gains above 1 / tau
    keep = g > 1.0 / tau
    return W[:, keep]


def restore_null_components(U: np.ndarray, U0: np.ndarray, s: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``U`` with its components along the scaled near-null directions ``Z`` (``(n, k)``, orthonormal in
    the unknowns scaled by ``s``) reset to those of ``U0``: the least-norm change from ``U0`` among the
    solutions that differ from ``U`` only along ``Z``."""
    if not Z.size:
        return U
    y = (U - U0) / s
    return U0 + s * (y - Z @ (Z.T @ y))
