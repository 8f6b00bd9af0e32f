"""Stages 1-3 of a warm element of a rigid model in one compiled call: a backend of the step chosen when
the run starts (:func:`element_stage`), not another implementation of it.

For a model of rigid bodies on joints that the fused evaluator serves (:mod:`flexmb.dynamics.solve.fused`)
and whose end node the compiled node stage computes (:class:`flexmb.dynamics.node.stage.EndNodePlan`),
each stage of an element is one compiled kernel and the Python between them (the stages' functions, their
arguments, the results' objects: ~150 Python calls) costs more than the kernels themselves (the IFToMM
pendulum, ``benchmarks/README.md``).  :func:`~flexmb.dynamics.step.element_kernel.rigid_element` calls the very kernels of those stages in their
order:

    predict     :func:`flexmb.dynamics.march.kernels.extrapolate` (the bodies, then the joints), then
                :func:`flexmb.dynamics.march.rotation_predictor._predict_theta` (what
                :func:`~flexmb.dynamics.march.marching.predict` and
                :func:`~flexmb.dynamics.march.rotation_predictor.predict_rotations` call after an element
                they extrapolate)
    solve       :func:`flexmb.dynamics.solve.fused_newton.newton_rigid` (the compiled Newton loop)
    end values  :func:`flexmb.dynamics.node.stage.rigid_end_node`
    after them  B's origins of the joints at the Gauss points for the record of the reactions
                (:func:`flexmb.dynamics.solve.fused_element.gauss_origins`, ``ElementPiece.xb``)

with the same arguments, so that the element's predictor, iterate and end node are those of the stages
one by one, bit for bit (``tests/test_compiled_element.py``).  Where anything is not plain (no previous
element to extrapolate, a singular start node, a Newton status other than converged, a rotation the
end node does not polish) :class:`RigidElement` answers None and :func:`flexmb.dynamics.step.advance.advance`
runs the stages one by one from the start: the compiled loop's fallbacks, the singular-node variant and
the step halving are theirs.  The end-node check (:func:`flexmb.dynamics.variants.singular_node.check_end`)
and the root checks run in Python after it, as for every element.
"""
from __future__ import annotations

import time as _time

import numpy as np

from flexmb.dynamics.march import marching
from flexmb.dynamics.march.kernels import extrapolation_matrices, warm_ratio
# (the rotation predictor's own matrices: the compiled element strings that stage's kernels together)
from flexmb.dynamics.march.rotation_predictor import GUARD, GUARD_ABS, _rotation_matrices
from flexmb.dynamics.node.stage import EndNodePlan, end_arrays, end_start
from flexmb.dynamics.node.stage_modal import stage_plan
from flexmb.dynamics.solve.compiled_loop import count_evaluations, loop_for, newton_result
from flexmb.dynamics.solve.fused_newton import ROUNDOFF
from flexmb.dynamics.step.element_kernel import rigid_element
from flexmb.dynamics.step.outcome import ElementPiece
from flexmb.dynamics.variants import singular_node

__all__ = ["RigidElement", "element_stage", "rigid_element"]


class RigidElement:
    """Stages 1-3 of a warm element in one call of :func:`rigid_element` for the element system ``system``
    of a rigid model (:func:`element_stage` says where it applies); called by
    :func:`flexmb.dynamics.step.advance.advance` as ``Stages.element``."""

    def __init__(self, system, plan: EndNodePlan) -> None:
        cm = system.cm
        self.plan = plan
        self.grp = plan.grp
        self.cols = np.ascontiguousarray(self.grp.vel_cols[:, 3:6])
        self.jpos, self.jmom = marching.JOINT_END_SLOTS
        self.nb, self.nj = cm.nb, cm.nj

    def __call__(self, system, st, h: float, w, prev, scale, factor, options):
        """``(U0, outcome)`` of the element of length ``h`` [s] from ``st`` after the element ``prev``
        (node velocities ``w (nv,)``, Newton's scales, the run's ``factor`` and
        :class:`~flexmb.dynamics.simulate.SimulationOptions`), or None: the stages one by one (module
        docstring)."""
        ratio = warm_ratio(prev, h)
        if ratio is None:
            return None
        fe = system.evaluator
        loop = loop_for(fe, system, factor, options.newton)
        if loop is None or not loop.rigid:
            return None
        cm, lay, te = system.cm, system.lay, system.te
        if singular_node.node_self_stresses(cm, st, lay.selection) is not None:
            return None
        packed = loop.packed()
        tgt, vals = fe.element_values(st, h)
        fopt, iopt = loop.option_arrays(options.newton)
        Pe, Pi = extrapolation_matrices(te, ratio)
        P, Dinv = _rotation_matrices(te, ratio)
        st_prev = prev.start
        nb, n = self.nb, loop.n
        U, U0, hist = np.empty(n), np.empty(n), np.empty(options.newton.max_iter)
        a, b = self.plan.a, self.plan.b
        (xa, Ra, Ba), fa = a.frames()
        (xb, Rb, Bb), fb = b.frames()
        x, pi, R, s, lam, Rr, acc, new_pi = end_arrays(cm)
        scale = np.ascontiguousarray(scale, dtype=float).view()
        scale.flags.writeable = False
        t0 = _time.perf_counter()
        out, ok, xg = rigid_element(
            float(h), st.x, st.R, st.pi.reshape(nb, 6), st.s, st.lam, st.Rr, st.acc, tgt, vals, loop.key[2].pivot_tol,
            scale, fopt, iopt, U, hist, *packed,
            Pe, Pi, te.end, prev.U, st_prev.x, st_prev.pi.reshape(nb, 6), st_prev.s, st_prev.lam, P, Dinv,
            w[self.cols], self.grp.BW, GUARD, GUARD_ABS, U0,
            self.jpos, self.jmom, marching.POLAR_TOL[0], marching.POLAR_TOL[1], xa, Ra, Ba, xb, Rb, Bb,
            x, pi, R, s, lam, Rr, acc, new_pi, *self.plan.packed)
        if out[0] > ROUNDOFF or not ok:
            return None  # (the stages one by one count their own evaluations)
        count_evaluations(system, out, t0)
        system.newton_calls["compiled"] += 1
        piece = ElementPiece(st, h, U, newton_result(out, U, hist), xb=xg)
        end = end_start(cm, st, h, self.plan, x, R, new_pi, s, Rr, acc, lam, fa, fb)

        def end_values(U):  # (the end check's, where the end node is singular)
            return marching.end_values(cm, lay, te, st, h, U)

        return U0, singular_node.check_end(system, piece, end, U0, scale, options, end_values)


def element_stage(system) -> RigidElement | None:
    """The :class:`RigidElement` of the element system ``system`` (an
    :class:`~flexmb.dynamics.solve.evaluation.ElementSystem`), or None where the stages run one by one: a
    model that is not one group of rigid bodies on joints served by the fused evaluator, or a time element
    with the consistent transport (whose end values have no compiled node stage)."""
    from flexmb.dynamics.elements.joints import consistent_transport
    from flexmb.dynamics.solve.fused import FusedEvaluator

    cm, te = system.cm, system.te
    if consistent_transport(te) or not isinstance(system.evaluator, FusedEvaluator) or system.evaluator.nbm:
        return None
    plan = stage_plan(cm)  # (an EndNodePlan: one rigid group holding every body in order, on joints)
    return RigidElement(system, plan) if isinstance(plan, EndNodePlan) else None
