"""The residual and Jacobian of one time element, and Newton on it: :class:`ElementSystem`, with the
evaluator chosen once when it is built.

Two evaluators compute the same equations with the same compiled laws (bodies, attachments, joints,
forces); they differ in who places the values:

* :class:`GeneralEvaluator` (any body types): the body-type groups' contract
  (:mod:`flexmb.dynamics.bodies`), the force elements and the joints
  (:mod:`flexmb.dynamics.elements`), Jacobian blocks collected by
  :class:`~flexmb.dynamics.layout.Triplets` in Python;
* :class:`~flexmb.dynamics.solve.fused.FusedEvaluator` (models of rigid and modal bodies whose loads
  are constants or functions of time; :meth:`~flexmb.dynamics.solve.fused.FusedEvaluator.applies`):
  the whole element in one compiled call, and Newton's loop compiled around it
  (:mod:`flexmb.dynamics.solve.fused_newton`) for the sizes where that pays.

The first evaluation of a pattern always records its indices through the general evaluator; every
later one writes values only (``Triplets(pattern=...)``).  With the fused evaluator that evaluation and
the first factorization happen before the first element's Newton, which the compiled loop then runs too
(:meth:`~flexmb.dynamics.solve.fused.FusedEvaluator.newton`).
"""
from __future__ import annotations

import copy
import logging
import time as _time

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.elements.attachments import ElementKin
from flexmb.dynamics.elements.forces import force_residual
from flexmb.dynamics.elements.joints import joint_residual, unpack_joints
from flexmb.dynamics.layout import JLAM, JNA, JNB, JOINT_SLOTS, JPHI, JQ, JS, Layout, Pattern, ReplayLayout, Triplets
from flexmb.dynamics.solve.fused import FusedEvaluator
from flexmb.dynamics.solve.newton import newton_solve
from flexmb.memo import Memo, digest

log = logging.getLogger(__name__)

JOINT_EQUATIONS = {JS: "relative position", JPHI: "relative rotation", JLAM: "multiplier definition",
                   JQ: "joint law", JNA: "attachment velocity a", JNB: "attachment velocity b"}


#: patterns with more recorded entries are not kept (:func:`recorded_pattern`; 8 kept patterns of 50,000
#: entries take ~20 MB)
PATTERN_MEMO_ENTRIES = 50_000
_PATTERNS = Memo(8)


