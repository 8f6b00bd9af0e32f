"""Newton-Raphson on the internal unknowns of one time element: small, swappable, with counters.

Convergence is judged on the increment scaled per unknown (``|dU_i| <= tol (scale_i + |U_i|)``),
and the contraction rate ``|dU_k| / |dU_{k-1}|`` is monitored to stop early on divergence.

Jacobian reuse (``NewtonOptions.reuse``)
----------------------------------------
``"none"``: full Newton, a fresh factorization at every iteration.
``"auto"`` (default): ``"element"`` for systems of at least ``reuse_min_unknowns`` (2000)
internal unknowns, ``"none"`` below, where evaluation dominates and the extra iterations of the
simplified Newton cost more than the factorizations they save, or cost robustness (stiff flexible
bodies at large steps).
Near the root, full Newton reuses too (``reuse_near``, default 1e-4; 0 disables it): once a fresh
increment is at most ``reuse_near`` (scaled), the next iteration, normally the converging one,
evaluates the residual only (when the caller passes ``residual``) and solves with the last
factorization.  Its increment differs from the full Newton increment by O(|previous increment| x
|increment|), below 1e-14 of the scales when it is accepted (|increment| <= tol), so the converged
unknowns are those of full Newton to round-off; it saves one Jacobian evaluation and one
factorization per element (IFToMM pendulum, p = 2: 3.24 -> 2.35 factorizations per element;
10-link chain, p = 1: 3.00 -> 2.00; ``benchmarks/README.md``, "Small models").  If that increment
does not converge, it is kept when it contracts by ``reuse_rate`` and the next iteration is a fresh
one; otherwise it is discarded as in ``"element"`` below.
``"element"``: simplified Newton inside an element: the matrix factored at the first iteration is
reused for the next iterations as long as each increment contracts by at least ``reuse_rate``
(0.5) relative to the previous one.  An increment that contracts less is *discarded* and
recomputed with a fresh factorization of the Jacobian at the same iterate (an iteration with a
reused matrix evaluates the residual only, when the caller passes ``residual``; a discarded
increment then costs one Jacobian evaluation, a factorization and a solve).  ``"steps"``: the same, and the last
factorization is also carried over to the next element (it is dropped when an element fails).

The convergence test is the same for all modes: the accepted increment must satisfy the scaled
tolerance.  An increment computed with a reused matrix is accepted only when its contraction
rate ``theta <= reuse_rate`` is known (second iteration on), so the remaining error
``theta / (1 - theta) |dU|`` is below the increment itself.  The round-off acceptance and the
divergence test apply to true Newton increments only; a divergent reused matrix triggers a
fresh Jacobian, a divergent fresh Jacobian returns "diverging" (the driver then halves the step).

Stopping test (``NewtonOptions.predicted_stop``, default on)
------------------------------------------------------------
Besides ``|dU| <= tol``, an increment is accepted when the error it leaves, estimated as
``theta / (1 - theta) |dU_k|`` (scaled max norm), is below ``predicted_factor`` (1) x ``tol``: the
standard test of simplified Newton (Hairer & Wanner, Solving ODE II, IV.8), conservative for full
Newton, whose convergence is quadratic.  ``theta`` is the largest contraction
``|dU_k,i| / |dU_k-1,i|`` of the unknowns that carry the increment (``|dU_k,i| >= 1e-2 |dU_k|``): the
ratio of max norms compares different unknowns (15-link chain, p = 3: momenta 3e-3, then reactions
1.6e-8 contracting by 6e-4 only) and, used at first, stopped with 1e-11 left per element, which the
chain's motion amplified to 6e-9 of its length at 2 s.  Required besides: a contraction
``<= reuse_rate`` and ``|dU_k| <= sqrt(tol)`` (a contraction measured far from the root, e.g. under an
absurd load, 1e9 -> 9e-4, says nothing about the next increment).

Traced per kind of unknown (``benchmarks/newton_iterations.py --trace``): the relative positions ``s``
of spherical joints are exact from the predictor (increments 1e-21); the last increments are in the
reactions ``lambda``/``Qbar`` and the velocities, contracting quadratically under full Newton (chain
N = 10, Qbar: 1.6e-3, 2.6e-5, 1.1e-11: the Jacobian is exact) and by 1e-2 .. 1e-5 per iteration under
simplified Newton (N = 100: 6e-2, 2.8e-5, 5.8e-10, 5.8e-12), where the fourth iteration mostly
certified the third.  Measured (``benchmarks/README.md``, "Newton iterations"): iterations per
element chain N = 100 p = 1 3.93 -> 3.12, pendulum p = 2 3.24 -> 2.99, 15-link chain p = 3 3.90 ->
3.62, chain N = 10 unchanged (3.00); positions within 2e-12 of a solution converged to round-off.

Rank-deficient matrices (singular positions of closed loops)
-------------------------------------------------------------
At a change point of a loop (a parallelogram's cranks aligned with the coupler) the Newton matrix
of the element loses rank: singular values down to 5e-13 (rows scaled by their terms, unknowns by
``scale + |U|``), one null direction per self-stress.  The residual then reaches round-off (backward
error :func:`scaled_residual` 2e-17) while round-off moves the multipliers along the null direction
by ``eps / sigma_min`` (1e-5 scaled) at every iteration: the increment test cannot pass.  When a
true Newton iterate has ``scaled_residual <= residual_tol`` (1e-12) and the increment does not
contract (``> stall_rate`` x the previous one), the iterate is accepted, after its components along
the directions singular to ``null_tol`` (1e-9; found by inverse iteration with the factorization in
hand, :func:`flexmb.dynamics.solve.rank_deficient.near_null_basis`) are reset to the predictor's: the
least-norm change, so the dependent multipliers do not wander; the reset is kept only if the residual
stays below ``residual_tol``.  An iterate that moved more than ``max_change`` (1e3) x the scales from
the predictor is refused (it solves the equations only through multipliers of ``1 / sigma``).  When
the LU finds the matrix exactly singular, the element is solved by damped least squares from the
predictor (:func:`flexmb.dynamics.solve.rank_deficient.least_squares_solve`, ``lm_damping``), accepted when
its stationary residual is below ``dependent_tol`` (consistent dependent equations).  Other failures
(divergence, no convergence: a step too long, a model that locks, an absurd load) are reported as
before.  Measured on the parallelogram four-bar and a row of three (tests/test_singular_passage.py):
p = 1, 2, 3 x h = 0.01 .. 0.00125, 1.1 s, every run completes (before: 6 of 12 failed for each), positions
at the nodal order.  A change point *on* a time node needs more than this (the end node's self-stress
row has two nearby roots, the next element's reactions along it are undetermined): the elements that
end or start there are solved by :mod:`flexmb.dynamics.variants.singular_node` with bordered systems that call
this function with their own residual and factorization.

The default is set by measurement.  First (``benchmarks/chain.py --compare``: chain of N bars, one
run on the 2-core development machine, wall time of the time loop relative to full Newton with the
same cached-ordering SuperLU, the Python loop, before ``predicted_stop`` and ``reuse_near``):
``"element"`` 1.20 (N = 10, 480 unknowns), 0.83 (N = 100, 4800), 0.74 (N = 1000, 48000); crossover
near N = 40 (1920 unknowns: 1.01), hence 2000.  ``"steps"`` is no better (1.16, 0.94, 0.69: the
carried matrix is older than the predictor's and costs more iterations).  Positions agree with full
Newton to 1e-14 of the link length.  Since the compiled loop (:mod:`flexmb.dynamics.solve.fused_newton`)
also reuses within the element, and with the stopping test above, ``"element"`` costs no more than
``"none"`` from 96 unknowns on (2026-11-29, CPU per element, best of 7 interleaved, load 4-5):
IFToMM pendulum p = 2 (96 unknowns) 0.99, chain N = 5 / 10 / 20 p = 1 0.95 / 0.93 / 0.91 (the same
3.0 iterations, 1 factorization instead of 2), 15-link chain p = 3 0.82, chains of flexible bars
(8 modes) K = 1 / 2 / 4 0.99 / 0.98 / 0.83 (4.4-4.6 iterations instead of 3), K = 2 / 4 on the general
evaluator (a spring on a modal body: the Python loop) 0.98 / 0.88.  But on a stiff flexible body at
a large step it costs robustness: ``make demo`` (X3 "full", 378 unknowns, p = 3, h = 1e-3, 153
elements) took 10.38 Newton iterations per element and halved 2 elements with 200, against 5.78 and
none with full Newton; hence 2000 stays.  See ``benchmarks/README.md``.
"""
from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from flexmb.dynamics.kernels import jit_kernel
from flexmb.dynamics.solve.linsolve import Factor, SingularMatrixError
from flexmb.dynamics.solve.rank_deficient import least_squares_solve, near_null_basis, restore_null_components

