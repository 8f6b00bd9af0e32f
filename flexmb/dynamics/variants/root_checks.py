"""Roots of a time element that are not the motion, refused like a Newton failure (the step is halved).

Newton's root of the element equations is accepted only if it resolves the motion: no body turns, and no
joint's relative rotation turns, by more than half a revolution within the element
(:func:`largest_turn`), and no joint ends half a turn away from its bodies (:func:`flipped_joint`: the
rotation equation ``axial((Rr1 exp phi)^T R_A^T R_B) = 0`` also vanishes at a half-turn mismatch), and its
energy balance does not jump (:func:`refusal`, :mod:`flexmb.dynamics.energy_audit`: a root with more
than half the energy it exchanged unaccounted for, Simeon's slider-crank).
docs/theory.md sections 4 and 10; tests/test_fast_rotation.py, tests/test_nothing_lost.py,
tests/test_energy_audit.py.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import JOINT_SLOTS, JPHI, Layout
from flexmb.dynamics.march.rotation_predictor import largest_turn as _largest, moved
from flexmb.dynamics.step.outcome import ElementOutcome, Refusal
from flexmb.dynamics.system import CompiledModel, ElementStart
from flexmb.dynamics.time_elements import TimeElement


#: largest rotation of a body, or of a joint's relative rotation, within one time element [rad]
#: (:func:`largest_turn`)
MAX_TURN = np.pi


def largest_turn(cm: CompiledModel, lay: Layout, te: TimeElement, U: NDArray):
    """``(angle, index, what)`` of the largest rotation increment over the element, at its internal
    points and its end, of a body (``theta`` at slot ``BTH`` of each body type that has one) or of a
    joint's relative rotation (``phi``), relative to the element's start, when it exceeds
    :data:`MAX_TURN`; else None (``what``: e.g. ``"body 'bob'"``).  A Newton root with a body turning by
    more than half a revolution within one element is an alias of the motion, not a resolution of it (an
    absurd load of 1e30 N on a 1 kg pendulum at h = 0.05: roots with 1e29 m/s and 1e58 J of kinetic
    energy, impossible by the work of the load), and is refused like a Newton failure.  So is a joint's
    ``phi`` beyond half a revolution: ``exp(phi)`` is periodic, and a root with ``phi`` off by 2 pi
    satisfies the rotation equation while a torsional spring or a drive on the accumulated angle sees a
    jump of 2 pi (a rotor at 150 rad/s on a revolute with a spring, p = 3, h = 8e-3, before the cold
    predictor's ``phi`` was made consistent: 1e9 J of spurious energy)."""
    worst = None
    for grp in cm.groups:
        bth = getattr(grp, "BTH", None)
        if bth is None or len(grp.bodies) == 0:
            continue
        # |theta| at the internal points and the end, the largest (compiled: rotation_predictor.largest_turn)
        ang, kb, kp = _largest(te.end, lay.group_view(U, grp.bodies, grp.slots), bth)
        if ang > MAX_TURN and (worst is None or ang > worst[0]):
            b = int(grp.bodies[kb])
            worst = (float(ang), int(lay.body_start[b] + min(kp, te.p - 1) * lay.body_slots[b] + bth),
                     f"body {cm.model.bodies[b].name!r}")
    if cm.nj:
        ang, j, kp = _largest(te.end, lay.joint_view(U), JPHI)
        if ang > MAX_TURN and (worst is None or ang > worst[0]):
            worst = (float(ang), int(lay.joint_off + (j * te.p + min(kp, te.p - 1)) * JOINT_SLOTS + JPHI),
                     f"joint {cm.model.joints[j].name!r} (relative rotation)")
    return worst


#: a converged element whose rotation unknowns moved farther than this from the predictor [rad] has its
#: joints' rotations checked against their bodies' at the end node (:func:`flipped_joint`)
FLIP_CHECK = 0.5


def rotation_slots(lay: Layout, cm: CompiledModel) -> NDArray:
    """Indices of the rotation unknowns (bodies' ``theta``, joints' ``phi``) of ``lay`` (kept in
    ``cm.cache.rotation_slots`` by the layout's order and size: they depend on its structure only)."""
    key = (lay.p, lay.size)
    hit = cm.cache.rotation_slots.get(key)
    if hit is None:
        idx = [np.zeros(0, dtype=np.int64)]
        probe = np.zeros(lay.size)
        for grp in cm.groups:
            bth = getattr(grp, "BTH", None)
            if bth is not None and len(grp.bodies):
                probe[:] = 0.0
                lay.group_view(probe, grp.bodies, grp.slots)[..., bth:bth + 3] = 1.0
                idx.append(np.flatnonzero(probe))
        if cm.nj:
            probe[:] = 0.0
            lay.joint_view(probe)[..., JPHI:JPHI + 3] = 1.0
            idx.append(np.flatnonzero(probe))
        hit = cm.cache.rotation_slots[key] = frozen(np.unique(np.concatenate(idx)))
    return hit


def flipped_joint(cm: CompiledModel, lay: Layout, U0: NDArray, U: NDArray, st_end: ElementStart):
    """``(joint, index, angle)`` of the joint whose relative rotation at the element's end is farthest
    from its bodies' when that exceeds pi / 2; else None.  The rotation equation
    ``axial((Rr1 exp phi)^T R_A^T R_B) = 0`` also holds when the mismatch is a half turn (``axial`` of a
    rotation by pi is zero): a root there is not the motion (a torsional spring sees an angle off by pi;
    a rotor at 150 rad/s, p = 3, h = 8e-3, with a relative rotation predicted inconsistently with its
    bodies: 8.7 rad of angle error and 950 J of spurious energy).  Newton reaches it only from far, so the
    check (two node poses) runs only when a rotation unknown moved more than :data:`FLIP_CHECK` from the
    predictor ``U0``."""
    if not cm.nj:
        return None
    rs = rotation_slots(lay, cm)
    if rs.size == 0 or moved(U, U0, rs) <= FLIP_CHECK:  # max |U - U0| over the rotations, compiled
        return None
    _, Ra = cm.att_a.node_pose(cm, st_end)
    _, Rb = cm.att_b.node_pose(cm, st_end)
    Q = np.einsum("nji,njk,nkl->nil", st_end.Rr, Ra, Rb)  # Rr^T Ra^T Rb: identity on the motion
    cos = np.clip(0.5 * (np.trace(Q, axis1=1, axis2=2) - 1.0), -1.0, 1.0)
    j = int(np.argmin(cos))
    if cos[j] >= 0.0:
        return None
    return j, int(lay.joint_off + j * lay.p * JOINT_SLOTS + JPHI), float(np.arccos(cos[j]))


def refusal(system, U0: NDArray, out: ElementOutcome) -> Refusal | None:
    """The :class:`~flexmb.dynamics.step.outcome.Refusal` of a converged element ``out`` (one piece, solved
    from the predictor ``U0``) whose root is not the motion: a body or a joint turning by more than half
    a revolution (:func:`largest_turn`), a joint half a turn away from its bodies (:func:`flipped_joint`),
    an energy balance that jumps (:meth:`flexmb.dynamics.energy_audit.ElementAudit.refused`, when the run
    has set ``system.audit``); else None, with the element's work in ``out.last.work``.  Every element
    passes them, whole or a piece of a halved step."""
    cm, lay, te = system.cm, system.lay, system.te
    piece = out.last
    turn = largest_turn(cm, lay, te, piece.U)
    if turn is not None:
        return Refusal(turn[1], f"converged, but {turn[2]} turns by {turn[0]:.3g} rad within the element, more "
                                f"than half a revolution: the step cannot resolve that motion")
    flip = flipped_joint(cm, lay, U0, piece.U, out.end)
    if flip is not None:
        return Refusal(flip[1], f"converged, but joint {cm.model.joints[flip[0]].name!r} ends with its relative "
                                f"rotation {flip[2]:.3g} rad away from its bodies' (a spurious root of the rotation "
                                f"equation)")
    audit = getattr(system, "audit", None)
    if audit is None:
        return None
    bad = audit.refused(system, piece.start, piece.h, piece.U, out.end)
    if bad is None:
        piece.work = audit.work
        return None
    return Refusal(*bad)
