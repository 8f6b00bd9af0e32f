"""Output recording of a run: node values, internal-point values, impulses for the node reactions,
body-type outputs and Newton statistics, assembled into a :class:`~flexmb.Solution`."""
from __future__ import annotations

import logging
import operator
from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.modal_residual import state_extras
from flexmb.dynamics.node.constraints import project_node
from flexmb.dynamics.elements.forces import potential_energy
from flexmb.dynamics.energy_audit import contributors, track_node, work_fields
from flexmb.dynamics.modal_range import RangeMonitor
from flexmb.dynamics.elements.joints import consistent_transport, transport_moment
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import JLAM, JNB, JQ, Layout
from flexmb.dynamics.node.projection import body_rates
from flexmb.dynamics.node.reactions import element_record, node_reactions, node_record, with_start_impulse
from flexmb.dynamics.node.stage_modal import stage_plan
from flexmb.dynamics.system import CompiledModel, ElementStart
from flexmb.dynamics.time_elements import TimeElement
from flexmb.results.solution import Solution


log = logging.getLogger(__name__)


def _state_arrays(st: ElementStart) -> tuple:
    """The node state's arrays: x, R, pi, s, lam, acc and the body-type extras that are state
    (:func:`~flexmb.dynamics.bodies.modal_residual.state_extras`; none for a node without extras)."""
    if st.extra:
        return (st.x, st.R, st.pi, st.s, st.lam, st.acc, *state_extras(st))
    return st.x, st.R, st.pi, st.s, st.lam, st.acc


def _state_bytes(arrays: tuple):
    """The bytes of ``arrays`` (C order) joined: one C-level comparison instead of an ``array_equal`` per
    array."""
    try:  # arrays (the usual case)
        return b"".join([a.tobytes() for a in arrays])
    except AttributeError:  # e.g. a number among the body-type extras
        return tuple((np.shape(a), np.ascontiguousarray(a).tobytes()) for a in arrays)


def _state_key(st: ElementStart) -> tuple:
    """A snapshot of the node state's arrays (:func:`_state_arrays`: the arrays themselves and their
    bytes) that :func:`_same_state` finds equal exactly when the node holds the same array objects with
    the same bits: the node values' cache key (bitwise: a state rewritten in place to other values is a
    miss; an array replaced by another object is a miss too)."""
    arrays = _state_arrays(st)
    return arrays, _state_bytes(arrays)


def _same_state(st: ElementStart, key: tuple) -> bool:
    """Whether the node ``st`` still holds the state of ``key`` (:func:`_state_key`): the same array
    objects (identity, C-level) holding the same bytes (~1 us for a small rigid model)."""
    arrays = _state_arrays(st)
    return (len(arrays) == len(key[0]) and all(map(operator.is_, arrays, key[0]))
            and _state_bytes(arrays) == key[1])