log = logging.getLogger(__name__)


@jit_kernel
def scaled_increment(dU, U, scale):  # pragma: no cover - compiled
    """``w = |dU| / (scale + |U + dU|)`` (``(n,)``), its max and the index of its first max, as
    ``w.max()`` and ``np.argmax(w)`` give them (NaN propagated; ``0.0, -1`` when ``n = 0``): one
    pass instead of five array operations (3 ms per element at 144,000 unknowns)."""
    n = dU.size
    w = np.empty(n)
    for i in range(n):
        w[i] = abs(dU[i]) / (scale[i] + abs(U[i] + dU[i]))
    if n == 0:
        return w, 0.0, -1
    e = w[0]
    worst = 0
    for i in range(1, n):
        if e != e:
            break
        if w[i] > e or w[i] != w[i]:
            e = w[i]
            worst = i
    return w, e, worst


@jit_kernel
def contraction_rate(w, w_prev, err):  # pragma: no cover - compiled
    """``max(w / max(w_prev, 1e-300))`` over the components with ``w >= 1e-2 err`` (NaN propagated)."""
    th = -np.inf
    lim = 1e-2 * err
    for i in range(w.size):
        if w[i] >= lim:
            d = w_prev[i]
            if d < 1e-300:
                d = 1e-300
            r = w[i] / d
            if r != r:
                return r
            if r > th:
                th = r
    return th

