"""The whole time element in one compiled call (the fused evaluator's kernel:
:class:`flexmb.dynamics.solve.fused.FusedEvaluator` per evaluation, :mod:`.fused_newton` inside its
compiled Newton loop): the rigid bodies' kernels, the modal bodies' (:func:`.fused_modal.modal_body`),
then :func:`.fused_kernels.forces` and :func:`.fused_joints.joints` (glue only; the laws are their own
modules')."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.bodies import modal_kernels as mk
from flexmb.dynamics.bodies import rigid_kernels as K
from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)
from flexmb.dynamics.solve.fused_joints import joints
from flexmb.dynamics.solve.fused_kernels import forces, side_pose
from flexmb.dynamics.solve.fused_modal import modal_body, part_pose


@jit_kernel
def whole_element(h, te_t, body, mod, Ug, Um, Jv, sl, sa, sb, mp, jt, loads, springs, rb, rm, r, res, jac, vals,
                  valsm, buf):
    """A whole time element: the rigid bodies' kinematics and rows (Jacobian values into ``vals``, the
    pattern's first block), the modal bodies' (``valsm``, the next block), the force elements, the
    joints (values into ``buf`` after the bodies' blocks).  ``body = (x1, R1, pi1, mass, J0, g, bsl, bs,
    slots)``, ``mod`` the modal group's (:mod:`.fused_modal`); ``Ug``, ``Um`` the groups' unknowns, ``rb
    (nb, p, slots)``, ``rm``, ``r (nj, p, 30)`` the bodies' and joints' rows (views of ``res``); ``mp``
    the sides' modal parts (:func:`.fused_joints.joints`).  Returns the number of values written."""
    E, D = te_t[0], te_t[1]
    x1, R1, pi1, mass, J0, g, bsl, bs, slots = body
    n, p = Ug.shape[0], Ug.shape[1]
    R, T, UX, UR, UT = (np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)), np.empty((n, p, 3)),
                        np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)))
    K.rigid_kinematics(E, x1, R1, Ug, bsl[0], bsl[1], R, T, UX, UR, UT)
    K.rigid_residual(D, h, x1, pi1, Ug, R, T, mass, J0, g, bsl, rb, vals, jac)
    mkin = modal_body(E, D, h, g, mod, Um, rm, valsm, jac)
    X = Ug[:, :, bsl[0]:bsl[0] + 3].copy()
    o = vals.size + valsm.size
    o = forces(h, p, X, R, T, Ug, bsl[3], bsl[2], bs, slots, E, loads, springs, res, jac, buf, o)
    if Jv.shape[0]:
        o = joints(h, p, te_t, X, R, T, UX, UR, UT, Ug, bsl, bs, slots, sa, sb, mp, mkin, jt, Jv, sl, r, res, jac,
                   buf, o)
    return o


@jit_kernel
def gauss_origins(E, x1, R1, Ug, bsl, sb, nj, p):
    """B's origins of the joints at the Gauss points ``(nj, p, 3)``."""
    n = Ug.shape[0]
    R, T, UX, UR, UT = (np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)), np.empty((n, p, 3)),
                        np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)))
    K.rigid_kinematics(E, x1, R1, Ug, bsl[0], bsl[1], R, T, UX, UR, UT)
    X = Ug[:, :, bsl[0]:bsl[0] + 3].copy()
    return side_pose(sb, X, R, T, E, np.bool_(False), nj, p)[0]


@jit_kernel
def gauss_origins_modal(E, x1, R1, Ug, bsl, sb, x1m, R1m, q1m, Um, mb, nj, p):
    """:func:`gauss_origins` of a model with modal bodies: B's entries on rigid bodies and the ground
    (``sb``), then those on modal bodies (``mb``, the side's modal part, :mod:`.fused_modal`) from the modal
    group's kinematics (start values ``x1m``, ``R1m``, ``q1m``, unknowns ``Um (n, p, slots)``)."""
    n = Ug.shape[0]
    R, T, UX, UR, UT = (np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)), np.empty((n, p, 3)),
                        np.empty((n, p, 3, 3)), np.empty((n, p, 3, 3)))
    K.rigid_kinematics(E, x1, R1, Ug, bsl[0], bsl[1], R, T, UX, UR, UT)
    X = Ug[:, :, bsl[0]:bsl[0] + 3].copy()
    x, Rs, _ = side_pose(sb, X, R, T, E, np.bool_(False), nj, p)
    nm_b, nm = Um.shape[0], q1m.shape[1]
    mR, mT, mUR, mUT = (np.empty((nm_b, p, 3, 3)), np.empty((nm_b, p, 3, 3)), np.empty((nm_b, p, 3, 3)),
                        np.empty((nm_b, p, 3, 3)))
    mUX, mXc, mUQ, mQc = np.empty((nm_b, p, 3)), np.empty((nm_b, p, 3)), np.empty((nm_b, p, nm)), np.empty((nm_b, p, nm))
    mk.modal_kinematics(E, x1m, R1m, q1m, Um, nm, mR, mT, mUX, mUR, mUT, mUQ, mXc, mQc)
    part_pose(mb, mXc, mR, mT, mQc, E, np.bool_(False), x, Rs)
    return x
