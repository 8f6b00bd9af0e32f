"""The compiled Newton loop's Python side: its arrays kept per pattern and LU structure
(:class:`FusedNewton`), where it applies (:func:`loop_for`) and the call that answers a
:class:`~flexmb.dynamics.solve.newton.NewtonResult` or declines (:func:`compiled_newton`); the loop itself
is :func:`flexmb.dynamics.solve.fused_newton.newton_element` (its module docstring: what it computes).

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
from typing import NamedTuple

import numpy as np

from flexmb.dynamics.layout import JOINT_SLOTS
from flexmb.dynamics.solve.fused_newton import MESSAGES, PIVOT, ROUNDOFF, newton_element, newton_rigid
from flexmb.dynamics.solve.newton import NewtonResult
from flexmb.dynamics.solve.packing import IR, IW, JW, extend, pack
from flexmb.errors import SingularMatrixError

log = logging.getLogger(__name__)

#: rows of newton_rigid's M: the sizes, the evaluator's constants, the pattern's and the LU structure's
_N_PIECES = 77


class LoopAnswer(NamedTuple):
    """One call of the compiled loop (:meth:`FusedNewton.solve`): the result on plain convergence, else
    None (the caller's general loop takes the element), with the kernel's status (:mod:`.fused_newton`'s
    ``CONVERGED`` ... ``NO_CONVERGENCE``) and the iteration it stopped at (:func:`compiled_newton` retries a
    predictor whose matrix fails the kept pivots' test at iteration 1)."""

    result: NewtonResult | None
    status: int
    iteration: int

    @property
    def pivots_failed_at_once(self) -> bool:
        """The predictor's own matrix failed the kept pivots' test (before any increment)."""
        return self.status == PIVOT and self.iteration == 1


def count_evaluations(system, out, t0: float) -> None:
    """Book a compiled Newton call (its return tuple ``out``, started at ``perf_counter`` ``t0``) in the element
    system's counters: the kernel's evaluations, those without a Jacobian, the call's time."""
    n_jac, n_ev = out[4], out[8]
    system.n_eval += n_ev
    system.n_residual_only += n_ev - n_jac
    system.t_eval += _time.perf_counter() - t0


def newton_result(out, U, hist) -> NewtonResult:
    """The :class:`~flexmb.dynamics.solve.newton.NewtonResult` of a compiled Newton call that ended with a
    plain status (``out``: the kernel's ``(status, iterations, rate, n_res, n_jac, n_fac, err, worst,
    n_eval)``; ``U``, ``hist`` the iterate and the increments it wrote)."""
    status, k, rate, n_res, n_jac, n_fac, err, worst, _ = out
    return NewtonResult(True, U, k, rate, n_res, n_jac, n_fac, err, worst, MESSAGES[status], hist[:k].tolist())


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

    def option_arrays(self, options) -> tuple:
        """``(fopt, iopt)``: the Newton options as the compiled loop reads them (:func:`~.fused_newton.newton_element`),
        kept while ``options`` is the same object."""
        if self._opts[0] is not options:
            element = options.reuse_mode(self.n) == "element"
            fopt = np.array([options.tol, options.divergence_rate, options.roundoff_factor, options.reuse_near,
                             options.predicted_factor, options.reuse_rate, options.stall_rate, options.residual_tol])
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

    def solve(self, st, h: float, U0, scale, options, pivot_tol: float) -> LoopAnswer:
        """Newton from ``U0`` on the element of length ``h`` from ``st``: a :class:`LoopAnswer` (its
        :class:`~flexmb.dynamics.solve.newton.NewtonResult` on plain convergence, else None; module docstring)."""
        system, fe = self.system, self.fe
        if self.rigid:
            packed = self.packed()
            tgt, vals = fe.element_values(st, h)
        else:
            body, mod, jt, loads = fe.arguments(st, h, system.lay)
        fopt, iopt = self.option_arrays(options)
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
        status, k = out[0], out[1]
        count_evaluations(system, out, t0)
        if status > ROUNDOFF:
            log.debug("compiled Newton: status %d at iteration %d; the general loop takes the element", status, k)
            return LoopAnswer(None, status, k)
        return LoopAnswer(newton_result(out, U, hist), status, k)


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
        hit = system._fused_newton = _loop_of(system, fe, pat, b._s, b)
    elif not (tpl.indptr is b._src[0] and tpl.indices is b._src[1]):
        from flexmb.dynamics.solve.csc_pattern import same_pattern

        if not same_pattern(tpl, *b._key):
            return None
    hit.key = (owner, options, b)
    return hit


def _loop_of(system, fe, pat, s, b) -> FusedNewton:
    """The :class:`FusedNewton` of the pattern ``pat`` and the LU structure ``s``: kept on the element system
    for the structures the backend ``b`` keeps (:meth:`~flexmb.dynamics.solve.linsolve.Refactor.alternatives`:
    pivots met before come back, and their loop's packed arrays with them), built where new."""
    kept = system.__dict__.get("_fused_loops")
    if kept is None or kept[0] is not pat:
        kept = system._fused_loops = (pat, {})
    loops = kept[1]
    hit = loops.get(id(s))
    if hit is None or hit.s is not s:
        hit = FusedNewton(system, fe, pat, s)
    live = {id(r) for r in b._recent} | {id(s)}
    for k in [k for k in loops if k not in live]:
        del loops[k]
    loops[id(s)] = hit
    return hit


def compiled_newton(fe, system, st, h: float, U0, scale, factor, options, retried: bool = False):
    """Newton on the element by the compiled loop: a :class:`~flexmb.dynamics.solve.newton.NewtonResult`,
    or None where the loop does not apply or declines (module docstring).  A predictor whose matrix fails
    the kept pivots' test is given fresh pivots and solved again (once: ``retried``)."""
    hit = loop_for(fe, system, factor, options)
    if hit is None:
        return None
    b = hit.key[2]
    ans = hit.solve(st, h, U0, scale, options, b.pivot_tol)
    if ans.result is None and ans.pivots_failed_at_once and not retried:
        # the pivots met before first (Refactor.alternatives: the pendulum's swing back meets its pivots again)
        for s in b.alternatives():
            alt = _loop_of(system, fe, system.pattern, s, b)
            alt.key = hit.key
            ans = alt.solve(st, h, U0, scale, options, b.pivot_tol)
            if ans.result is not None:
                b.use(s)
                system._fused_newton = alt
                return ans.result
            if not ans.pivots_failed_at_once:
                return None  # (the general loop takes the element, as from the structure in use)
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
    return ans.result