REUSE_MODES = ("auto", "none", "element", "steps")


@dataclass(frozen=True)
class NewtonOptions:
    """``tol``: scaled increment tolerance; ``max_iter``; ``divergence_rate``: stop when the
    contraction rate of a true Newton increment exceeds it after ``min_iter_divergence``
    iterations; an increment that stops contracting below ``roundoff_factor * tol`` is accepted
    as converged to round-off; ``reuse``: ``"auto"`` | ``"none"`` | ``"element"`` | ``"steps"``
    (Jacobian reuse, see the module docstring) with refresh when the contraction rate exceeds
    ``reuse_rate``; ``"auto"`` reuses for systems of at least ``reuse_min_unknowns`` unknowns.
    Rank-deficient matrices (module docstring): ``residual_tol`` (backward error accepted as round-off,
    0: off), ``stall_rate``, ``least_squares`` (reset of the near-null directions to the predictor, and
    the damped least squares for an exactly singular matrix), ``null_tol`` (relative singular value
    below which a direction is reset), ``lm_damping`` (the least squares' ``mu``, relative to the O(1)
    scaled matrix), ``dependent_tol`` (largest residual left on the dependent equations),
    ``max_change`` (bound on a stalled iterate's change from the predictor, in scales)."""

    tol: float = 1e-10
    max_iter: int = 25
    divergence_rate: float = 2.0
    min_iter_divergence: int = 3
    roundoff_factor: float = 100.0
    #: full Newton reuses its last factorization once a fresh increment is below this (module docstring)
    reuse_near: float = 1e-4
    #: also accept an increment whose estimated remaining error theta / (1 - theta) |dU| is below tol
    predicted_stop: bool = True
    #: ... below predicted_factor x tol (the safety factor kappa of Hairer & Wanner)
    predicted_factor: float = 1.0
    reuse: str = "auto"
    reuse_rate: float = 0.5
    reuse_min_unknowns: int = 2000
    residual_tol: float = 1e-12
    stall_rate: float = 0.3
    least_squares: bool = True
    lm_damping: float = 1e-6
    dependent_tol: float = 1e-10
    max_change: float = 1e3
    null_tol: float = 1e-12

    def __post_init__(self):
        if self.reuse not in REUSE_MODES:
            raise ValueError(f"NewtonOptions(reuse={self.reuse!r}): use one of {REUSE_MODES}")
        if not 0.0 < self.reuse_rate < 1.0:
            raise ValueError(f"NewtonOptions(reuse_rate={self.reuse_rate!r}) must lie in (0, 1)")
        if not 0.0 <= self.residual_tol < 1.0:
            raise ValueError(f"NewtonOptions(residual_tol={self.residual_tol!r}) must lie in [0, 1) (0: off)")
        for name in ("lm_damping", "dependent_tol", "max_change", "stall_rate", "null_tol", "predicted_factor"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"NewtonOptions({name}={v!r}) must be a positive number")

    def reuse_mode(self, n: int) -> str:
        """The reuse mode for a system of ``n`` unknowns: ``reuse`` with ``"auto"`` resolved."""
        if self.reuse == "auto":
            return "element" if n >= self.reuse_min_unknowns else "none"
        return self.reuse


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
    residual: float = np.nan  # scaled residual of the returned iterate, when it decided convergence
    least_squares: str = ""  # outcome of the least-squares fallback after a failure, if it ran


