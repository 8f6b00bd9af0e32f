"""Compiled Newton iteration of one time element for small rigid-only models (issue 6 C).

For a model that the whole-element kernel serves (:func:`flexmb.dynamics.rigid.element.whole_element`:
plain rigid bodies, no force elements) and a Newton matrix refactored along kept pivots
(:class:`flexmb.dynamics.solve.linsolve.Refactor`, the default backend above the dense threshold), the
Python loop of :func:`flexmb.dynamics.solve.newton.newton_solve` and its glue (the evaluation's
``Triplets``/``Pattern.matrix``, the backend's ``__call__``, the increments' bookkeeping: ~75 Python
calls per iteration) cost more than the compiled work itself.  :func:`newton_element` runs the whole
iteration in one numba call, with the very kernels the general path calls, in the same order:

    evaluate (``whole_element``, residual only when the factorization is reused)
    -> CSC values of the fixed pattern (``layout._scatter_values``)
    -> numeric refactorization (``refactor_lu._numeric``) -> solve (``refactor_lu._solve``)
    -> scaled increment and contraction (``newton._scaled_increment``, ``newton._contraction``)
    -> the stopping test of ``newton_solve`` for ``reuse="none"`` with ``reuse_near`` (full Newton,
       its last factorization reused near the root), the same expressions in the same order,

so that it returns the general path's iterate bit for bit, with the same iteration, evaluation and
factorization counts.  Only plain outcomes are returned: ``"converged"`` and ``"converged to
round-off"``.  Anything else (a non-finite residual, a position taken for a structural zero that is
not, a pivot failing the threshold test, increments that stall or diverge, no convergence) returns a
status that makes :meth:`RigidNewton.solve` answer None, and ``newton_solve`` then runs its general
loop from the same predictor: the singular passages, rank-deficient corrections, step halving and
diagnostics are untouched.  Nothing the general path reads is modified by an abandoned attempt (the
kernel writes only its own work arrays; the evaluation counters below count its work).  Drive
targets (functions of time only) are evaluated once per element instead of once per evaluation.

Dispatch (:func:`fast_newton`): ``ENABLED``, the compiled whole element, a pattern built and fitting
the kernel's blocks, ``NewtonOptions.reuse`` resolving to ``"none"`` (below ``reuse_min_unknowns``,
2000 unknowns by default; ``reuse_near`` as given), and the run's backend a ``Refactor`` that has
analysed this pattern (a ``SmallFirst`` wrapper above its dense threshold is looked through).  The
first element of a pattern, dense-LU sizes (<= 64 unknowns), other backends, force elements and
flexible models keep the general loop.  Counters: ``ElementSystem.n_eval`` counts the kernel's
evaluations; its ``t_eval`` takes the whole call (factorizations included: they are not timed
separately inside the kernel, so ``meta["factorization_time"]`` leaves them out).

Measured (``benchmarks/README.md``, "Small models after LEAN"): with the compiled node glue of the same
change, CPU per element IFToMM pendulum (p = 2, 96 unknowns) 424 -> 215 us, 10-link chain (p = 1, 480
unknowns) 552 -> 352 us.  The kernel compiles in ~10 s once per machine (numba's on-disk cache; ~65 ms
to load it in a new process).  numba keys that cache on this file only: after a change of a callee in
another file (``rigid_element``, ``kernels``, ``joint_kernels``, ``refactor_lu``, ``layout``,
``newton``) clear ``flexmb/dynamics/__pycache__/rigid_newton.*.nb*``.  Tests:
``tests/test_rigid_newton.py``.
"""
from __future__ import annotations

import logging
import time as _time

import numpy as np

from flexmb.dynamics.kernels import _jit
from flexmb.dynamics.layout import _scatter_values
from flexmb.dynamics.solve.newton import NewtonResult, _contraction, _scaled_increment
from flexmb.dynamics.solve.refactor_lu import _numeric, _solve
from flexmb.dynamics.rigid.element import _SLOTS, rigid_joints, whole_element

log = logging.getLogger(__name__)

#: the compiled Newton loop is used when True and the run qualifies (tests switch it off to compare)
ENABLED = True

#: statuses of :func:`newton_element`
CONVERGED, ROUNDOFF = 0, 1
NOT_FINITE, LOST_ZERO, PIVOT, STALLED, DIVERGING, NO_CONVERGENCE = 2, 3, 4, 5, 6, 7
_MESSAGES = {CONVERGED: "converged", ROUNDOFF: "converged to round-off"}


