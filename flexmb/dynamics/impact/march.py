"""Events in the march: contacts monitored during ``simulate``, impacts located and solved, prescribed
impulses at their times, persistent contacts.  The event state is one object (:class:`EventMonitor`,
``Run.events``), saved by the checkpoint as its own record (:meth:`EventMonitor.state`).

A step (:meth:`EventMonitor.step`, in place of the plain fixed step):

1. the element is shortened to land on the next prescribed impulse's time, and on the first impact
   predicted from each flying contact's gap, normal velocity and normal acceleration ``a_n`` over the last
   element (:func:`~flexmb.dynamics.impact.flight.predict`: exact for a rigid body's free flight under
   constant loads, which the time element integrates exactly: a flight is one element whatever h);
2. it is solved (:meth:`flexmb.dynamics.simulate.Run.solve_element`); when a flying contact (open, or
   closed and leaving) ends the element below ``-tol`` (:func:`~flexmb.dynamics.impact.events.gap_tol`)
   or dips below it inside the element (the gap's cubic Hermite interpolant from the end values, gap and
   gap rate ``J w``, :func:`~flexmb.dynamics.impact.flight.first_crossing`), the event is *located*: the
   element is re-solved from the same start with the length ``h*`` where the cubic on the bracket first
   goes in, kept inside the bracket (bisection when it has no such root or the bracket did not halve),
   until ``|g| <= tol`` (0-2 extra element solves per event, counted in ``meta["event_solves"]``);
3. the shortened element is committed (its end node recorded with the velocities *before* the impact),
   then the node's impacts are resolved (:func:`~flexmb.dynamics.impact.events.resolve`: the closed,
   approaching contacts and the due impulses), the state jumps to ``pi = M w+`` and the march restarts
   from it (no extrapolation across the jump);
4. persistent contact (no Zeno chatter): when a contact's rebound after an impact would rise less than
   the gap tolerance, ``v+^2 / (2 |a_n|) < tol`` (``v_rest = sqrt(2 |a_n| tol)``, ``a_n < 0`` over the
   element that ended at the impact; independent of h; the remaining bounces of the geometric series
   take at most ``2 v_rest / (|a_n| (1 - e))``), the contact becomes *resting*: the rebound is removed
   (a plastic impact).  A contact closed at the start of an element, not leaving, and pressed in during
   it rests as well.  A contact with a constraint row (:mod:`flexmb.dynamics.impact.resting`: a plane not on
   an interface) then holds its gap at zero as a constraint of the elements (the element that pressed it in is
   solved again with the row); after each element its reaction is checked and where it would pull the
   contact lifts off (the element shortened to the reaction's zero, the row switched off at its end);
   an impact at a node solves the resting rows as plastic unilateral contacts (rows off), and a contact
   leaving after it lifts off; a rough one gets Coulomb's tangential impulse at every node, bounded by
   ``mu`` times the row's normal impulse over the element.  The others are held at every node by the same impact solve with the law
   ``v_n+ >= -g / h`` (``g <= 0``: the element's penetration, closed over the next element: a bounded
   penetration ``|a_n| h^2 / 2``, no drift) and ``P >= 0``: a unilateral constraint that pushes while it
   must and never pulls; they open when their gap at a node exceeds ``tol``.

The impacts' energy (the contacts' loss and the prescribed impulses' work) enters the energy audit as
work terms ("contact impacts", "prescribed impulses"), so that ``E - E0 - W`` stays the balance.
Events are recorded per contact and impact (:meth:`EventMonitor.arrays`; ``Solution.events``).
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.impact.events import check_gaps, friction_rows, gap_tol, resolve, speed_tol
from flexmb.dynamics.impact.flight import first_crossing, predict
from flexmb.dynamics.impact.geometry import ContactSet, ImpulseSet
from flexmb.dynamics.impact.resting import (ROW, first_pull, pull_values, row_joints, row_reactions, rows_held,
                                           switch_rows, tangential_hold)
from flexmb.dynamics.impact.terms import impact_terms
from flexmb.dynamics.impact.solve import after_impact, solve_impact
from flexmb.dynamics.node.constraints import node_velocity
from flexmb.errors import ConvergenceError, ModelError

log = logging.getLogger(__name__)

#: an element is stretched by up to this fraction to land on an impulse (as simulate's SLIVER: Newton stalls
#: on sliver elements)
STRETCH = 1e-3
#: an element that landed short of its predicted impact is re-solved this many times the rest beyond it
OVERSHOOT = 2.0
#: extra element solves allowed to locate one event
MAX_LOCATE = 40
#: event record columns (one row per contact and impact)
#: a resting contact's penetration at a node above this fraction of the model's size is a WARNING
SINK_WARN = 1e-3
#: a resting row's normal reaction below -LIFT_TOL times the model's force magnitude pulls: the contact
#: lifts off (the end of the located element: its end reaction within it of zero)
LIFT_TOL = 1e-7
#: a lift-off within this fraction of an element from its start opens the row at the start node (no
#: sliver element)
MIN_LIFT = 1e-3

EVENT_COLUMNS = ("t", "contact", "P", "P_t", "v_minus", "v_plus", "loss", "T_minus", "T_plus", "impact")


class EventMonitor:
    """The event state of a run: contacts ``cs`` and impulses ``imps`` (compiled), the resting contacts,
    the impulses applied, the event rows and the joints' impulses per impact, the number of extra
    element solves."""

    def __init__(self, run, check: bool = True):
        cm = self._cm = run.cm
        if run.control is not None:
            raise ModelError("simulate: contacts and impulses need fixed steps (h); error-controlled steps (rtol/atol) "
                             "do not stop at events yet: drop rtol/atol")
        self.cs, self.imps = ContactSet(cm), ImpulseSet(cm)
        self.resting = np.zeros(self.cs.m, bool)
        self.acc = np.full(self.cs.m, np.nan)  # normal accelerations over the last element [m/s^2]
        self.applied = self.imps.t < run.t0 - 1e-12 * max(1.0, abs(run.t0))
        if self.applied.any():
            k = int(np.nonzero(self.applied)[0][0])
            raise ModelError(f"Impulse {self.imps.names[k]!r}: time={self.imps.t[k]!r} is before the run's start "
                             f"t0={run.t0!r}; give a time within [t0, t_end]")
        self.rows: list = []
        self.joint_rows: list = []
        self.solves = 0
        self.n_impacts = 0
        self.sink = 0.0  # deepest penetration of a resting contact at a node [m] (|a_n| h^2 / 2 per element)
        # each contact point's constraint row (joint index; -1: held at the nodes, e.g. the points of a node set)
        self.row = row_joints(cm)[self.cs.owner]
        self.q_mid = np.full(self.cs.m, np.nan)  # the rows' mean reactions over the last element [N]
        self.changes: list = []  # [t, contact, 1 (comes to rest) / 0 (lifts off)] of the rows
        self.h_last = 0.0  # the last element's length [s] (the rows' normal impulse: q_mid h_last)
        self._geo = None
        self._end = None
        if check:  # (not on resume: a resting contact's penetration is part of the state)
            check_gaps(cm, self.cs, run.st)
        labels, _ = impact_terms(cm)
        self.slot = {k: run.rec.audit_labels.index(k) for k in labels}

    # ------------------------------------------------------------------ the step
    def step(self, run) -> None:
        cm = run.cm
        tol_t = 1e-12 * max(1.0, abs(run.t_end))
        self._node(run, impulses_only=True)  # impulses due at the start (t0)
        st = run.st
        h = run.next_h()
        # an impulse up to STRETCH x h beyond the element's end stretches it (no sliver element after it)
        due = ~self.applied & (self.imps.t > st.t + tol_t) & (self.imps.t < st.t + h * (1.0 + STRETCH) - tol_t)
        if due.any():
            h = float(self.imps.t[due].min() - st.t)
        if not self.cs.m:
            run.commit(run.solve_element(st, h, run.w, run.prev), run.h)
            return self._node(run)
        tol = gap_tol(cm)
        g0, J0 = self._rows(cm, st)
        v0 = J0 @ run.w
        flying = ~self.resting & ((g0 > tol) | (v0 > speed_tol(cm, run.w)))
        h_full = h
        if flying.any():  # land on the predicted impact (exact for free flight under constant loads)
            h = predict(g0[flying], v0[flying], self.acc[flying], h)
        out = run.solve_element(st, h, run.w, run.prev)
        g1, J1 = self.cs.normal_rows(cm, out.end)
        v1 = J1 @ node_velocity(cm, out.end, sel=run.selection)
        if h < h_full and np.any(flying & (g1 > tol) & (v1 < 0)):
            # landed short (a_n varied): re-solve beyond the impact, the location finishes it (no sliver
            # element after a short landing)
            rest = predict(g1[flying], v1[flying], ((v1 - v0) / h)[flying], h_full - h)
            if rest < h_full - h:
                h = min(h_full, h + OVERSHOOT * rest)
                out = run.solve_element(st, h, run.w, run.prev)
                self.solves += 1
                g1, J1 = self.cs.normal_rows(cm, out.end)
                v1 = J1 @ node_velocity(cm, out.end, sel=run.selection)
        # closed at the start, not leaving, pressed during the element: it rests
        starting = ~self.resting & ~flying & (g1 < -tol)
        self.resting |= starting
        if np.any(starting & (self.row >= 0)):  # a constraint row from the element's start: solved again
            self._rows_on(run, st.t, starting & (self.row >= 0))
            out = run.solve_element(st, h, run.w, run.prev)
            self.solves += 1
            g1, J1 = self.cs.normal_rows(cm, out.end)
            v1 = J1 @ node_velocity(cm, out.end, sel=run.selection)
        cand = flying & ((g1 < -tol) | np.isfinite(first_crossing(g0, v0, g1, v1, h, tol)))
        if cand.any():
            out, h = self._locate(run, st, h, out, cand, (g0, v0, g1, v1))
            g1, J1 = self.cs.normal_rows(cm, out.end)
            v1 = J1 @ node_velocity(cm, out.end, sel=run.selection)
        held = self.resting & (self.row >= 0)
        off = np.zeros(self.cs.m, bool)
        if held.any():  # the rows' reactions: compressive -> kept; pulling -> lift-off located, the row opens
            solved = out
            out, h, off = self._lift_off(run, st, h, out, held)
            if out is not solved:
                g1, J1 = self.cs.normal_rows(cm, out.end)
                v1 = J1 @ node_velocity(cm, out.end, sel=run.selection)
        self.acc = (v1 - v0) / h  # the normal accelerations over the element (the next prediction, the rest rule)
        self.h_last = h
        self._end = (out.end.t, g1, J1)  # the next step's start (an impact leaves the positions)
        run.commit(out, run.h)
        if off.any():
            self.resting &= ~off
            switch_rows(run, self.row[off], False)
            self.changes.extend([float(out.end.t), float(k), 0.0] for k in np.nonzero(off)[0])
        self._node(run)

    def _rows(self, cm, st):
        """``normal_rows`` at the step's start ``st``: the last step's end values when ``st`` is its end
        node (the impacts and holds at a node change the velocities, never the positions)."""
        if self._end is not None and self._end[0] == st.t:
            return self._end[1], self._end[2]
        return self.cs.normal_rows(cm, st)

    def _gaps(self, cm, st) -> NDArray:
        """The contacts' gaps at node ``st`` (the last node's kept: a step's end is the next one's start)."""
        if self._geo is None or self._geo[0] is not st:
            self._geo = (st, self.cs.geometry(cm, st)[0])
        return self._geo[1]

    def _locate(self, run, st, h: float, out, cand: NDArray, ends: tuple):
        """The element from ``st`` ending where the first of the contacts ``cand`` goes in, and its length
        (module doc).  ``ends``: gaps and rates of every contact at the element's start and end."""
        cm, cs = run.cm, self.cs
        tol = gap_tol(cm)
        idx = np.nonzero(cand)[0]
        lo, glo, vlo = 0.0, ends[0][idx], ends[1][idx]
        hi, ghi, vhi = h, ends[2][idx], ends[3][idx]
        width, out_hi = np.inf, out
        for _ in range(MAX_LOCATE):
            s = float(first_crossing(glo, vlo, ghi, vhi, hi - lo, tol).min())
            if not np.isfinite(s) and ghi.min() > tol:  # the dip was the long cubic's (a vibrating body): the
                return out_hi, hi  # bracket's cubic has none, every gap sampled is open: a plain element
            bisect = not (0.0 < s < hi - lo) or hi - lo > 0.5 * width  # no crossing, or the last step stalled
            width = hi - lo
            hm = lo + (0.5 * (hi - lo) if bisect else s)
            trial = run.solve_element(st, hm, run.w, run.prev)
            self.solves += 1
            gm, J = cs.normal_rows(cm, trial.end, idx)
            gm, vm = gm[idx], J @ node_velocity(cm, trial.end, sel=run.selection)
            if gm.min() < -tol or (gm.min() > tol and np.isfinite(first_crossing(glo, vlo, gm, vm, hm - lo, tol)).any()):
                hi, ghi, vhi, out_hi = hm, gm, vm, trial  # beyond the surface at hm, or dipped in before it
            elif gm.min() > tol:
                lo, glo, vlo = hm, gm, vm
            else:
                return trial, hm
            if hi - lo <= 1e-14 * max(h, abs(st.t)):
                break
        k = idx[int(np.argmin(ghi))]
        raise ConvergenceError(f"contact {cs.names[k]!r}: the impact in the element t = {st.t:.6g} .. {st.t + h:.6g} s "
                               f"could not be located to the gap tolerance {tol:.3g} m (gap {ghi.min():.3g} m at "
                               f"t = {st.t + hi:.9g} s, {glo.min():.3g} m at t = {st.t + lo:.9g} s); try a smaller h",
                               time=st.t)

    def _lift_off(self, run, st, h: float, out, held: NDArray):
        """The element from ``st`` with the resting rows ``held``: as solved (``out``, length ``h``) when no
        row pulls (:func:`~flexmb.dynamics.impact.resting.pull_values` not below ``-qtol``); else re-solved to the length where the first pulling row's reaction polynomial
        crosses zero (:func:`~flexmb.dynamics.impact.resting.first_pull`), and that row opens at its end; a
        row that pulls from the element's start (or within ``MIN_LIFT`` of it) opens at the start node (the
        element solved without it).  Returns the element, its length and the rows that open at its end."""
        te, qtol = run.te, LIFT_TOL * run.magnitudes.F
        idx = np.nonzero(held)[0]
        before = self.q_mid[idx] if len(out.pieces) == 1 else np.full(idx.size, np.nan)
        h = out.last.h  # a halved element: its last piece (without the history)
        Q = row_reactions(run.system.lay, out.U, self.row[idx])
        none = np.zeros(self.cs.m, bool)
        if pull_values(te, Q, before).min() >= -qtol:
            self._keep(idx, Q @ te.b)
            return out, out.end.t - st.t, none
        tau = first_pull(te, Q, before)
        first = float(tau.min())
        opens = np.zeros(self.cs.m, bool)
        opens[idx] = tau <= first * (1.0 + 1e-9)
        hm = out.last.start.t + first * h - st.t
        if hm <= MIN_LIFT * (out.end.t - st.t):
            self.resting &= ~opens  # it pulls from the start: the rows open at the start node
            switch_rows(run, self.row[opens], False)
            self.changes.extend([float(st.t), float(k), 0.0] for k in np.nonzero(opens)[0])
            self.solves += 1
            return run.solve_element(st, out.end.t - st.t, run.w, run.prev), out.end.t - st.t, none
        trial = run.solve_element(st, hm, run.w, run.prev)
        self.solves += 1
        Q = row_reactions(run.system.lay, trial.U, self.row[idx])
        self._keep(idx, Q @ te.b)
        return trial, hm, opens

    def _keep(self, idx: NDArray, mean: NDArray) -> None:
        """The resting rows ``idx``'s mean reactions over the element (the next one's start value at p = 1,
        :func:`~flexmb.dynamics.impact.resting.pull_values`)."""
        self.q_mid[:] = np.nan
        self.q_mid[idx] = mean

    def _rows_on(self, run, t: float, which: NDArray) -> None:
        """The constraint rows of the contacts ``which`` switched on at node time ``t`` (recorded)."""
        switch_rows(run, self.row[which], True)
        self.q_mid[which] = np.nan
        self.changes.extend([float(t), float(k), 1.0] for k in np.nonzero(which)[0])

    # ------------------------------------------------------------------ at a node
    def _node(self, run, impulses_only: bool = False) -> None:
        """Impacts at the run's node: the due impulses and the closed, approaching contacts (resolved,
        recorded), then the resting contacts held."""
        cm, cs, st = run.cm, self.cs, run.st
        tol_t = 1e-12 * max(1.0, abs(run.t_end))
        due = np.nonzero(~self.applied & (np.abs(self.imps.t - st.t) <= tol_t))[0]
        p = self.imps.generalized(cm, st, due) if due.size else None
        self.applied[due] = True
        w = run.w
        if p is None and (impulses_only or not self.cs.m or (not self.resting.any()
                                                              and self._gaps(cm, st).min() > gap_tol(cm))):
            return  # nothing closed, nothing due
        out, _ = resolve(cm, _Open(cs, self.resting), st, w, p, run.selection)
        rows = self.resting & (self.row >= 0)
        if (len(out.contacts) or p is not None) and rows.any():
            # the rows would hold as bilateral joints in the impact: it is solved with them as plastic contacts
            switch_rows(run, self.row[rows], False)
            self.resting &= ~rows
            out, _ = resolve(cm, _Open(cs, self.resting, rows), st, w, p, run.selection)
        if len(out.contacts) or p is not None:
            rest = out.contacts[(out.v_plus < self._v_rest(run, out)) & (out.P > 0)] if len(out.contacts) else []
            if len(rest):  # too slow to bounce again within a few elements: the impact is plastic, the contact rests
                plastic = rows.copy()
                plastic[rest] = True
                out, _ = resolve(cm, _Open(cs, self.resting, plastic), st, w, p, run.selection)
                self.resting[rest] = True
            self._record(run, out, st)
            w = out.w_plus
            if rows.any():  # the rows that were resting: back on unless the impact sent them off
                g, J = cs.normal_rows(cm, st)
                self.resting |= rows & (g <= gap_tol(cm)) & (J @ w <= speed_tol(cm, w))
                switch_rows(run, self.row[rows & self.resting], True)
                self.changes.extend([float(st.t), float(k), 0.0] for k in np.nonzero(rows & ~self.resting)[0])
        new = self.resting & (self.row >= 0)
        new[new] = ~run.selection.constrained[self.row[new], ROW]
        if new.any():
            self._rows_on(run, st.t, new)
        if np.any(self.resting & (self.row < 0)):
            w = self._hold(run, st, w)
        rough = self.resting & (self.row >= 0) & (cs.mu > 0) & np.isfinite(self.q_mid) & (self.h_last > 0)
        if rough.any():  # Coulomb at the node, the cone of the row's normal impulse over the last element
            idx = np.nonzero(rough)[0]
            T, _ = cs.tangent_rows(cm, st, idx)
            w_plus, P = tangential_hold(cm, st, w, T, cs.mu[idx] * np.maximum(self.q_mid[idx], 0.0) * self.h_last,
                                        run.selection)
            if np.any(P):
                loss = -float(np.einsum("kj,kjv,v->", P, T, w_plus + w)) / 2.0
                self._add_work(run, "contact impacts", -loss)
                w = w_plus
        if w is not run.w:
            run.st = after_impact(cm, st, w)
            run.w = w
            run.prev = None  # no extrapolation across the jump

    def _v_rest(self, run, out) -> NDArray:
        """The resting speed ``sqrt(2 |a_n| tol)`` per contact of ``out``: a rebound slower than it would rise
        less than the gap tolerance (apex ``v^2 / (2 |a_n|)``), ``a_n < 0`` the contact's normal acceleration
        over the element that ended at the impact (0 where it does not press the contact in, or is unknown)."""
        a = np.nan_to_num(self.acc[out.contacts], nan=0.0)
        return np.sqrt(2.0 * np.maximum(-a, 0.0) * gap_tol(run.cm))

    def _hold(self, run, st, w: NDArray) -> NDArray:
        """The resting contacts at node ``st``: opened where the gap exceeds ``tol``; the others held by
        the impact solve with ``v_n+ >= -g / h``, ``P >= 0``."""
        cm, cs = run.cm, self.cs
        g, J = cs.normal_rows(cm, st)
        self.resting &= (g <= gap_tol(cm)) | (self.row >= 0)
        idx = np.nonzero(self.resting & (self.row < 0))[0]
        if not idx.size:
            return w
        self.sink = max(self.sink, float(-g[idx].min()))
        bias = np.minimum(g[idx], 0.0) / run.h
        if np.all(J[idx] @ w + bias >= 0.0):
            return w
        out = solve_impact(cm, st, w, idx, J[idx], np.zeros(idx.size), None, bias=bias,
                           friction=friction_rows(cm, cs, st, idx), sel=run.selection)
        self._add_work(run, "contact impacts", -out.energy_lost)
        return out.w_plus

    # ------------------------------------------------------------------ records
    def _record(self, run, out, st) -> None:
        self.n_impacts += 1
        for k, P, Pt, vm, vp, loss in zip(out.contacts, out.P, np.hypot(*out.P_t.T), out.v_minus, out.v_plus, out.loss):
            self.rows.append([st.t, float(k), P, Pt, vm, vp, loss, out.T_minus, out.T_plus, float(self.n_impacts)])
        if not len(out.contacts):  # a prescribed impulse alone
            self.rows.append([st.t, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, out.T_minus, out.T_plus, float(self.n_impacts)])
        self.joint_rows.append(np.asarray(out.joint_impulse, dtype=float).reshape(run.cm.nj, 6))
        if len(out.contacts):
            self._add_work(run, "contact impacts", -out.energy_lost)
        if out.work:
            self._add_work(run, "prescribed impulses", out.work)

    def _add_work(self, run, label: str, value: float) -> None:
        """The impact's energy as work since the last node (the recorder adds it to the next node)."""
        vec = np.zeros(len(run.rec.audit_labels))
        vec[self.slot[label]] = value
        run.rec.add_work(vec)

    def arrays(self, cm) -> dict:
        """``Solution.extra`` arrays: ``events/table (n, 10)`` (:data:`EVENT_COLUMNS`), ``events/joint_impulse
        (n_impacts, nj, 6)``, ``events/resting (n, 3)``: the constraint rows switched, ``(t, contact point (as
        in the table: meta['contact_names']), 1: on (the contact rests) / 0: off (it lifts off))``."""
        table = np.array(self.rows, dtype=float).reshape(-1, len(EVENT_COLUMNS))
        joints = np.array(self.joint_rows, dtype=float).reshape(len(self.joint_rows), cm.nj, 6)
        return {"events/table": table, "events/joint_impulse": joints,
                "events/resting": np.array(self.changes, dtype=float).reshape(-1, 3)}

    def meta(self, names) -> dict:
        """``Solution.meta`` entries; a WARNING when a resting contact sank deeper than
        :data:`SINK_WARN` times the model's size (its hold is at the nodes only: ``|a_n| h^2 / 2``)."""
        limit = SINK_WARN * self._cm.length_scale
        if self.sink > limit:
            log.warning("simulate: a resting contact sank %.3g m into its surface at a node (more than %.3g of the "
                        "model's size, %.3g m): resting contacts are held at the nodes only and sink by "
                        "|a_n| h^2 / 2 within an element; the positions there are not to be trusted: use a "
                        "smaller h (meta['resting_sink'])", self.sink, SINK_WARN, self._cm.length_scale)
        return {"impacts": self.n_impacts, "event_solves": self.solves, "contact_names": list(names),
                "contact_nodes": self.cs.node.tolist(), "gap_tol": gap_tol(self._cm), "resting_sink": self.sink,
                "lift_offs": int(sum(1 for c in self.changes if c[2] == 0.0)),
                "resting_contacts": list(dict.fromkeys(n for n, r in zip(names, self.resting) if r))}

    def rows_held(self, sel):
        """The selection ``sel`` with every contact row held: the one the node reactions are recovered
        in (:func:`~.resting.rows_held`)."""
        return rows_held(sel, self.row[self.row >= 0])

    def state(self, run) -> dict:
        """Checkpoint record (``ckpt/events/...``), with the recorder's pending impact work."""
        out = {"resting": self.resting.copy(), "applied": self.applied.copy(), "acc": self.acc.copy(),
               "counters": np.array([self.solves, self.n_impacts], dtype=float), "sink": np.array([self.sink]),
               "q_mid": self.q_mid.copy(), "h_last": np.array([self.h_last]),
               **self.arrays(run.cm)}
        if run.rec._pending is not None:  # noqa: SLF001 (the impact work not yet at a node: part of the state)
            out["pending"] = np.asarray(run.rec._pending, dtype=float)
        return out

    def restore(self, run, ex: dict) -> None:
        self.resting = np.array(ex["resting"], dtype=bool)
        self.applied = np.array(ex["applied"], dtype=bool)
        self.acc = np.array(ex["acc"], dtype=float) if "acc" in ex else np.full(self.cs.m, np.nan)
        self.solves, self.n_impacts = (int(v) for v in np.array(ex["counters"]))
        self.sink = float(np.array(ex["sink"])[0]) if "sink" in ex else 0.0
        self.rows = [list(r) for r in np.array(ex["events/table"])]
        if "q_mid" in ex:
            self.q_mid = np.array(ex["q_mid"], dtype=float)
            self.h_last = float(np.array(ex["h_last"])[0])
        self.changes = [list(r) for r in np.array(ex.get("events/resting", np.zeros((0, 3))))]
        self.joint_rows = list(np.array(ex["events/joint_impulse"], dtype=float))
        if "pending" in ex:
            run.rec._pending = np.array(ex["pending"], dtype=float)  # noqa: SLF001 (see state)


class _Open:
    """The contact set seen by :func:`resolve` with the resting contacts left out (they are held by
    :meth:`EventMonitor._hold`) and the ``plastic`` ones with e = 0."""

    def __init__(self, cs: ContactSet, resting: NDArray, plastic: NDArray | None = None):
        self._cs, self._resting = cs, resting
        self.m, self.names = cs.m, cs.names
        self.e = cs.e if plastic is None else np.where(plastic, 0.0, cs.e)

    def normal_rows(self, cm, st, idx=None):
        g, J = self._cs.normal_rows(cm, st, idx)
        return np.where(self._resting, np.inf, g), J

    def geometry(self, cm, st):
        return self._cs.geometry(cm, st)

    def __getattr__(self, name):  # the rest (mu, tangent_rows: friction) as the contact set's
        return getattr(self._cs, name)