def scaled_residual(F: np.ndarray, J, s: np.ndarray) -> float:
    """Backward error of an iterate: ``max_i |F_i| / sum_j |J_ij| s_j``, each equation's residual
    relative to the change its terms undergo when every unknown moves by its magnitude ``s``
    (``(n,)``, units of the unknowns).  Dimensionless and independent of how the equations are
    scaled; equations with no terms (empty rows) count with their raw residual."""
    if not F.size:
        return 0.0
    A = abs(J) if hasattr(J, "multiply") else np.abs(np.asarray(J))
    den = np.asarray(A @ s).reshape(-1)
    den = np.where(den > 0, den, 1.0)
    return float(np.max(np.abs(F) / den))


# factorizations carried over between elements (reuse="steps"), keyed by the factor callable; a
# bound method (e.g. ``Run.factor``) is a new object at every attribute access, so it is keyed by
# its instance (weakly) and its function
_CARRIED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _carry_key(factor):
    owner, func = getattr(factor, "__self__", None), getattr(factor, "__func__", None)
    return (owner, func) if owner is not None and func is not None else (factor, None)


def _carried(factor, n: int):
    owner, func = _carry_key(factor)
    try:
        solve, size = _CARRIED.get(owner, {}).get(func, (None, 0))
    except TypeError:  # not weak-referenceable: no carrying over
        return None
    return solve if size == n else None


def _carry(factor, solve, n: int) -> None:
    owner, func = _carry_key(factor)
    try:
        if solve is None:
            _CARRIED.get(owner, {}).pop(func, None)
        else:
            _CARRIED.setdefault(owner, {})[func] = (solve, n)
    except TypeError:
        pass