class Recorder:
    """Collects node and internal-point outputs.

    Its list attributes only grow (a checkpoint appends their new rows,
    :mod:`flexmb.dynamics.io.checkpoint`), except those named in :attr:`REPLACED`."""

    #: list attributes replaced at every node, not appended to (a checkpoint stores them whole)
    REPLACED = ("energy_span", "worst_jump")

    def __init__(self, cm: CompiledModel, te: TimeElement, selection=None):
        self.cm, self.te = cm, te
        #: the run's constraint selection (:class:`~flexmb.dynamics.node.selection.Selection`; None: the
        #: model's full set), which the node projection reads; the run replaces it on a re-selection
        self.selection = selection
        self.t, self.pos, self.rotm, self.vel, self.om = [], [], [], [], []
        self.srel, self.rrel, self.vrel, self.lam = [], [], [], []
        self.ke, self.pe = [], []
        self.mom = []
        self.body_extra = {}
        self.ti, self.force, self.moment = [], [], []
        # every node incl. those of halved steps: time, node_record (reactions), 1 if output
        self.imp_t, self.imp, self.imp_out, self.imp_el = [], [], [], []
        self.stats = {k: [] for k in ("t_start", "h", "iterations", "rate", "factorizations", "residual", "retries")}
        # energy audit (flexmb.dynamics.energy_audit): cumulative work per contributor at each node (nc,),
        # the run's energy span and the element where the balance jumped most (lists: checkpointed)
        self.audit_labels, self.audit_category = contributors(cm, selection)
        self.work = []
        self.energy_span = []
        self.worst_jump = []
        self._pending = None
        self.range = RangeMonitor(cm)  # modal bodies outside their range (flexmb.dynamics.modal_range)
        self._first6 = (cm.vel_off[:, None] + np.arange(6)).reshape(-1)
        #: the first six velocity columns of every body are all of them, in order (rigid bodies only)
        self._all6 = cm.nv == self._first6.size and bool(np.array_equal(self._first6, np.arange(cm.nv)))
        #: the only body type when it holds every body in order, computes the node frames and the kinetic
        #: energy in one call (``node_frames_energy``) and has no other node outputs; else None
        grp = cm.groups[0] if len(cm.groups) == 1 else None
        self._whole = grp if (grp is not None and getattr(grp, "every_body", False)
                              and hasattr(grp, "node_frames_energy") and not hasattr(grp, "node_output")) else None

    def node_values(self, st: ElementStart) -> SimpleNamespace:
        """The node outputs at ``st`` without recording them: the projection ``nv``
        (:func:`~flexmb.dynamics.node.constraints.project_node`), ``pos``, ``rotm``, ``vel``, ``om``
        (nb, ...), ``ke``, ``pe`` [J] and the body-type outputs ``extra``.  Cached on ``st`` while its
        state arrays are unchanged: the energy audit's acceptance check
        (:mod:`flexmb.dynamics.energy_audit`) and :meth:`node` share one evaluation."""
        hit = getattr(st, "_node_values", None)
        if hit is not None and hit[0] == st.t and _same_state(st, hit[1]):  # the cache hit, ~1 us
            return hit[2]
        key = _state_key(st)
        cm = self.cm
        plan = stage_plan(cm) if cm.nj else None
        fast = plan.node_values(cm, st, self.selection) if plan is not None else None
        extra = {}
        whole = self._whole
        if fast is not None:  # the compiled node stage (flexmb.dynamics.node.stage_modal): the same kernels in one call
            nv, pos, rotm, vel, om, ke, extra = fast
            ke = 0.0 + ke
        elif whole is not None:  # one body type with node_frames_energy, every body in order: its arrays as they are
            nv = project_node(cm, st, sel=self.selection)
            pos, rotm, vel, om, ke = whole.node_frames_energy(st, nv.w.reshape(cm.nb, whole.nv))
            ke = 0.0 + ke
        else:
            pos = np.zeros((cm.nb, 3))
            rotm = np.zeros((cm.nb, 3, 3))
            vel = np.zeros((cm.nb, 3))
            om = np.zeros((cm.nb, 3))
            ke = 0.0
            nv = project_node(cm, st, sel=self.selection)
            w = nv.w
            for grp in cm.groups:  # (compiled per body type: rigid_kernels.rigid_node_output for rigid bodies)
                wg = w[grp.vel_cols]
                frames_energy = getattr(grp, "node_frames_energy", None)
                if frames_energy is not None:
                    pos[grp.bodies], rotm[grp.bodies], vel[grp.bodies], om[grp.bodies], ke_g = frames_energy(st, wg)
                else:
                    pos[grp.bodies], rotm[grp.bodies], vel[grp.bodies], om[grp.bodies] = grp.frame_output(st, wg)
                    ke_g = grp.kinetic_energy(st, wg)
                ke += ke_g
                if hasattr(grp, "node_output"):  # body-type outputs (modal coordinates, interfaces)
                    extra.update(grp.node_output(st, wg))
        pe = potential_energy(cm, st)
        out = SimpleNamespace(nv=nv, pos=pos, rotm=rotm, vel=vel, om=om, ke=float(ke), pe=float(pe), extra=extra)
        st._node_values = (st.t, key, out)
        return out

    def node(self, st: ElementStart) -> NDArray:
        """Record an output node; returns the projected body velocities ``w (nv,)``."""
        cm = self.cm
        vals = self.node_values(st)
        nv = vals.nv
        w = nv.w
        self.t.append(st.t)
        # the scheme's own momenta at the node: p = pi + Lambda (equal to pi after the gauge reset)
        self.mom.append(nv.p.reshape(cm.nb, 6).copy() if self._all6 else nv.p[self._first6].reshape(cm.nb, 6))
        for key, value in vals.extra.items():
            self.body_extra.setdefault(key, []).append(value)
        self.pos.append(vals.pos)
        self.rotm.append(vals.rotm)
        self.vel.append(vals.vel)
        self.om.append(vals.om)
        self.ke.append(vals.ke)
        self.pe.append(vals.pe)
        self._node_work(st.t)
        if self.range.bodies:
            self.range.node(st.t, vals.extra, vals.om, vals.rotm)
        if cm.nj:
            qdot = (nv.rates if nv.rates is not None else body_rates(nv.frames, w))[:, :6]  # (the node stage's)
            self.srel.append(st.s.copy())
            self.rrel.append(st.acc.copy())
            self.vrel.append(qdot)
            self.lam.append((st.lam if st.lam_end is None else st.lam_end).copy())
            self._impulse(st, nv, qdot, 1.0)
        return w

    def node_state(self) -> SimpleNamespace:
        """The last node for ``on_step``: ``t``, ``body_position``, ``body_rotation``, ``body_velocity``,
        ``body_angular_velocity`` (read-only views of the recorded arrays: a callback cannot change the
        results; 4 views, about a microsecond each) and ``kinetic_energy``, ``potential_energy`` [J]."""
        return SimpleNamespace(t=self.t[-1], body_position=frozen(self.pos[-1]),
                               body_rotation=frozen(self.rotm[-1]), body_velocity=frozen(self.vel[-1]),
                               body_angular_velocity=frozen(self.om[-1]), kinetic_energy=self.ke[-1],
                               potential_energy=self.pe[-1])

    # ------------------------------------------------------------------ energy audit
    def add_work(self, work: NDArray | None) -> None:
        """Add an accepted element's (or piece's) work per contributor ``(nc,)`` [J]
        (:func:`flexmb.dynamics.energy_audit.element_work`) to the work since the last node."""
        if work is not None and work.size:
            self._pending = work if self._pending is None else self._pending + work

    def _node_work(self, t: float) -> None:
        """Append the cumulative work at a new node and follow the element's balance jump
        (:func:`flexmb.dynamics.energy_audit.track_node`)."""
        nc = len(self.audit_labels)
        if len(self.work) < len(self.t) - 1:  # a checkpoint of a version without the audit: no work before it
            self.work = [np.zeros(nc)] * (len(self.t) - 1 - len(self.work)) + list(self.work)
        if not nc:  # no work terms (rigid models without drives, loads, dampers)
            self._pending = None
            self.work.append(np.zeros(0))
            track_node(self, t, self.work[-1])
            return
        last = self.work[-1] if self.work else np.zeros(nc)
        cum = last + (self._pending if self._pending is not None else 0.0)
        element_w = np.asarray(cum - last, dtype=float).reshape(nc)
        self._pending = None
        self.work.append(np.asarray(cum, dtype=float).reshape(nc))
        track_node(self, t, element_w)

    def subnode(self, st: ElementStart) -> None:
        """A node inside a halved step: not output, but its impulses count for the reactions."""
        if self.cm.nj:
            self._impulse(st, self.node_values(st).nv, None, 0.0)

    def _impulse(self, st, nv, qdot, output: float) -> None:
        self.imp_t.append(st.t)
        self.imp.append(node_record(self.cm, st, nv, qdot))
        self.imp_out.append(output)

    def internal(self, te: TimeElement, st: ElementStart, h: float, lay: Layout, U: NDArray, xb: NDArray | None = None):
        """Record an element: its internal points and, for the reactions, ``xb (nj, p, 3)`` B's origins there."""
        t, ti = st.t, self.ti  # (Python floats, the same double arithmetic: ~0.5 us against ~4 us in NumPy)
        ti.extend([t + h * c for c in te.c.tolist()])
        if not self.cm.nj:
            return
        Jv = lay.joint_view(U)
        mu = None
        if xb is not None and consistent_transport(te):  # the impulse polynomial of the consistent transport
            mu = transport_moment(te, h, Jv[..., JLAM:JLAM + 3], xb - xb[:, :1], Jv[..., JNB:JNB + 3])
        rec = element_record(te, Jv[..., JLAM:JLAM + 6], xb, mu)
        start_imp = getattr(st, "start_impulse", None)  # the symmetric projection's impulse at the start node
        if start_imp is not None and te.p > 1:
            rec = with_start_impulse(te, rec, *start_imp)
        self.imp_el.append(rec)
        Q = Jv[:, :, JQ:JQ + 6].transpose(1, 0, 2).copy()  # (p, nj, 6): the reactions, one copy
        for i in range(te.p):
            self.force.append(Q[i, :, :3])
            self.moment.append(Q[i, :, 3:])

    def reactions(self, sel=None):
        """Node reactions ``(force, moment)`` (n_out, nj, 3) of the output nodes
        (:func:`~flexmb.dynamics.node.reactions.node_reactions`) for the constraint selection ``sel``
        (default: the recorder's)."""
        nj = self.cm.nj
        return node_reactions(self.cm, np.array(self.imp_t), np.array(self.imp),
                              np.array(self.imp_el).reshape(-1, nj, 6 * self.te.p - 3), np.array(self.imp_out) > 0.5,
                              self.te, sel if sel is not None else self.selection)

    def solution(self, meta: dict, reaction_sel=None) -> Solution:
        """The results so far; the node reactions recovered for the selection ``reaction_sel`` (default:
        the recorder's)."""
        cm = self.cm
        nj = cm.nj
        kw = {}
        if nj:
            fn, mn = self.reactions(reaction_sel)
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
            stats=stats, meta=meta, extra={"body_momentum": np.array(self.mom), **modal, **work_fields(self)}, **kw,
        )
