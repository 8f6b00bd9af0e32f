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
``"converged to round-off"``.  Anything else (a non-finite residual, a position taken for a structural
zero that is not, a pivot failing the threshold test, increments that stall or diverge, no
convergence) returns a status that makes :func:`compiled_newton` answer None, and
:meth:`~flexmb.dynamics.solve.evaluation.ElementSystem.newton` then runs the general loop from the same
predictor: the singular passages, rank-deficient corrections, step halving and diagnostics are
untouched.  Nothing the general loop reads is modified by an abandoned attempt.  Drive targets and load
values (functions of time only) are evaluated once per element.

Where it applies (:func:`compiled_newton`): a built pattern, ``NewtonOptions.reuse`` resolving to
``"none"`` (below ``reuse_min_unknowns``, 2000 unknowns by default; ``reuse_near`` as given) or to
``"element"`` (``"auto"`` from ``reuse_min_unknowns`` on; ``"steps"``, which carries the factorization
over to the next element, keeps the general loop), and the run's backend a ``Refactor`` that has
analysed this pattern (a ``SmallFirst`` wrapper above its dense threshold is looked through).  The first
element of a pattern runs here too: :meth:`~flexmb.dynamics.solve.fused.FusedEvaluator.newton` records
the pattern and factors the predictor's Jacobian first.  Dense-LU sizes (<= 64 unknowns) and other
backends keep the general loop.  Counters: ``ElementSystem.n_eval`` counts the kernel's
evaluations; its ``t_eval`` takes the whole call (factorizations included).
"""
from __future__ import annotations

import logging
import time as _time

import numpy as np

from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)
# the general loop's own compiled pieces (CSC values, refactorization, increments): the same expressions
from flexmb.dynamics.layout import JOINT_SLOTS, _scatter_values
from flexmb.dynamics.solve.fused_element import whole_element
from flexmb.dynamics.solve.fused_modal import no_modal
from flexmb.dynamics.solve.newton import NewtonResult, contraction_rate, scaled_increment
from flexmb.dynamics.solve.packing import IR, IW, JW, extend, pack, v1, v2, v3
from flexmb.dynamics.solve.refactor_lu import refactor_numeric, refactor_solve
from flexmb.errors import SingularMatrixError

log = logging.getLogger(__name__)

#: statuses of :func:`newton_element`
CONVERGED, ROUNDOFF = 0, 1
NOT_FINITE, LOST_ZERO, PIVOT, STALLED, DIVERGING, NO_CONVERGENCE = 2, 3, 4, 5, 6, 7
#: the messages of the plain outcomes
MESSAGES = {CONVERGED: "converged", ROUNDOFF: "converged to round-off"}


@jit_kernel
def newton_element(h, te_t, body, mod, sl, sa, sb, mp, jt, loads, springs,
                   nb, nbm, nj, p, jsl, slm, off, nvr, nvm, n_entries, dest, n_dropped,
                   Bp, Brow, gather, Lp, Li, Up, Ui, perm_r, q, pivot_tol,
                   U0, scale, fopt, iopt, U, hist):  # pragma: no cover - compiled
    """Newton on the internal unknowns of one element (module docstring).

    ``U0 (n,)`` predictor, ``scale (n,)``; ``fopt = (tol, divergence_rate, roundoff_factor,
    reuse_near, predicted_factor, reuse_rate, stall_rate)``, ``iopt = (max_iter,
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


#: rows of newton_rigid's M: the sizes, the evaluator's constants, the pattern's and the LU structure's
_N_PIECES = 77


class FusedNewton:
    """The arrays of :func:`newton_element` that depend on the model, the pattern and the kept LU
    structure only (built once per pattern and structure, :func:`compiled_newton`)."""

    def __init__(self, system, fe, pat, s) -> None:
        from flexmb.dynamics.elements.joints import SLOTS

        te, lay = system.te, system.lay
        self.system, self.fe, self.pat, self.s = system, fe, pat, s
        self.n = lay.size
        self.rigid = fe.nbm == 0  # no modal bodies: newton_rigid (fewer arrays to unbox per call)
        if self.rigid:
            self.dims = (fe.nb, fe.nj, te.p, JOINT_SLOTS, lay.joint_off, fe.nv[0], pat.n_entries, pat._dest,
                         pat._dropped.size)
        else:
            self.dims = (fe.nb, fe.nbm, fe.nj, te.p, JOINT_SLOTS, fe.slots_m, lay.joint_off, fe.nv[0], fe.nv[1],
                         pat.n_entries, pat._dest, pat._dropped.size)
        self.lu = (s.Bp, s.Brow, s.gather, s.Lp, s.Li, s.Up, s.Ui, s.perm_r, s.q)
        self.consts = (fe.te_t, SLOTS, fe.sa, fe.sb)
        self._packed = (None, None)  # (key, packing) of newton_rigid
        self._opts = (None, None, None)
        #: (the run's linear solver, the options, the backend they resolve to): compiled_newton's lookup
        self.key = (None, None, None)
        #: ``(status, iteration)`` of the last :meth:`solve`
        self.status = (None, 0)

    def _options(self, options):
        if self._opts[0] is not options:
            element = options.reuse_mode(self.n) == "element"
            fopt = np.array([options.tol, options.divergence_rate, options.roundoff_factor, options.reuse_near,
                             options.predicted_factor, options.reuse_rate, options.stall_rate])
            # newton_solve's ``late`` (the residual-only evaluation is always at hand here)
            iopt = np.array([options.max_iter, options.min_iter_divergence, int(options.predicted_stop),
                             int(not element and options.reuse_near > 0), int(element)], dtype=np.int64)
            self._opts = (options, fopt, iopt)
        return self._opts[1], self._opts[2]

    def packed(self) -> tuple:
        """:func:`newton_rigid`'s packed constants (:func:`.packing.pack`), built again when the evaluator's
        layout-dependent constants change (:meth:`~.fused.FusedEvaluator.arguments_constants`)."""
        fe, lay = self.fe, self.system.lay
        key = fe.arguments_constants(lay)
        if self._packed[0] is None or self._packed[0][0] is not key[0] or self._packed[0][1] is not key[1]:
            # the evaluator's and the pattern's pieces once per pattern and layout, kept on the evaluator: a
            # loop built again for fresh pivots (Refactor.repivot) appends only its LU structure's
            base = fe.newton_base
            if base is None or base[0] is not self.pat or base[1] is not key[0] or base[2] is not key[1]:
                d = self.dims
                sizes = np.array([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[8], fe.slots], dtype=np.int64)
                pieces = [(IR, sizes)] + fe.rigid_pieces(lay) + [(JW, d[7])]
                base = fe.newton_base = (self.pat, key[0], key[1], pack(pieces))
            lu = [(k, a) for k, a in zip((IW, JW, JW, IW, JW, IW, JW, IW, IW), self.lu)]
            packing = extend(base[3], lu)
            assert packing[-1].shape[0] == _N_PIECES, packing[-1].shape
            self._packed = (key, packing)
        return self._packed[1]

    def solve(self, st, h: float, U0, scale, options, pivot_tol: float):
        """Newton from ``U0`` on the element of length ``h`` from ``st``: a
        :class:`~flexmb.dynamics.solve.newton.NewtonResult` on plain convergence, else None (module docstring)."""
        system, fe = self.system, self.fe
        if self.rigid:
            packed = self.packed()
            tgt, vals = fe.element_values(st, h)
        else:
            body, mod, jt, loads = fe.arguments(st, h, system.lay)
        fopt, iopt = self._options(options)
        U = np.empty(self.n)
        hist = np.empty(options.max_iter)
        # one compiled signature whatever the caller's flags: the predictor a writable copy (as the compiled
        # element's, which writes it in compiled code: flexmb.dynamics.step.compiled_element), the scales a
        # read-only view (flexmb.dynamics.kernels.frozen written out: ~1 us against frozen's ~10 us)
        U0 = np.array(U0, dtype=float)
        scale = np.ascontiguousarray(scale, dtype=float).view()
        scale.flags.writeable = False
        t0 = _time.perf_counter()
        if self.rigid:
            out = newton_rigid(float(h), st.x, st.R, st.pi.reshape(fe.nb, 6), st.s, st.lam, st.Rr, st.acc, tgt, vals,
                               pivot_tol, U0, scale, fopt, iopt, U, hist, *packed)
        else:
            te_t, sl, sa, sb = self.consts
            out = newton_element(float(h), te_t, body, mod, sl, sa, sb, fe.mp, jt, loads, fe.springs, *self.dims,
                                 *self.lu, pivot_tol, U0, scale, fopt, iopt, U, hist)
        status, k, rate, n_res, n_jac, n_fac, err, worst, n_ev = out
        self.status = (status, k)
        system.n_eval += n_ev
        system.n_residual_only += n_ev - n_jac  # the kernel's evaluations without a Jacobian
        system.t_eval += _time.perf_counter() - t0
        if status > ROUNDOFF:
            log.debug("compiled Newton: status %d at iteration %d; the general loop takes the element", status, k)
            return None
        return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, MESSAGES[status],
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


def loop_backend(factor, n: int, options):
    """The :class:`~flexmb.dynamics.solve.linsolve.Refactor` the compiled loop would run with for ``n``
    unknowns under ``options`` (a :class:`~flexmb.dynamics.solve.newton.NewtonOptions`), or None where
    the loop does not apply: reuse ``"steps"`` (the factorization carried over between elements lives
    in ``newton_solve``) or another backend."""
    if options.reuse_mode(n) not in ("none", "element"):
        return None
    return _backend(factor, n)


def loop_for(fe, system, factor, options):
    """The :class:`FusedNewton` of the element system's pattern for the run's ``factor`` and the Newton
    ``options`` (built again for a new pattern or LU structure; its ``key[2]`` the backend), or None where
    the compiled loop does not apply (no pattern yet, another backend, a reuse across elements)."""
    pat = system.pattern
    if pat is None:
        return None
    hit = system.__dict__.get("_fused_newton")
    # the backend found for the run's solver and these options, kept with the loop's arrays (a run's
    # ``factor`` is a new bound method at every access: the solver it calls is the key)
    owner = getattr(getattr(factor, "__self__", None), "solver", factor)
    if hit is not None and hit.key[0] is owner and hit.key[1] is options and hit.pat is pat:
        b = hit.key[2]
    else:
        b = loop_backend(factor, system.lay.size, options)
    if b is None or b._s is None:
        return None
    tpl = pat._template
    if hit is None or hit.pat is not pat or hit.s is not b._s:
        from flexmb.dynamics.solve.csc_pattern import same_pattern

        if not same_pattern(tpl, *b._key):
            return None
        hit = system._fused_newton = FusedNewton(system, fe, pat, b._s)
    elif not (tpl.indptr is b._src[0] and tpl.indices is b._src[1]):
        from flexmb.dynamics.solve.csc_pattern import same_pattern

        if not same_pattern(tpl, *b._key):
            return None
    hit.key = (owner, options, b)
    return hit


def compiled_newton(fe, system, st, h: float, U0, scale, factor, options, retried: bool = False):
    """Newton on the element by the compiled loop: a :class:`~flexmb.dynamics.solve.newton.NewtonResult`,
    or None where the loop does not apply or declines (module docstring).  A predictor whose matrix fails
    the kept pivots' test is given fresh pivots and solved again (once: ``retried``)."""
    hit = loop_for(fe, system, factor, options)
    if hit is None:
        return None
    b = hit.key[2]
    r = hit.solve(st, h, U0, scale, options, b.pivot_tol)
    if r is None and hit.status == (PIVOT, 1) and not retried:
        # the predictor's matrix fails the kept pivots' test: fresh pivots for it, as the general loop's
        # first factorization takes them (Refactor.__call__), and the loop again from the same predictor,
        # the general loop's iterations (before: the general loop took the element, and the next one
        # built the loop's arrays again; the IFToMM pendulum, 5 elements of its 320, ~2 ms each)
        with np.errstate(all="ignore"):
            F, J = system.evaluate(U0, st, h)
        if not (np.all(np.isfinite(F)) and np.all(np.isfinite(J.data))):
            return None
        try:
            b.repivot(J)
        except SingularMatrixError:
            return None  # (the general loop meets it again and takes its rank-deficient branch)
        return compiled_newton(fe, system, st, h, U0, scale, factor, options, retried=True)
    return r