def newton_solve(evaluate: Callable, U0: np.ndarray, scale: np.ndarray, factor: Factor,
                 options: NewtonOptions = NewtonOptions(), residual: Callable | None = None) -> NewtonResult:
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
        ``factor(J) -> solve`` (see :mod:`flexmb.dynamics.solve.linsolve`).
    options : NewtonOptions
    residual : callable, optional
        ``residual(U) -> F``, the same residual as ``evaluate`` without the Jacobian (bit for bit).
        Used for the iterations that reuse a factorization; when such an increment is discarded,
        the Jacobian at the same iterate is then obtained from ``evaluate``.  Without it every
        iteration calls ``evaluate``.
    """
    n = U0.size
    reuse = options.reuse_mode(n)
    # full Newton near the root (reuse_near): the converging iteration reuses the last factorization
    late = reuse == "none" and residual is not None and options.reuse_near > 0
    near = False
    U = U0.copy()
    prev = None  # scaled norm of the previous accepted increment
    w_prev = None  # its scaled components
    rate = 0.0
    n_res = n_jac = n_fac = 0
    history = []
    err = np.inf
    worst = -1
    solve = _carried(factor, n) if reuse == "steps" else None
    prev_fresh = False

    def fail(k, message, err=np.inf, worst=-1, singular=False):
        if reuse == "steps":
            _carry(factor, None, n)
        if options.least_squares and singular:  # only where the matrix is known to be rank-deficient:
            # elsewhere a failure means a step too long or a model that locks, and is reported
            ok, U2, k2, err2, rho, msg2 = least_squares_solve(evaluate, U0, scale, options)
            log.debug("Newton failed (%s); least squares from the predictor: %s (%d iterations, residual %.3g)",
                      message, msg2, k2, rho)
            if ok:
                return NewtonResult(True, U2, k + k2, rate, n_res + k2, n_jac + k2, n_fac + k2, err2, worst,
                                    f"{msg2} ({rho:.3g}) after Newton: {message}", history, residual=rho)
            return NewtonResult(False, U, k, rate, n_res, n_jac, n_fac, err, worst, message, history,
                                least_squares=msg2)
        return NewtonResult(False, U, k, rate, n_res, n_jac, n_fac, err, worst, message, history)

    def accept_residual(k, rho, why, solve=None, J=None):
        # the residual is at round-off but the matrix is (nearly) rank-deficient: the iterate's
        # components along its near-null directions are round-off amplified by 1 / sigma_min; they
        # are reset to the predictor's (least-norm change), which changes the residual by sigma x the
        # reset, checked.  An exactly singular matrix (no factorization) goes to least squares.
        if reuse == "steps":
            _carry(factor, None, n)
        s0 = scale + np.abs(U0)
        Uc, extra, note = U, 0, ""
        if options.least_squares and solve is not None:
            Z = near_null_basis(solve, J, s0, options.null_tol)
            if Z.shape[1]:
                Ur = restore_null_components(U, U0, s0, Z)
                Fr, Jr = evaluate(Ur)
                extra = 1
                rr = scaled_residual(Fr, Jr, scale + np.abs(Ur)) if np.all(np.isfinite(Fr)) else np.inf
                if rr <= options.residual_tol:
                    Uc, rho = Ur, rr
                    note = f"; {Z.shape[1]} near-null directions kept at the predictor"
                else:
                    note = f"; resetting {Z.shape[1]} near-null directions raised the residual to {rr:.3g}"
        elif options.least_squares:
            ok, U2, k2, err2, rho2, msg2 = least_squares_solve(evaluate, U0, scale, options)
            log.debug("Newton: singular matrix at residual %.3g; least squares from the predictor: %s (%d iterations, "
                      "residual %.3g)", rho, msg2, k2, rho2)
            if ok:
                return NewtonResult(True, U2, k + k2, rate, n_res + k2, n_jac + k2, n_fac + k2, err2, worst,
                                    f"{msg2} ({rho2:.3g}) after Newton: {why}", history, residual=rho2)
            extra, note = k2, f"; {msg2}"
        change = float(np.max(np.abs(Uc - U0) / s0)) if n else 0.0
        if change > options.max_change:
            # the iterate solves the equations only by moving far along the null space (multipliers of
            # 1 / sigma_min): not accepted
            return NewtonResult(False, Uc, k, rate, n_res + extra, n_jac + extra, n_fac, err, worst,
                                f"stalled at residual {rho:.3g} ({why}{note}), {change:.3g} x the scales from the "
                                f"predictor", history, residual=rho)
        log.debug("Newton converged in the residual (%.3g; %s%s): nearly rank-deficient matrix", rho, why, note)
        return NewtonResult(True, Uc, k, rate, n_res + extra, n_jac + extra, n_fac, err, worst,
                            f"converged in the residual ({rho:.3g}; {why}{note})", history, residual=rho)

    for k in range(1, options.max_iter + 1):
        reusing = solve is not None and (reuse != "none" or near)
        if reusing and residual is not None:
            F, J = residual(U), None  # the matrix is reused: the Jacobian values are not needed
        else:
            F, J = evaluate(U)
            n_jac += 1
        n_res += 1
        if not np.all(np.isfinite(F)):
            return fail(k, "residual is not finite", worst=int(np.argmax(~np.isfinite(F))))
        fresh = False
        if reusing:
            # simplified Newton step with the reused factorization
            dU = -solve(F)
            w, e, wmax = scaled_increment(dU, U, scale)
            # keep it if it contracts enough, and fast enough to reach the tolerance within the
            # iterations left; the first increment of an element with a carried matrix has no
            # rate yet: take it (it cannot be accepted as converged, see below)
            if prev is not None and prev > 0:
                theta = e / prev
                left = options.max_iter - k
                if theta > options.reuse_rate or (e > options.tol and theta ** left * e > options.tol):
                    solve = None
        if solve is None or not reusing:
            if J is None:  # the reused matrix was dropped: the Jacobian at the same iterate
                F2, J = evaluate(U)
                n_jac += 1
                if not np.array_equal(F2, F):
                    raise AssertionError("the residual-only evaluation differs from the full one")
            try:
                solve = factor(J)
            except SingularMatrixError as exc:
                if k > 1:  # the backward error decides (computed only where it does: a sparse |J| s)
                    rho = scaled_residual(F, J, scale + np.abs(U))
                    if rho <= options.residual_tol:
                        return accept_residual(k, rho, "exactly singular")
                return fail(k, f"singular Newton matrix ({exc})", singular=True)
            n_fac += 1
            fresh = True
            dU = -solve(F)
            w, e, wmax = scaled_increment(dU, U, scale)
            if (k > 1 and prev is not None and e > options.roundoff_factor * options.tol
                    and e > options.stall_rate * prev):
                # increments no longer contracting, above the round-off acceptance below: if the
                # residual is at its round-off floor, a (nearly) rank-deficient matrix amplifies
                # round-off along its null space
                rho = scaled_residual(F, J, scale + np.abs(U))
                if rho <= options.residual_tol:
                    return accept_residual(k, rho, f"increment {e:.3g} after {prev:.3g}", solve, J)
        U = U + dU
        worst = int(wmax)
        err = e
        history.append(err)
        if prev is not None and prev > 0:
            rate = err / prev
        known = fresh or (prev is not None and rate <= options.reuse_rate)
        # the error left after this increment, estimated from the contraction theta / (1 - theta) |dU|
        # (module docstring, "Stopping test"), with theta the contraction of the unknowns that carry this
        # increment (a max-norm ratio compares different unknowns: momenta 3e-3 then reactions 1.6e-8)
        left = np.inf
        if (options.predicted_stop and w_prev is not None and prev > 0 and rate <= options.reuse_rate
                and err <= np.sqrt(options.tol)):
            theta = float(contraction_rate(w, w_prev, err))
            if theta < 1.0:
                left = theta / (1.0 - theta) * err / options.predicted_factor
        if (err <= options.tol and known) or left <= options.tol:
            if reuse == "steps":
                _carry(factor, solve, n)
            return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, "converged", history)
        if fresh and err <= options.roundoff_factor * options.tol and k > 1 and rate > 0.3:
            # a true Newton increment no longer contracting just above the tolerance: the
            # round-off floor of this system
            if reuse == "steps":
                _carry(factor, solve, n)
            return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, "converged to round-off", history)
        # divergence: two true Newton increments in a row growing by more than divergence_rate
        # (a fresh increment after a reused-matrix one is not compared with it)
        if fresh and prev_fresh and k >= options.min_iter_divergence and rate > options.divergence_rate \
                and err > options.roundoff_factor * options.tol:
            return fail(k, "diverging", err, worst)
        prev = err
        w_prev = w
        prev_fresh = fresh
        near = late and fresh and err <= options.reuse_near
    return fail(options.max_iter, f"no convergence in {options.max_iter} iterations", err, worst)
