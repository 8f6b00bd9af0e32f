"""Output recording of a run: node values, internal-point values, impulses for the node reactions,
body-type outputs and Newton statistics, assembled into a :class:`~flexmb.Solution`."""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.node.constraints import project_node
from flexmb.dynamics.elements.forces import potential_energy
from flexmb.dynamics.elements.joints import consistent_transport, transport_moment
from flexmb.dynamics.layout import JLAM, JNB, JQ, Layout
from flexmb.dynamics.node.projection import attachment_velocities, joint_rates
from flexmb.dynamics.node.reactions import element_record, node_reactions, node_record, with_start_impulse
from flexmb.dynamics.system import CompiledModel, ElementStart
from flexmb.dynamics.time_elements import TimeElement
from flexmb.results.solution import Solution


log = logging.getLogger(__name__)


class Recorder:
    """Collects node and internal-point outputs."""

    def __init__(self, cm: CompiledModel, te: TimeElement):
        self.cm, self.te = cm, te
        self.t, self.pos, self.rotm, self.vel, self.om = [], [], [], [], []
        self.srel, self.rrel, self.vrel, self.lam = [], [], [], []
        self.ke, self.pe = [], []
        self.mom = []
        self.body_extra = {}
        self.ti, self.force, self.moment = [], [], []
        # every node incl. those of halved steps: time, node_record (reactions), 1 if output
        self.imp_t, self.imp, self.imp_out, self.imp_el = [], [], [], []
        self.stats = {k: [] for k in ("t_start", "h", "iterations", "rate", "factorizations", "residual", "retries")}
        self._first6 = (cm.vel_off[:, None] + np.arange(6)).reshape(-1)

    def node(self, st: ElementStart) -> NDArray:
        """Record an output node; returns the projected body velocities ``w (nv,)``."""
        cm = self.cm
        nv = project_node(cm, st)
        w = nv.w
        self.t.append(st.t)
        # the scheme's own momenta at the node: p = pi + Lambda (equal to pi after the gauge reset)
        self.mom.append(nv.p[self._first6].reshape(cm.nb, 6))
        rn = nv.frames.rigid if nv.frames is not None else None
        if rn is not None:  # rigid-only model: compiled (dynamics/rigid/node.py)
            pos, rotm, vel, om, ke, pe_g = rn.output(st, w, cm.gravity)
        else:
            pos = np.zeros((cm.nb, 3))
            rotm = np.zeros((cm.nb, 3, 3))
            vel = np.zeros((cm.nb, 3))
            om = np.zeros((cm.nb, 3))
            ke = 0.0
            for grp in cm.groups:
                wg = w[grp.vel_cols]
                pos[grp.bodies], rotm[grp.bodies], vel[grp.bodies], om[grp.bodies] = grp.frame_output(st, wg)
                ke += grp.kinetic_energy(st, wg)
                if hasattr(grp, "node_output"):  # body-type outputs (modal coordinates, interfaces)
                    for key, value in grp.node_output(st, wg).items():
                        self.body_extra.setdefault(key, []).append(value)
        self.pos.append(pos)
        self.rotm.append(rotm)
        self.vel.append(vel)
        self.om.append(om)
        self.ke.append(ke)
        self.pe.append(potential_energy(cm, st, None if rn is None else pe_g))
        if cm.nj:
            fr = nv.frames
            if fr.rigid is not None:  # compiled (dynamics/rigid/node.py)
                qdot = fr.rigid.rates(fr, w)[:, :6]
            else:
                qdot = joint_rates(fr, attachment_velocities(fr.map_a, w, cm.nj),
                                   attachment_velocities(fr.map_b, w, cm.nj))[:, :6]
            self.srel.append(st.s.copy())
            self.rrel.append(st.acc.copy())
            self.vrel.append(qdot)
            self.lam.append((st.lam if st.lam_end is None else st.lam_end).copy())
            self._impulse(st, nv, qdot, 1.0)
        return w

    def subnode(self, st: ElementStart) -> None:
        """A node inside a halved step: not output, but its impulses count for the reactions."""
        if self.cm.nj:
            self._impulse(st, project_node(self.cm, st), None, 0.0)

    def _impulse(self, st, nv, qdot, output: float) -> None:
        self.imp_t.append(st.t)
        self.imp.append(node_record(self.cm, st, nv, qdot))
        self.imp_out.append(output)

    def internal(self, te: TimeElement, st: ElementStart, h: float, lay: Layout, U: NDArray, xb: NDArray | None = None):
        """Record an element: its internal points and, for the reactions, ``xb (nj, p, 3)`` B's origins there."""
        self.ti.extend(st.t + h * te.c)
        if not self.cm.nj:
            return
        Jv = lay.joint_view(U)
        mu = None
        if xb is not None and consistent_transport(te):  # the impulse polynomial of the consistent transport
            mu = transport_moment(te, h, Jv[..., JLAM:JLAM + 3], xb - xb[:, :1], Jv[..., JNB:JNB + 3])[0]
        rec = element_record(te, Jv[..., JLAM:JLAM + 6], xb, mu)
        start_imp = getattr(st, "start_impulse", None)  # the symmetric projection's impulse at the start node
        if start_imp is not None and te.p > 1:
            rec = with_start_impulse(te, rec, *start_imp)
        self.imp_el.append(rec)
        for i in range(te.p):
            self.force.append(Jv[:, i, JQ:JQ + 3].copy())
            self.moment.append(Jv[:, i, JQ + 3:JQ + 6].copy())

    def reactions(self):
        """Node reactions ``(force, moment)`` (n_out, nj, 3) of the output nodes
        (:func:`~flexmb.dynamics.node.reactions.node_reactions`, with the model's current constraint set)."""
        nj = self.cm.nj
        return node_reactions(self.cm, np.array(self.imp_t), np.array(self.imp),
                              np.array(self.imp_el).reshape(-1, nj, 6 * self.te.p - 3), np.array(self.imp_out) > 0.5,
                              self.te)

    def solution(self, meta: dict) -> Solution:
        cm = self.cm
        nj = cm.nj
        kw = {}
        if nj:
            fn, mn = self.reactions()
            kw = dict(
                joint_names=tuple(j.name for j in cm.model.joints),
                joint_types=tuple(j.kind for j in cm.model.joints),
                joint_rel_position=np.array(self.srel), joint_rel_rotation=np.array(self.rrel),
                joint_rel_velocity=np.array(self.vrel), joint_force=fn, joint_moment=mn,
                joint_force_internal=np.array(self.force).reshape(-1, nj, 3),
                joint_moment_internal=np.array(self.moment).reshape(-1, nj, 3), joint_multiplier=np.array(self.lam),
            )
        stats = {k: np.array(v) for k, v in self.stats.items()}
        modal = {k: np.array(v) for k, v in self.body_extra.items()}
        return Solution(
            t=np.array(self.t), body_names=tuple(b.name for b in cm.model.bodies),
            body_position=np.array(self.pos), body_rotation=np.array(self.rotm),
            body_velocity=np.array(self.vel), body_angular_velocity=np.array(self.om),
            t_internal=np.array(self.ti), kinetic_energy=np.array(self.ke), potential_energy=np.array(self.pe),
            stats=stats, meta=meta, extra={"body_momentum": np.array(self.mom), **modal}, **kw,
        )