@_jit
def newton_element(E, D, h, x1, R1, pi1, mass, J0, g, s1, lam1, Rr, acc, sl, bsl, bs, slots,
                   sel_a, loc_a, c_a, A_a, gx_a, gR_a, lever_a, sel_b, loc_b, c_b, A_b, gx_b, gR_b, lever_b,
                   ab_in_a, ab_in_b, tgt, kk, cd, ref, cons, jc, cc, jf, cf, kf,
                   nb, nj, p, jsl, off, o0, o1, offs, n_entries, dest, n_dropped,
                   Bp, Brow, gather, Lp, Li, Up, Ui, perm_r, q, pivot_tol,
                   U0, scale, fopt, iopt, U, hist):  # pragma: no cover - compiled
    """Newton on the internal unknowns of one element (module docstring).

    ``U0 (n,)`` predictor, ``scale (n,)``; ``fopt = (tol, divergence_rate, roundoff_factor,
    reuse_near, predicted_factor, reuse_rate, stall_rate)``, ``iopt = (max_iter,
    min_iter_divergence, predicted_stop, late)``; the other arguments are those of
    :func:`~flexmb.dynamics.rigid.element.whole_element` (model and element start), the pattern's
    (``o0:o1`` the bodies' block in the values, ``dest``, ``n_dropped``) and the kept LU structure's.
    Writes the iterate into ``U (n,)`` and the scaled increments into ``hist (max_iter,)``.

    Returns ``(status, iterations, rate, n_res, n_jac, n_fac, err, worst, n_eval)`` (``n_eval``:
    calls of the element kernel, as ``ElementSystem.evaluate`` counts them)."""
    tol, divergence_rate, roundoff_factor = fopt[0], fopt[1], fopt[2]
    reuse_near, predicted_factor, reuse_rate, stall_rate = fopt[3], fopt[4], fopt[5], fopt[6]
    max_iter, min_iter_divergence, predicted_stop, late = iopt[0], iopt[1], iopt[2] != 0, iopt[3] != 0
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

    def evaluate(res, jac):
        # the element at U: residual into res, Jacobian values into buf (jac)
        whole_element(E, D, h, x1, R1, pi1, mass, J0, g, s1, lam1, Rr, acc, U[off:].reshape((nj, p, jsl)), sl,
                      U[:off].reshape((nb, p, slots)), bsl, bs, slots,
                      sel_a, loc_a, c_a, A_a, gx_a, gR_a, lever_a, sel_b, loc_b, c_b, A_b, gx_b, gR_b, lever_b,
                      ab_in_a, ab_in_b, tgt, kk, cd, ref, cons, jc, cc, jf, cf, kf,
                      res[:off].reshape((nb, p, slots)), res[off:].reshape((nj, p, jsl)), res, jac,
                      buf[o0:o1].reshape((nb, p, (o1 - o0) // (nb * p))), buf, offs)
    for k in range(1, max_iter + 1):
        reusing = have_solve and near
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
            _solve(n, perm_r, q, Lp, Li, Lx, Up, Ui, Ux, Ud, res, x)
            for i in range(n):
                dU[i] = -x[i]
            w, e, wmax = _scaled_increment(dU, U, scale)
            if have_prev and prev > 0:
                theta = e / prev
                left = float(max_iter - k)
                if theta > reuse_rate or (e > tol and theta ** left * e > tol):
                    have_solve = False
        if not have_solve or not reusing:
            if not jac:  # the reused matrix was dropped: the Jacobian at the same iterate
                evaluate(np.zeros(n), True)
                n_jac += 1
                n_ev += 1
            if _scatter_values(dest, buf, data, dropped):
                return LOST_ZERO, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
            bad, _ratio = _numeric(n, Bp, Brow, gather, data, Lp, Li, Lx, Up, Ui, Ux, Ud, pivot_tol)
            if bad >= 0:
                return PIVOT, k, rate, n_res, n_jac, n_fac, err, worst, n_ev
            have_solve = True
            n_fac += 1
            fresh = True
            _solve(n, perm_r, q, Lp, Li, Lx, Up, Ui, Ux, Ud, res, x)
            for i in range(n):
                dU[i] = -x[i]
            w, e, wmax = _scaled_increment(dU, U, scale)
            if k > 1 and have_prev and e > roundoff_factor * tol and e > stall_rate * prev:
                # the general loop decides on the backward error here (singular passages)
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
            theta = _contraction(w, w_prev, err)
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


class RigidNewton:
    """The arrays of :func:`newton_element` that depend on the model, the pattern and the kept LU
    structure only (built once per pattern and structure, :func:`fast_newton`)."""

    def __init__(self, system, rj, pat, s) -> None:
        te, lay = system.te, system.lay
        grp = rj.grp
        self.system, self.rj, self.pat, self.s = system, rj, pat, s
        self.n = lay.size
        self.dims = (grp.n, rj.nj, te.p, (lay.size - lay.joint_off) // max(rj.nj * te.p, 1), lay.joint_off,
                     pat.offsets[0], pat.offsets[1], rj._offs, pat.n_entries, pat._dest, pat._dropped.size)
        self.model = (grp.mass, grp.J0, rj.gravity)
        self.joints = (_SLOTS, grp._slot_starts, lay.body_start[grp.bodies], grp.slots,
                       rj.sel_a, rj.loc_a, rj.c_a, rj.A_a, rj.gx_a, rj.gR_a, rj.lever_a,
                       rj.sel_b, rj.loc_b, rj.c_b, rj.A_b, rj.gx_b, rj.gR_b, rj.lever_b, rj.ab_in_a, rj.ab_in_b)
        self.laws = (rj.k, rj.c, rj.ref, rj.cons, rj.jc, rj.cc, rj.jf, rj.cf, rj.kf)
        self.lu = (s.Bp, s.Brow, s.gather, s.Lp, s.Li, s.Up, s.Ui, s.perm_r, s.q)
        self._opts = (None, None, None)

    def _options(self, options):
        if self._opts[0] is not options:
            fopt = np.array([options.tol, options.divergence_rate, options.roundoff_factor, options.reuse_near,
                             options.predicted_factor, options.reuse_rate, options.stall_rate])
            iopt = np.array([options.max_iter, options.min_iter_divergence, int(options.predicted_stop),
                             int(options.reuse_near > 0)], dtype=np.int64)
            self._opts = (options, fopt, iopt)
        return self._opts[1], self._opts[2]

    def solve(self, st, h: float, U0, scale, options, pivot_tol: float):
        """Newton from ``U0`` on the element of length ``h`` from ``st``: a
        :class:`~flexmb.dynamics.solve.newton.NewtonResult` on plain convergence, else None (module docstring)."""
        system, rj = self.system, self.rj
        cm, te = system.cm, system.te
        nb = self.dims[0]
        if cm.jnt_drives:
            from flexmb.dynamics.elements.joints import drive_targets

            tgt = drive_targets(cm, st.t + h * te.tau_c)[0]
        else:
            tgt = rj._zeros.get(te.p)
            if tgt is None:
                tgt = rj._zeros[te.p] = np.zeros((rj.nj, 6, te.p))
        fopt, iopt = self._options(options)
        U = np.empty(self.n)
        hist = np.empty(options.max_iter)
        t0 = _time.perf_counter()
        out = newton_element(te.E, te.D, float(h), st.x, st.R, st.pi.reshape(nb, 6), *self.model,
                             st.s, st.lam, st.Rr, st.acc, *self.joints, tgt, *self.laws, *self.dims,
                             *self.lu, pivot_tol, np.ascontiguousarray(U0, dtype=float),
                             np.ascontiguousarray(scale, dtype=float), fopt, iopt, U, hist)
        status, k, rate, n_res, n_jac, n_fac, err, worst, n_ev = out
        system.n_eval += n_ev
        system.t_eval += _time.perf_counter() - t0
        if status > ROUNDOFF:
            log.debug("compiled Newton: status %d at iteration %d; the general loop takes the element", status, k)
            return None
        return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, _MESSAGES[status],
                            hist[:k].tolist())


def _backend(factor, n: int):
    """The :class:`~flexmb.dynamics.solve.linsolve.Refactor` that ``factor`` (a run's ``factor`` method or
    a backend) uses for ``n`` unknowns, or None."""
    from flexmb.dynamics.solve.dense_solve import SmallFirst
    from flexmb.dynamics.solve.linsolve import Refactor

    b = getattr(getattr(factor, "__self__", None), "solver", factor)
    if type(b) is SmallFirst:
        if n <= b.dense_max:
            return None
        b = b.inner
    return b if type(b) is Refactor else None


def fast_newton(system, st, h: float, factor, options):
    """``solve(U0, scale, options) -> NewtonResult | None``: the compiled Newton loop for this
    element, or None when the run does not qualify (module docstring)."""
    if not ENABLED:
        return None
    pat = system.pattern
    if pat is None:
        return None
    n = system.lay.size
    reuse = options.reuse
    if reuse == "auto":
        reuse = "element" if n >= options.reuse_min_unknowns else "none"
    if reuse != "none":
        return None
    cm, te = system.cm, system.te
    rj = rigid_joints(cm, te)
    if rj is None or not rj.whole:
        return None
    b = _backend(factor, n)
    if b is None or b._s is None:
        return None
    from flexmb.dynamics.solve.csc_pattern import _same_pattern

    tpl = pat._template
    hit = system.__dict__.get("_rigid_newton")
    if hit is None or hit.pat is not pat or hit.s is not b._s or hit.rj is not rj:
        if not (_same_pattern(tpl, *b._key) and rj.fits_pattern(pat, te.p, 1)
                and tuple(pat.shapes[0])[:2] == (rj.grp.n, te.p)):
            return None
        hit = system._rigid_newton = RigidNewton(system, rj, pat, b._s)
    elif not (tpl.indptr is b._src[0] and tpl.indices is b._src[1]) and not _same_pattern(tpl, *b._key):
        return None
    pivot_tol = b.pivot_tol
    return lambda U0, scale, opts: hit.solve(st, h, U0, scale, opts, pivot_tol)
