"""Which contacts take part in an impact, and the impact resolved until no closed contact approaches.

* A contact is *closed* when its gap is within ``tol = assembly_tol x model size`` of zero, and it
  takes part in an impact when it also *approaches*: ``v_n < -v_tol``.  Contacts that are closed
  but at rest or separating do not (the *sequential* rule): a row of touching spheres struck at one
  end (Newton's cradle, e = 1) passes the momentum from sphere to sphere, one two-body impact after
  the other, as the experiment shows (the simultaneous solve of all touching contacts would send
  1/3, 2/3, 2/3 of the speed on).
* After each round the contacts are checked again: a contact that approaches now is solved in the
  next round.  When a contact solved before approaches again (a plastic chain, ``e < 1``, whose
  sequence would not end), every closed contact is solved together in one round with Newton's law
  (``v_n+ >= -e v_n-``, with ``v_n- = min(v_n, 0)``), which ends the sequence.
* Friction: the contacts solved in a round that have ``mu > 0`` bring their tangential rows
  (:meth:`~.geometry.ContactSet.tangent_rows`) and are solved with Coulomb's cone (:mod:`.friction`).
* A run whose interpenetration at the start exceeds ``tol`` is refused (ModelError naming the contact,
  the gap and the fix).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.impact.solve import ImpactOutcome, after_impact, kinetic, solve_impact
from flexmb.errors import ConvergenceError, ModelError

#: rounds of sequential impacts before the closed contacts are solved together
MAX_ROUNDS = 64


def gap_tol(cm) -> float:
    """Gap within which a contact counts as closed [m]."""
    return cm.model.assembly_tol * cm.length_scale


def speed_tol(cm, w: NDArray) -> float:
    """Normal speed below which a closed contact counts as at rest [m/s]."""
    return 1e-12 * max(float(np.abs(w).max(initial=0.0)), 1.0)


def check_gaps(cm, cs, st) -> None:
    """ModelError when a contact interpenetrates at ``st`` (a run's start) beyond :func:`gap_tol`."""
    if not cs.m:
        return
    g = cs.geometry(cm, st)[0]
    tol = gap_tol(cm)
    bad = np.nonzero(g < -tol)[0]
    if bad.size:
        same = bad[cs.owner[bad] == cs.owner[bad[0]]]  # the first contact in, its deepest point
        k = int(same[np.argmin(g[same])])
        c = cm.model.contacts[int(cs.owner[k])]
        at = "" if cs.node[k] < 0 else f" at node {int(cs.node[k])} ({same.size} of its nodes in)"
        raise ModelError(f"Contact {c.name!r}: bodies {c.body_a!r} and {c.body_b!r} interpenetrate{at} at t = {st.t:.6g} s "
                         f"(gap {g[k]:.6g} m, tolerance {tol:.3g} m); move {c.body_b!r} by at least {-g[k]:.6g} m "
                         f"along the contact normal, or check point_a/point_b/normal/radius"
                         + ("/nodes" if cs.node[k] >= 0 else ""))


def active_contacts(cm, cs, st, w: NDArray, every_closed: bool = False):
    """``(idx, J)``: the closed contacts at ``st`` that approach with velocities ``w`` (all closed ones
    when ``every_closed``) and their normal-velocity rows ``J (k, nv)``."""
    if not cs.m:
        return np.zeros(0, np.int64), np.zeros((0, cm.nv))
    g, J = cs.normal_rows(cm, st)
    v = J @ w
    closed = g <= gap_tol(cm)
    idx = np.nonzero(closed if every_closed else closed & (v < -speed_tol(cm, w)))[0]
    return idx, J[idx]


def friction_rows(cm, cs, st, idx: NDArray):
    """``(mu, T, t)`` of the contacts ``idx`` for :func:`~.solve.solve_impact`, None when all are frictionless."""
    mu = cs.mu[idx]
    if not np.any(mu > 0):
        return None
    T, t = cs.tangent_rows(cm, st, idx)
    return mu, T, t


def resolve(cm, cs, st, w: NDArray, p: NDArray | None = None, sel=None) -> tuple[ImpactOutcome, int]:
    """The impact at ``st`` from velocities ``w (nv,)`` with a prescribed generalized impulse ``p`` (or
    None), resolved by rounds until no closed contact approaches (module doc); returns the rounds
    combined into one :class:`ImpactOutcome` (impulses and losses summed per contact, ``w_minus``
    the first round's, ``w_plus`` the last's) and the number of rounds.  ``sel``: the joint constraints
    the run keeps (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set)."""
    outs = []
    solved: set = set()
    every = False
    for rounds in range(MAX_ROUNDS + 2):
        idx, J = active_contacts(cm, cs, st, w, every)
        if not idx.size and (p is None or rounds):
            break
        e = cs.e[idx]
        if every:  # the closed contacts together: Newton's law against the approach only
            e = np.where(J @ w < 0.0, e, 0.0)
        out = solve_impact(cm, st, w, idx, J, e, p if not rounds else None, friction=friction_rows(cm, cs, st, idx),
                           sel=sel)
        outs.append(out)
        w = out.w_plus
        if every:
            every = False
            solved = set()
            continue
        again = solved & set(idx.tolist())
        solved |= set(idx.tolist())
        if again or rounds >= MAX_ROUNDS:
            every = True
    else:
        raise ConvergenceError(f"impact at t = {st.t:.6g} s: the contacts still approach after {MAX_ROUNDS} rounds of "
                               f"impacts", time=st.t)
    return combine(cm, st, w, outs), len(outs)


def combine(cm, st, w: NDArray, outs: list) -> ImpactOutcome:
    """Rounds of one impact as one outcome: per contact the summed impulse and loss, the first normal
    velocity before and the last after; joint impulses, work summed.  No rounds: nothing happens to
    the velocities ``w``."""
    if len(outs) == 1:
        return outs[0]
    if not outs:
        z, T = np.zeros(0), kinetic(cm, st, w)
        return ImpactOutcome(w, w.copy(), np.zeros(0, np.int64), z, z, z, np.zeros((0, 0)), np.zeros((cm.nj, 6)), T, T,
                             0.0, z)
    order = sorted({int(k) for o in outs for k in o.contacts})
    pos = {k: i for i, k in enumerate(order)}
    P, loss = np.zeros(len(order)), np.zeros(len(order))
    vm, vp = np.full(len(order), np.nan), np.zeros(len(order))
    Pt, vtm, vtp, tang = (np.zeros((len(order), 2)), np.full((len(order), 2), np.nan), np.zeros((len(order), 2)),
                          np.zeros((len(order), 2, 3)))
    for o in outs:
        for i, k in enumerate(o.contacts):
            a = pos[int(k)]
            P[a] += o.P[i]
            loss[a] += o.loss[i]
            vm[a] = o.v_minus[i] if np.isnan(vm[a]) else vm[a]
            vp[a] = o.v_plus[i]
            Pt[a] += o.P_t[i]  # positions frozen: the same tangents in every round
            vtm[a] = o.vt_minus[i] if np.isnan(vtm[a, 0]) else vtm[a]
            vtp[a], tang[a] = o.vt_plus[i], o.tangent[i]
    return ImpactOutcome(w_minus=outs[0].w_minus, w_plus=outs[-1].w_plus, contacts=np.array(order, dtype=np.int64),
                         P=P, v_minus=vm, v_plus=vp, D=outs[-1].D, joint_impulse=sum(o.joint_impulse for o in outs),
                         T_minus=outs[0].T_minus, T_plus=outs[-1].T_plus, work=sum(o.work for o in outs), loss=loss,
                         constraint_residual=outs[-1].constraint_residual, P_t=Pt, vt_minus=vtm, vt_plus=vtp,
                         tangent=tang)


__all__ = ["gap_tol", "check_gaps", "active_contacts", "friction_rows", "resolve", "combine", "after_impact"]
