"""The compiled Newton loop of the fused evaluator (small models): one numba call per element.

For a model that :class:`~flexmb.dynamics.solve.fused.FusedEvaluator` serves and a Newton matrix
refactored along kept pivots (:class:`flexmb.dynamics.solve.linsolve.Refactor`, the default backend above
the dense threshold), the Python loop of :func:`flexmb.dynamics.solve.newton.newton_solve` and its glue
(``Triplets``/``Pattern.matrix``, the backend's ``__call__``, the increments' bookkeeping: ~75 Python
calls per iteration) cost more than the compiled work itself.  :func:`newton_element` runs the whole
iteration in one numba call, with the very kernels the general loop calls, in the same order:

    evaluate (:func:`flexmb.dynamics.solve.fused_element.whole_element`, residual only when the factorization is reused)
    -> CSC values of the fixed pattern (``layout._scatter_values``)
    -> numeric refactorization (``refactor_lu.refactor_numeric``) -> solve (``refactor_lu.refactor_solve``)
    -> scaled increment and contraction (``newton.scaled_increment``, ``newton.contraction_rate``)
    -> the stopping test of ``newton_solve`` for ``reuse="none"`` with ``reuse_near`` (full Newton,
       its last factorization reused near the root) and for ``reuse="element"`` (simplified Newton:
       the factorization reused across the element's iterations while it contracts by ``reuse_rate``,
       residual-only evaluations, a fresh Jacobian at the same iterate when it stops contracting), the
       same expressions in the same order,

so that it returns the general loop's iterate for the same evaluations, with the same iteration,
evaluation and factorization counts.  Only plain outcomes are returned: ``"converged"`` and
``"converged to round-off"``.  Increments that stop contracting while the backward error is above
round-off are iterated on, as the general loop does (:func:`backward_error`).  Anything else (a
non-finite residual, a position taken for a structural zero that is not, a pivot failing the threshold
test, increments that stall at the round-off floor or diverge, no convergence) returns a status that
makes :func:`~flexmb.dynamics.solve.compiled_loop.compiled_newton` answer None, and
:meth:`~flexmb.dynamics.solve.evaluation.ElementSystem.newton` then runs the general loop from the same
predictor: the singular passages, rank-deficient corrections, step halving and diagnostics are
untouched.  Nothing the general loop reads is modified by an abandoned attempt.  Drive targets and load
values (functions of time only) are evaluated once per element.

The Python around it (the arrays it takes, kept per pattern and LU structure; where it applies; the
pivots' retry) is :mod:`flexmb.dynamics.solve.compiled_loop`.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)
# the general loop's own compiled pieces (CSC values, refactorization, increments): the same expressions
from flexmb.dynamics.layout import _scatter_values
from flexmb.dynamics.solve.fused_element import whole_element
from flexmb.dynamics.solve.fused_modal import no_modal
from flexmb.dynamics.solve.newton import contraction_rate, scaled_increment
from flexmb.dynamics.solve.packing import v1, v2, v3
from flexmb.dynamics.solve.refactor_lu import refactor_numeric, refactor_solve

#: statuses of :func:`newton_element`
CONVERGED, ROUNDOFF = 0, 1
NOT_FINITE, LOST_ZERO, PIVOT, STALLED, DIVERGING, NO_CONVERGENCE = 2, 3, 4, 5, 6, 7
#: the messages of the plain outcomes
MESSAGES = {CONVERGED: "converged", ROUNDOFF: "converged to round-off"}


#: increments that stop contracting (``stall_rate``) are handed to the general loop only where the backward
#: error is within this factor of ``NewtonOptions.residual_tol`` (its own test decides there; the two
#: computations of the backward error differ in the order of their sums, at round-off)
STALL_MARGIN = 4.0


@jit_kernel
def backward_error(n, res, data, Bp, Brow, gather, q, perm_r, scale, U):  # pragma: no cover - compiled
    """:func:`~flexmb.dynamics.solve.newton.scaled_residual` of the residual ``res (n,)`` for the matrix of
    the values ``data`` (CSC, the pattern's order) at the iterate ``U (n,)``: ``max_i |F_i| / sum_j |J_ij|
    (scale_j + |U_j|)`` (an empty row: its raw residual), the sums over the kept LU structure's columns
    (``Bp``, ``Brow``, ``gather``: column ``j`` of ``P_r J P_c`` is column ``q[j]`` of ``J``, row ``perm_r[i]``
    of it is row ``i``)."""
    den = np.zeros(n)
    for j in range(n):
        c = q[j]
        sj = scale[c] + abs(U[c])
        for k in range(Bp[j], Bp[j + 1]):
            den[Brow[k]] += abs(data[gather[k]]) * sj
    worst = 0.0
    for i in range(n):
        d = den[perm_r[i]]
        v = abs(res[i]) / (d if d > 0.0 else 1.0)
        if v > worst:
            worst = v
    return worst


@jit_kernel
def newton_element(h, te_t, body, mod, sl, sa, sb, mp, jt, loads, springs,
                   nb, nbm, nj, p, jsl, slm, off, nvr, nvm, n_entries, dest, n_dropped,
                   Bp, Brow, gather, Lp, Li, Up, Ui, perm_r, q, pivot_tol,
                   U0, scale, fopt, iopt, U, hist):  # pragma: no cover - compiled
    """Newton on the internal unknowns of one element (module docstring).

    ``U0 (n,)`` predictor, ``scale (n,)``; ``fopt = (tol, divergence_rate, roundoff_factor,
    reuse_near, predicted_factor, reuse_rate, stall_rate, residual_tol)``, ``iopt = (max_iter,
    min_iter_divergence, predicted_stop, late, element)`` (``late``: full Newton's reuse near the
    root, ``reuse="none"``; ``element``: ``reuse="element"``, newton_solve's ``reuse != "none"``); the
    other arguments are those of :func:`~flexmb.dynamics.solve.fused_element.whole_element` (model and element start; ``nb``, ``nbm`` rigid
    and modal bodies, ``slm`` the modal bodies' unknowns per point, ``off`` the joints' first unknown),
    the pattern's (``nvr``, ``nvm`` the values per body and point of the rigid and the modal group's
    blocks, the first in the values; ``dest``, ``n_dropped``) and the kept LU structure's.
    Writes the iterate into ``U (n,)`` and the scaled increments into ``hist (max_iter,)``.

    Returns ``(status, iterations, rate, n_res, n_jac, n_fac, err, worst, n_eval)`` (``n_eval``:
    calls of the element kernel, as ``ElementSystem.evaluate`` counts them)."""
    tol, divergence_rate, roundoff_factor = fopt[0], fopt[1], fopt[2]
    reuse_near, predicted_factor, reuse_rate, stall_rate = fopt[3], fopt[4], fopt[5], fopt[6]
    max_iter, min_iter_divergence, predicted_stop, late = iopt[0], iopt[1], iopt[2] != 0, iopt[3] != 0
    element = iopt[4] != 0
    n = U0.size
    for i in range(n):
        U[i] = U0[i]
    buf = np.empty(n_entries)
    data = np.empty(Bp[n])
    dropped = np.empty(n_dropped)
    Lx = np.empty(Li.size)
    Ux = np.empty(Ui.size)
    Ud = np.empty(n)
    x = np.empty(n)
    dU = np.empty(n)
    w_prev = np.empty(n)
    have_solve = False
    near = False
    have_prev = False
    prev = 0.0
    rate = 0.0
    n_res = 0
    n_jac = 0
    n_fac = 0
    err = np.inf
    worst = -1
    prev_fresh = False
    n_ev = 0
    sqrt_tol = np.sqrt(tol)

    slots = body[8]
    om = nb * p * slots
    v1 = nb * p * nvr
    v2 = v1 + nbm * p * nvm

    def evaluate(res, jac):
        # the element at U: residual into res, Jacobian values into buf (jac)
        whole_element(h, te_t, body, mod, U[:om].reshape((nb, p, slots)), U[om:off].reshape((nbm, p, slm)),
                U[off:].reshape((nj, p, jsl)), sl, sa, sb, mp, jt, loads, springs, res[:om].reshape((nb, p, slots)),
                res[om:off].reshape((nbm, p, slm)), res[off:].reshape((nj, p, jsl)), res, jac,
                buf[:v1].reshape((nb, p, nvr)), buf[v1:v2].reshape((nbm, p, nvm)), buf)
    for k in range(1, max_iter + 1):
        reusing = have_solve and (element or near)
        jac = not reusing
        res = np.zeros(n)
        evaluate(res, jac)
        n_ev += 1
        if jac:
            n_jac += 1
        n_res += 1
        for i in range(n):
            if not np.isfinite(res[i]):
                return NOT_FINITE, k, rate, n_res, n_jac, n_fac, err, i, n_ev
        fresh = False
        w = np.empty(0)
        e = 0.0
        wmax = -1
        if reusing:
            refactor_solve(n, perm_r, q, Lp, Li, Lx, Up, Ui, Ux, Ud, res, x)
            for i in range(n):
                dU[i] = -x[i]
            w, e, wmax = scaled_increment(dU, U, scale)
            if have_prev and prev > 0:
                theta = e / prev
                left = float(max_iter - k)
                if theta > reuse_rate or (e > tol and theta ** left * e > tol):
                    have_solve = False
        if not have_solve or not reusing:
            if not jac:  # the reused matrix was dropped: the Jacobian at the same iterate
                evaluate(np.zeros(n), not jac)  # a typed bool (not the literal True): one specialization
                n_jac += 1
                n_ev += 1
            if _scatter_values(dest, buf, data, dropped):
                return LOST_ZERO, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
            bad, _ratio = refactor_numeric(n, Bp, Brow, gather, data, Lp, Li, Lx, Up, Ui, Ux, Ud, pivot_tol)
            if bad >= 0:
                return PIVOT, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
            have_solve = True
            n_fac += 1
            fresh = True
            refactor_solve(n, perm_r, q, Lp, Li, Lx, Up, Ui, Ux, Ud, res, x)
            for i in range(n):
                dU[i] = -x[i]
            w, e, wmax = scaled_increment(dU, U, scale)
            if k > 1 and have_prev and e > roundoff_factor * tol and e > stall_rate * prev \
                    and backward_error(n, res, data, Bp, Brow, gather, q, perm_r, scale, U) <= STALL_MARGIN * fopt[7]:
                # a residual at its round-off floor: the general loop decides (singular passages, its
                # rank-deficient branch); above it, newton_solve iterates on, and so does this loop
                return STALLED, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
        for i in range(n):
            U[i] = U[i] + dU[i]
        worst = wmax
        err = e
        hist[k - 1] = err
        if have_prev and prev > 0:
            rate = err / prev
        known = fresh or (have_prev and rate <= reuse_rate)
        left = np.inf
        if predicted_stop and have_prev and prev > 0 and rate <= reuse_rate and err <= sqrt_tol:
            theta = contraction_rate(w, w_prev, err)
            if theta < 1.0:
                left = theta / (1.0 - theta) * err / predicted_factor
        if (err <= tol and known) or left <= tol:
            return CONVERGED, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
        if fresh and err <= roundoff_factor * tol and k > 1 and rate > 0.3:
            return ROUNDOFF, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
        if fresh and prev_fresh and k >= min_iter_divergence and rate > divergence_rate \
                and err > roundoff_factor * tol:
            return DIVERGING, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
        prev = err
        have_prev = True
        for i in range(n):
            w_prev[i] = w[i]
        prev_fresh = fresh
        near = late and fresh and err <= reuse_near
    return NO_CONVERGENCE, max_iter, rate, n_res, n_jac, n_fac, err, worst, n_ev


@jit_kernel
def side_of(Fr, Ir, m):  # pragma: no cover - compiled
    """An attachment side tuple of :mod:`.fused_kernels` from its 7 rows ``m`` of a packing's ``M``
    (:func:`flexmb.dynamics.solve.fused._side_pieces`)."""
    return (v1(Ir, m[0]), v1(Ir, m[1]), v2(Fr, m[2]), v3(Fr, m[3]), v2(Fr, m[4]), v3(Fr, m[5]), Ir[m[6, 0]] != 0)


@jit_kernel
def newton_rigid(h, x, R, pi, js, lam, Rr, acc, tgt, vals, pivot_tol, U0, scale, fopt, iopt, U, hist,
                 Fr, Fw, Ir, Iw, Jw, Br, M):  # pragma: no cover - compiled
    """:func:`newton_element` of a model without modal bodies, its constants packed
    (:mod:`.packing`: ``Fr, Fw, Ir, Iw, Jw, Br, M``, built once per pattern and joint laws by
    :meth:`FusedNewton.packed`): ``M``'s row 0 the sizes ``(nb, nj, p, jsl, off, nvr, n_entries,
    n_dropped, slots)``, rows 1-66 :meth:`~flexmb.dynamics.solve.fused.FusedEvaluator.rigid_pieces`,
    67-76 the pattern's ``dest`` and the kept LU structure.  The per-element arguments: the start
    node's ``x (nb, 3)``, ``R (nb, 3, 3)``, ``pi (nb, 6)``, the joints' ``js, lam, Rr, acc`` and the drive
    targets ``tgt``, the loads' values ``vals`` (:meth:`~.fused.FusedEvaluator.element_values`), then
    :func:`newton_element`'s.  The modal group's (empty) arguments are built here
    (:func:`.fused_modal.no_modal`).  Some 15 arrays to unbox per call instead of ~100 (the tuples of
    constants: ~13 us per element of the pendulum, benchmarks/README.md)."""
    d = v1(Ir, M[0])
    nb, nj, p, jsl, off, nvr, n_entries, n_dropped, slots = d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8]
    te_t = (v2(Fw, M[1]), v2(Fw, M[2]), v2(Fr, M[3]), v2(Fr, M[4]))
    body = (x, R, pi, v1(Fr, M[5]), v3(Fr, M[6]), v1(Fr, M[7]), v1(Ir, M[8]), v1(Ir, M[9]), slots)
    sl = v1(Iw, M[10])
    sa, sb = side_of(Fr, Ir, M[11:18]), side_of(Fr, Ir, M[18:25])
    jt = (js, lam, Rr, acc, tgt, v2(Fr, M[25]), v2(Fr, M[26]), v2(Fr, M[27]), v2(Ir, M[28]), v1(Ir, M[29]),
          v1(Ir, M[30]), v1(Ir, M[31]), v1(Ir, M[32]), v1(Fr, M[33]), v1(Ir, M[34]), v1(Ir, M[35]), v1(Ir, M[36]),
          v1(Ir, M[37]), v1(Ir, M[38]), v1(Iw, M[39]), v1(Iw, M[40]), Ir[M[41, 0]] != 0)
    loads = (v1(Ir, M[42]), v2(Fr, M[43]), v3(Fr, M[44]), v1(Br, M[45]), v1(Ir, M[46]), v1(Br, M[47]), vals)
    springs = (side_of(Fr, Ir, M[48:55]), side_of(Fr, Ir, M[55:62]), v1(Fr, M[62]), v1(Fr, M[63]), v1(Fr, M[64]),
               (v1(Iw, M[65]), v1(Iw, M[66])))
    dest, Bp, Brow, gather = v1(Jw, M[67]), v1(Iw, M[68]), v1(Jw, M[69]), v1(Jw, M[70])
    Lp, Li, Up, Ui, perm_r, q = v1(Iw, M[71]), v1(Jw, M[72]), v1(Iw, M[73]), v1(Jw, M[74]), v1(Iw, M[75]), v1(Iw, M[76])
    mod, mp = no_modal(p)
    none = nb - nb  # (typed zeros, not literals: tests/test_compile_specializations.py)
    slm = jsl - jsl + 18
    return newton_element(h, te_t, body, mod, sl, sa, sb, mp, jt, loads, springs, nb, none, nj, p, jsl, slm, off,
                          nvr, none, n_entries, dest, n_dropped, Bp, Brow, gather, Lp, Li, Up, Ui, perm_r, q,
                          pivot_tol, U0, scale, fopt, iopt, U, hist)