def recorded_pattern(trip: Triplets, n: int) -> Pattern:
    """``Pattern(trip, n)`` with the CSC structure of every position built: a new object over the arrays
    kept for the same recorded indices and block shapes (:mod:`flexmb.memo`; every run of a model of the
    same structure records the same ones: X3, 7,806 entries, 0.45 ms -> 0.1 ms for the digest).  The
    pattern's later changes (dropped structural zeros, positions taken back) rebind its own attributes
    only (:class:`~flexmb.dynamics.layout.Pattern` never writes its arrays)."""
    if sum(r.size for r in trip.rows) > PATTERN_MEMO_ENTRIES:
        return Pattern(trip, n)
    rows, cols = ((np.concatenate(trip.rows), np.concatenate(trip.cols)) if trip.rows
                  else (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    key = digest("pattern", n, tuple(trip.shapes), rows, cols)

    def make():
        pat = Pattern(trip, n)
        _ = pat.nnz  # (builds the structure of every position: Pattern.__getattr__)
        return pat

    return copy.copy(_PATTERNS.get(key, make))


def make_layout(cm, p: int, selection=None, replay: bool = True) -> Layout:
    """The element layout of order ``p`` for the constraint selection ``selection`` (``lay.selection``,
    which the joint laws read: :class:`~flexmb.dynamics.node.selection.Selection`; None: the model's
    full set); ``replay``: with index replay (:class:`~flexmb.dynamics.layout.ReplayLayout`)."""
    from flexmb.dynamics.node.selection import Selection

    cls = ReplayLayout if replay else Layout
    lay = cls(cm.body_slots(), cm.group_of, cm.nj, p)
    lay.selection = selection if selection is not None else Selection.full(cm)
    return lay


class GeneralEvaluator:
    """The element through the body types' contract and the elements' modules (any body types)."""

    name = "general"

    def triplets(self, system, U: NDArray, st, h: float, trip: Triplets) -> NDArray:
        """Residual ``(n,)``; the Jacobian blocks into ``trip``."""
        cm, lay = system.cm, system.lay
        ek = system.element_kin(U, st, h)
        res = np.zeros(lay.size)
        for grp, kin in zip(cm.groups, ek.groups):
            grp.residual(ek, kin, lay.group_view(res, grp.bodies, grp.slots), trip, cm.gravity)
        force_residual(cm, ek, res, trip)
        joint_residual(cm, ek, unpack_joints(lay, system.te, st, U), res, trip)
        return res

    def gauss_xb(self, system, st, h: float, U: NDArray, lay: Layout) -> NDArray:
        """B's origins of the joints at the Gauss points ``(nj, p, 3)`` (``lay``: a layout whose index
        record is not Newton's)."""
        lay.rewind(True)  # the same index requests at every element: replayed
        return system.cm.att_b.pose(system.element_kin(U, st, h, lay=lay), "gauss").x

    def newton(self, system, st, h: float, U0, scale, factor, options):
        """No compiled Newton loop: None (:meth:`ElementSystem.newton` runs the general one)."""
        return None


class ElementSystem:
    """Residual and Jacobian of one time element for a compiled model (pattern built once).

    ``evaluator``: ``"auto"`` (the fused evaluator where it applies, :meth:`FusedEvaluator.applies`,
    else the general one) or ``"general"``; chosen here, once."""

    def __init__(self, cm, te, evaluator: str = "auto", selection=None):
        if evaluator not in ("auto", "general"):
            raise ValueError(f"evaluator={evaluator!r}; use 'auto' or 'general'")
        self.cm = cm
        self.te = te
        #: the layout of the run's constraint selection (``selection``; None: the model's full set)
        self.lay = make_layout(cm, te.p, selection)
        self.pattern: Pattern | None = None
        self.n_eval = 0
        self.t_eval = 0.0
        #: counters for tests and profiles (observed, not steering): the elements whose Newton the
        #: evaluator's compiled loop answered / the general loop ran (:meth:`newton`), and the
        #: residual-only evaluations (:meth:`residual`, and the compiled loop's own)
        self.newton_calls = {"compiled": 0, "general": 0}
        self.n_residual_only = 0
        #: step halvings (t, h, reason), repeated as WARNING when they end in a failure
        self.halvings: list = []
        self.general = GeneralEvaluator()
        #: the evaluator of this model (:mod:`flexmb.dynamics.solve.fused` or the general one)
        self.evaluator = FusedEvaluator(cm, te) if evaluator == "auto" and FusedEvaluator.applies(cm, te) \
            else self.general
        log.debug("element evaluator: %s", self.evaluator.name)

    def element_kin(self, U: NDArray, st, h: float, lay: Layout | None = None) -> ElementKin:
        lay = self.lay if lay is None else lay
        ek = ElementKin(te=self.te, h=h, st=st, lay=lay, groups=[], t_gauss=st.t + h * self.te.c,
                        t_cons=st.t + h * self.te.tau_c)
        for grp in self.cm.groups:
            ek.groups.append(grp.unpack(ek, lay.group_view(U, grp.bodies, grp.slots)))
        return ek

    def triplets(self, U: NDArray, st, h: float, jacobian: bool = True) -> tuple[NDArray, Triplets]:
        """Residual ``(n,)`` and the Jacobian blocks (none when ``jacobian`` is False) at ``U``; the
        evaluation that builds the pattern records its indices through the general evaluator."""
        self.lay.rewind(bool(jacobian))
        trip = Triplets(pattern=self.pattern, jacobian=jacobian)
        ev = self.evaluator if (trip.values_only or not jacobian) else self.general
        return ev.triplets(self, U, st, h, trip), trip

    def evaluate(self, U: NDArray, st, h: float, jacobian: bool = True):
        """Residual ``(n,)`` and Jacobian (CSC, ``(n, n)``; ``None`` when ``jacobian`` is False) at ``U``.

        The residual does not depend on ``jacobian`` (bit for bit): a residual-only evaluation skips
        the Jacobian values, which Newton does not need while it reuses a factorization."""
        t0 = _time.perf_counter()
        if self.pattern is None:
            jacobian = True  # the first evaluation builds the pattern
        res, trip = self.triplets(U, st, h, jacobian)
        J = None
        if jacobian:
            if self.pattern is None:
                self.pattern = recorded_pattern(trip, self.lay.size)
                self._drop_structural_zeros(U, st, h, trip.values())
                # the values of this model's evaluator from the start (the fused evaluator's equal the
                # general one's to round-off): a run resumed from a checkpoint repeats the uninterrupted run
                res, trip = self.triplets(U, st, h, True)
            J = self.pattern.matrix(trip.values())
        self.n_eval += 1
        self.t_eval += _time.perf_counter() - t0
        return res, J

    def _drop_structural_zeros(self, U: NDArray, st, h: float, vals: NDArray) -> None:
        """Drop from the pattern the Jacobian positions that are zero at ``U`` and at two random
        states near it (structural zeros of the dense element blocks: about 45 % of the stored
        entries of a rigid chain); the pattern takes back any of them that turns out nonzero later
        (:class:`~flexmb.dynamics.layout.Pattern`).  Skipped for models with user functions (drives,
        force callbacks), which are not called at made-up states."""
        cm = self.cm
        if cm.jnt_drives or any(ld.callback or ld.timefn for ld in cm.forces.loads):
            return
        pat = self.pattern
        nonzero = pat.unique_values(vals) != 0
        rng = np.random.default_rng(20261125)
        for _ in range(2):
            Ur = U + 0.1 * (1.0 + np.abs(U)) * rng.standard_normal(U.size)
            with np.errstate(all="ignore"):
                _, tr = self.triplets(Ur, st, h)
                v = pat.unique_values(tr.values())
            nonzero |= (v != 0) | ~np.isfinite(v)
        pat.keep_only(nonzero)

    def residual(self, U: NDArray, st, h: float) -> NDArray:
        """Residual only (see :meth:`evaluate`)."""
        self.n_residual_only += 1
        return self.evaluate(U, st, h, jacobian=False)[0]

    def newton(self, st, h: float, U0: NDArray, scale: NDArray, factor, options):
        """Newton on the element of length ``h`` from ``st`` (:func:`~flexmb.dynamics.solve.newton.newton_solve`),
        or the evaluator's compiled loop of the same iteration where it has one and answers."""
        r = self.evaluator.newton(self, st, h, U0, scale, factor, options)
        if r is not None:
            self.newton_calls["compiled"] += 1
            return r
        self.newton_calls["general"] += 1
        return newton_solve(lambda U: self.evaluate(U, st, h), U0, scale, factor, options,
                            residual=lambda U: self.residual(U, st, h))

    def gauss_xb(self, st, h: float, U: NDArray, lay: Layout) -> NDArray:
        """B's origins of the joints at the Gauss points ``(nj, p, 3)`` of the element ``U``."""
        return self.evaluator.gauss_xb(self, st, h, U, lay)

    def describe(self, index: int) -> str:
        """Name the equation/unknown at global ``index``: body or joint, point, equation."""
        lay, cm = self.lay, self.cm
        if index < 0 or index >= lay.size:
            return "unknown location"
        if index < lay.joint_off:
            b, i, slot = lay.locate_body(index)
            eqs = cm.groups[cm.group_of[b]].equations
            group = max(k for k in eqs if k <= slot)
            return f"body {cm.model.bodies[b].name!r}, {eqs[group]} (component {slot - group}), internal point {i}"
        j, rem = divmod(index - lay.joint_off, lay.p * JOINT_SLOTS)
        i, slot = divmod(rem, JOINT_SLOTS)
        group = max(k for k in JOINT_EQUATIONS if k <= slot)
        return f"joint {cm.model.joints[j].name!r}, {JOINT_EQUATIONS[group]} (component {slot - group}), internal point {i}"
