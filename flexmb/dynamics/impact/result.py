"""``fm.impact``: one impact solved at a model's initial state (no time marching), and its result.

Use it for what Wittenburg's chapter 6 computes: the velocity jumps of a struck mechanism, its
internal hinge impulses, the impulse-response of a chain, a latch closing.  The model's prescribed
impulses (all of them, whatever their ``time``) and its contacts that are closed (``|g| <=`` the
model's assembly tolerance x size) and approaching are solved together
(:func:`flexmb.dynamics.impact.solve.solve_impact`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.impact.geometry import ContactSet, ImpulseSet
from flexmb.dynamics.impact.solve import ImpactOutcome, after_impact
from flexmb.errors import ModelError


@dataclass
class ImpactResult:
    """The impact: ``outcome`` (:class:`~flexmb.dynamics.impact.solve.ImpactOutcome`), and by name

    * ``velocity_before``, ``velocity_after``, ``angular_velocity_before``, ``angular_velocity_after``:
      ``{body: (3,)}`` the body frame origin's velocity and the angular velocity (inertial);
    * ``modal_rate_before``, ``modal_rate_after``: ``{flexible body: (nm,)}``;
    * ``contact_impulse``: ``{contact: P}`` normal impulses [N s] (zero where a closed contact separates;
      a contact at FE nodes: the sum over its nodes);
    * ``node_impulse``: ``{contact: {node: P}}`` the normal impulse [N s] at each node of a contact at FE
      nodes that took part (``Contact(..., nodes=)``);
    * ``friction_impulse``: ``{contact: (3,)}`` tangential (Coulomb) impulses on body_b, inertial [N s]
      (summed over the nodes);
    * ``joint_impulse``: ``{joint: (force (3,), moment (3,))}`` [N s, N m s], the impulse of A on B,
      moment about B's origin, in frame A's components (like the joint reactions);
    * ``kinetic_energy_before``, ``kinetic_energy_after``, ``energy_lost`` (contacts) and ``work``
      (the prescribed impulses) [J]; ``rounds``: impact rounds (:mod:`flexmb.dynamics.impact.events`).
    """

    outcome: ImpactOutcome
    velocity_before: dict
    velocity_after: dict
    angular_velocity_before: dict
    angular_velocity_after: dict
    modal_rate_before: dict
    modal_rate_after: dict
    contact_impulse: dict
    joint_impulse: dict
    kinetic_energy_before: float
    kinetic_energy_after: float
    energy_lost: float
    work: float
    rounds: int
    #: ``{contact: (3,)}`` tangential impulses [N s] (inertial; zero for frictionless contacts)
    friction_impulse: dict
    #: ``{body: (3,)}`` the body frame origins and ``{body: (3, 3)}`` rotations at the impact
    position: dict
    rotation: dict
    #: ``{contact: {node: P}}`` [N s]: the contacts at FE nodes, per node
    node_impulse: dict

    def point_velocity(self, body: str, point, after: bool = True) -> NDArray:
        """Velocity ``(3,)`` of the body-frame point ``point`` (relative to the body's reference point,
        rigid motion of the body frame) after (or before) the impact."""
        v = (self.velocity_after if after else self.velocity_before)[body]
        om = (self.angular_velocity_after if after else self.angular_velocity_before)[body]
        return v + np.cross(om, self.rotation[body] @ np.asarray(point, dtype=float))


def _body_outputs(rec, cm, st):
    vals = rec.node_values(st)
    names = [b.name for b in cm.model.bodies]
    modal = {k.split("/", 1)[1]: np.array(v) for k, v in vals.extra.items() if k.startswith("modal_rate/")}
    return ({n: vals.vel[i].copy() for i, n in enumerate(names)}, {n: vals.om[i].copy() for i, n in enumerate(names)},
            modal, {n: vals.pos[i].copy() for i, n in enumerate(names)}, {n: vals.rotm[i].copy() for i, n in enumerate(names)})


def _per_contact(cs, points: NDArray, values: NDArray) -> dict:
    """``{contact: value}`` summed over each contact's points ``points (k,)`` (values ``(k, ...)``)."""
    out: dict = {}
    for k, v in zip(points, values):
        name = cs.names[k]
        out[name] = out[name] + v if name in out else (float(v) if np.ndim(v) == 0 else np.array(v, dtype=float))
    return out


def _per_node(cs, out: ImpactOutcome) -> dict:
    """``{contact: {node: P}}`` of the points at FE nodes in the impact."""
    res: dict = {}
    for k, P in zip(out.contacts, out.P):
        if cs.node[k] >= 0:
            res.setdefault(cs.names[k], {})[int(cs.node[k])] = float(P)
    return res


def impact(model, t0: float = 0.0) -> ImpactResult:
    """Solve the impact of ``model`` at its initial state at ``t0`` [s]: its prescribed impulses and
    its closed, approaching contacts; see :class:`ImpactResult`.  A model with neither, or with
    initially interpenetrating contacts, is a ModelError."""
    from flexmb.dynamics.io.recorder import Recorder
    from flexmb.dynamics.system import compile_model, initial_state
    from flexmb.dynamics.time_elements import time_element
    from flexmb.dynamics.impact.events import check_gaps, resolve

    cm = compile_model(model)
    st, w_minus = initial_state(cm, t0)
    cs, imps = ContactSet(cm), ImpulseSet(cm)
    if not cs.m and not imps.m:
        raise ModelError("impact: the model has neither impulses nor contacts; give Model(..., impulses=[fm.Impulse(...)]) "
                         "or contacts=[fm.Contact(...)]")
    check_gaps(cm, cs, st)
    p = imps.generalized(cm, st, np.arange(imps.m)) if imps.m else None
    out, rounds = resolve(cm, cs, st, w_minus, p)
    rec = Recorder(cm, time_element(1))
    vb, ob, qb, pos, rotm = _body_outputs(rec, cm, st)
    va, oa, qa, _, _ = _body_outputs(rec, cm, after_impact(cm, st, out.w_plus))
    names = [j.name for j in model.joints]
    return ImpactResult(
        outcome=out, velocity_before=vb, velocity_after=va, angular_velocity_before=ob, angular_velocity_after=oa,
        modal_rate_before=qb, modal_rate_after=qa,
        contact_impulse=_per_contact(cs, out.contacts, out.P), rounds=rounds, node_impulse=_per_node(cs, out),
        friction_impulse=_per_contact(cs, out.contacts, out.friction_impulse),
        joint_impulse={n: (out.joint_impulse[j, :3].copy(), out.joint_impulse[j, 3:].copy()) for j, n in enumerate(names)},
        kinetic_energy_before=out.T_minus, kinetic_energy_after=out.T_plus, energy_lost=out.energy_lost, work=out.work,
        position=pos, rotation=rotm)
