"""Newton-Raphson on the internal unknowns of one time element: small, swappable, with counters.

Convergence is judged on the increment scaled per unknown (``|dU_i| <= tol (scale_i + |U_i|)``),
and the contraction rate ``|dU_k| / |dU_{k-1}|`` is monitored to stop early on divergence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .linsolve import Factor, SingularMatrixError


@dataclass(frozen=True)
class NewtonOptions:
    """``tol``: scaled increment tolerance; ``max_iter``; ``divergence_rate``: stop when the
    contraction rate exceeds it after ``min_iter_divergence`` iterations; an increment that stops
    contracting below ``roundoff_factor * tol`` is accepted as converged to round-off."""

    tol: float = 1e-10
    max_iter: int = 25
    divergence_rate: float = 2.0
    min_iter_divergence: int = 3
    roundoff_factor: float = 100.0


@dataclass
class NewtonResult:
    converged: bool
    U: np.ndarray
    iterations: int
    rate: float
    n_residual: int
    n_jacobian: int
    n_factor: int
    error: float  # final scaled increment norm (max norm)
    worst: int = -1  # index of the largest scaled correction
    message: str = ""
    history: list = field(default_factory=list)


def newton_solve(evaluate: Callable, U0: np.ndarray, scale: np.ndarray, factor: Factor,
                 options: NewtonOptions = NewtonOptions()) -> NewtonResult:
    """Solve ``F(U) = 0`` with ``evaluate(U) -> (F, J)``.

    Parameters
    ----------
    evaluate : callable
        Returns the residual ``(n,)`` and the sparse Jacobian ``(n, n)``.
    U0 : ndarray, shape (n,)
        Initial guess (predictor).
    scale : ndarray, shape (n,)
        Absolute magnitude of each unknown (units of the unknown).
    factor : callable
        ``factor(J) -> solve`` (see :mod:`flexmb.linsolve`).
    """
    U = U0.copy()
    prev = None
    rate = 0.0
    n_res = n_jac = n_fac = 0
    history = []
    err = np.inf
    worst = -1
    for k in range(1, options.max_iter + 1):
        F, J = evaluate(U)
        n_res += 1
        n_jac += 1
        if not np.all(np.isfinite(F)):
            return NewtonResult(False, U, k, rate, n_res, n_jac, n_fac, np.inf, int(np.argmax(~np.isfinite(F))),
                                "residual is not finite", history)
        try:
            solve = factor(J)
        except SingularMatrixError as exc:
            return NewtonResult(False, U, k, rate, n_res, n_jac, n_fac, np.inf, -1, f"singular Newton matrix ({exc})", history)
        n_fac += 1
        dU = -solve(F)
        U = U + dU
        w = np.abs(dU) / (scale + np.abs(U))
        worst = int(np.argmax(w)) if w.size else -1
        err = float(w.max()) if w.size else 0.0
        history.append(err)
        if prev is not None and prev > 0:
            rate = err / prev
        if err <= options.tol:
            return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, "converged", history)
        if err <= options.roundoff_factor * options.tol and k > 1 and rate > 0.3:
            # no longer contracting just above the tolerance: the round-off floor of this system
            return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, "converged to round-off", history)
        if k >= options.min_iter_divergence and rate > options.divergence_rate and err > options.roundoff_factor * options.tol:
            return NewtonResult(False, U, k, rate, n_res, n_jac, n_fac, err, worst, "diverging", history)
        prev = err
    return NewtonResult(False, U, options.max_iter, rate, n_res, n_jac, n_fac, err, worst,
                        f"no convergence in {options.max_iter} iterations", history)
