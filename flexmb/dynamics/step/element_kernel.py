"""The compiled element of a rigid model: :func:`rigid_element`, stages 1-3 of a warm element (predict, solve,
end values) in one compiled call of the very kernels of those stages; its caller and where it applies:
:mod:`flexmb.dynamics.step.compiled_element`.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)
from flexmb.dynamics.march.kernels import extrapolate
# (the rotation predictor's own kernel: this module strings that stage's kernels together)
from flexmb.dynamics.march.rotation_predictor import _predict_theta
from flexmb.dynamics.node.stage import rigid_end_node
from flexmb.dynamics.solve.fused_element import gauss_origins
from flexmb.dynamics.solve.fused_newton import newton_rigid, side_of
from flexmb.dynamics.solve.packing import v1, v2

__all__ = ["rigid_element"]


@jit_kernel
def rigid_element(h, x, R, pi, js, lam, Rr, acc, tgt, vals, pivot_tol, scale, fopt, iopt, U, hist,
                  Fr, Fw, Ir, Iw, Jw, Br, M,
                  Pe, Pi, end, Up, x_prev, pi_prev, s_prev, lam_prev, P, Dinv, om0, bw, guard, guard_abs, U0,
                  jpos, jmom, near, far, xa, Ra, Ba, xb, Rb, Bb, xe, pie, Re, se, lame, Rre, acce, new_pi,
                  Er, EIr, EIw, EM):  # pragma: no cover - compiled
    """Predict, solve and end values of a warm element of a rigid model (module docstring).

    Newton's arguments are :func:`~flexmb.dynamics.solve.fused_newton.newton_rigid`'s without the predictor
    (``x (nb, 3)``, ``R (nb, 3, 3)``, ``pi (nb, 6)``, ``js, lam, Rr, acc`` the start node's, ``U (n,)``,
    ``hist`` written; the packed constants ``Fr .. M``).  The predictor's: the extrapolation matrices ``Pe
    (p, p + 1)``, ``Pi (p, p)``, the time element's end row ``end (p + 1,)``, the previous element's
    unknowns ``Up (n,)`` and start node ``x_prev (nb, 3)``, ``pi_prev (nb, 6)``, ``s_prev (nj, 3)``,
    ``lam_prev (nj, 6)``, the rotation predictor's ``P``, ``Dinv``, the node angular velocities ``om0 (nb,
    3)``, the bodies' velocity slot ``bw`` and its guards; the predictor is written into ``U0 (n,)``.  The
    joints' slots with end values ``jpos``, ``jmom`` (positions, multipliers).  The end node's
    (:func:`~flexmb.dynamics.node.stage.rigid_end_node`): the polar tolerances ``near``, ``far``, the sides'
    frames ``xa .. Bb`` and the outputs ``xe .. new_pi``, its packed constants ``Er, EIr, EIw, EM``
    (:attr:`~flexmb.dynamics.node.stage.EndNodePlan.packed`).

    Then B's origins of the joints at the Gauss points
    (:func:`~flexmb.dynamics.solve.fused_element.gauss_origins`, as the record asks for them).

    Returns newton_rigid's ``(status, iterations, rate, n_res, n_jac, n_fac, err, worst, n_eval)``, whether
    the end node was computed (a plain status and a polished rotation) and the Gauss points' origins ``(nj,
    p, 3)``.  (The end node's values, which the energy audit and the record read, stay a call of their own:
    their kernels take the node's frames read-only, one compiled signature with every other node.)"""
    d = v1(Ir, M[0])
    nb, nj, p, jsl, off, slots = d[0], d[1], d[2], d[3], d[4], d[8]
    e = v1(EIr, EM[0])
    bth, jphi = e[0], e[1]
    pos_slots, mom_slots = v1(EIw, EM[1]), v1(EIw, EM[2])
    om = nb * p * slots
    for i in range(U0.size):
        U0[i] = 0.0
    Ug0, Jv0 = U0[:om].reshape((nb, p, slots)), U0[off:].reshape((nj, p, jsl))
    Ugp, Jvp = Up[:om].reshape((nb, p, slots)), Up[off:].reshape((nj, p, jsl))
    # 1. predict (marching.predict after an element, then predict_rotations)
    extrapolate(Pe, Pi, end, Ugp, Ug0, pos_slots, x_prev, bth, mom_slots, pi_prev, pi)
    extrapolate(Pe, Pi, end, Jvp, Jv0, jpos, s_prev, jphi, jmom, lam_prev, lam)
    _predict_theta(P, Dinv, h, om0, Ugp, Ug0, bth, bw, guard, guard_abs)
    # 2. solve
    out = newton_rigid(h, x, R, pi, js, lam, Rr, acc, tgt, vals, pivot_tol, U0, scale, fopt, iopt, U, hist,
                       Fr, Fw, Ir, Iw, Jw, Br, M)
    xg = np.empty((nj, p, 3))
    if out[0] > 1:  # (fused_newton.ROUNDOFF) not a plain convergence: the stages one by one
        return out, False, xg
    # 3. end values (node.stage.end_node)
    ok = rigid_end_node(end, U[:om].reshape((nb, p, slots)), x, pi, R, U[off:].reshape((nj, p, jsl)), jpos, js,
                        jmom, lam, Rr, acc, near, far, xa, Ra, Ba, xb, Rb, Bb, xe, pie, Re, se, lame, Rre, acce,
                        new_pi, Er, EIr, EIw, EM)
    if not ok:
        return out, False, xg
    # the record's B origins at the Gauss points (FusedEvaluator.gauss_xb)
    xg = gauss_origins(v2(Fw, M[1]), x, R, U[:om].reshape((nb, p, slots)), v1(Ir, M[8]), side_of(Fr, Ir, M[18:25]),
                       nj, p)
    return out, True, xg
