"""Energy audit of every model: the work of drives, loads and dampers per time element, the balance
``E(t) - E(t0) - W(t)`` at the nodes, and the acceptance check that refuses an element whose balance
jumps (docs/theory.md section 10).

Work per element (one implementation, :func:`element_work`).  The element solves for its unknowns at
the ``p`` Gauss points ``t_i = t1 + c_i h``; the power of every non-conservative term is evaluated
there from those unknowns and integrated with the element's own Gauss weights,
``W = h sum_i b_i P(t_i)``:

* a drive (a driven joint component ``c``): ``P = Qbar_c(t_i) * dtarget_c/dt(t_i)``, the power of the
  joint's reaction (``Qbar``, frame A, an unknown at the Gauss points) on the prescribed motion;
* a joint damper (free component with ``c != 0``): ``P = -(c qdot)^2 / c`` with ``c qdot = -(Qbar_c + k
  (q_c + acc_c - ref_c))`` from the joint law the element satisfies;
* a point force or torque (constant, ``f(t)`` or a state callback): ``P = F . v_point + M . omega``
  (the load's wrench and the attachment velocity at the Gauss points,
  :func:`flexmb.dynamics.elements.forces.load_wrench`);
* a spring-damper's damping: ``P = -c Ldot^2`` (:func:`flexmb.dynamics.elements.forces.spring_kinematics`);
* modal damping: ``P = -qdot^T C qdot`` (the modal rates at the Gauss points).

Gravity, springs, joint springs and the elastic energy of modal bodies are in the potential energy.
Why the element's own rule: the element's equations hold at its Gauss points (collocation of the
momentum balance with the reactions ``Qbar``, the multipliers' derivative there), so the Gauss rule on
those values is the work the discrete motion received; the ``p``-point rule is exact for polynomials of
degree ``2p - 1``, below the error of the values it integrates.  That error is the Gauss-point
reactions' (stage values; the node energies themselves are of the nodal order ``2p``): measured on a
driven pendulum (tests/test_energy_audit.py) the work is of order 2 for ``p = 1`` and ``p = 2`` and of
order 4 for ``p = 3``, 3e-4 of the exchanged energy at 50 elements per second for ``p = 2``.  A rule on
the node values alone (trapezoidal, ``O(h^2)``) would be no better and would miss the element's interior.

Acceptance (:meth:`ElementAudit.refused`, called by the root checks of
:mod:`flexmb.dynamics.variants.root_checks`): an element whose own defect ``|dE - W|`` exceeds
:data:`REFUSE_JUMP` of the energy scale is not the motion (a spurious root of the element equations)
and is refused like a Newton failure: the step is halved, and when halving cannot produce an element
that passes, :class:`~flexmb.errors.ConvergenceError` names the element, the jump and its largest
contributors.  The scale (:func:`element_scale`) is the largest of the energy the run has exchanged
so far (largest kinetic energy, potential energy range, largest cumulative work), the element's own
exchanges (kinetic, potential, work) and a round-off floor (:data:`ROUNDOFF` x the model's own energy
``F L``, :mod:`flexmb.dynamics.solve.scales`: masses, lengths, gravity, speeds, stiffnesses, loads).
So a refused element has more than half of the energy it (or the run before it) exchanged
unaccounted for; an element that resolves the motion has a defect of ``O(h^3)`` of it or less.
A root that balances its energy on a potential outside its model's range is refused too: a modal body
whose strain energy (a sum of squares of strains) ends the element negative (:func:`negative_strain`).

Report (:func:`balance_report`): ``meta["energy_balance"] = max_t |E - E0 - W| / scale`` and the
element where the balance jumped most; a WARNING above :data:`BALANCE_WARN` names it.
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.impact.terms import impact_terms
from flexmb.dynamics.layout import JOINT_SLOTS, JPHI, JQ, JS, Layout

log = logging.getLogger(__name__)

#: categories of the work terms (Solution fields ``work_drives``, ``work_loads``, ``work_damping``)
CATEGORIES = ("drives", "loads", "damping")

#: an element whose own balance defect exceeds this fraction of the energy scale is refused (halved)
REFUSE_JUMP = 0.5

#: a body whose strain energy at an element's end is below -NEGATIVE_STRAIN x the energy scale refuses
#: the element (:func:`negative_strain`; the strain-energy factors are exact to 1e-8 of the energy at
#: modal loads, flexmb.fe.reduction.energy_factors: 100 times that is not round-off)
NEGATIVE_STRAIN = 1e-6

#: relative balance defect over the run above which a WARNING names the element where it jumped most
#: (the same limit as the conservative models' energy_drift, flexmb.dynamics.energy)
BALANCE_WARN = 0.05

#: energies below this fraction of the model's energy scale F L are round-off (Newton's tolerance is
#: 1e-10 of the unknowns' magnitudes): the floor of every relative energy figure
ROUNDOFF = 1e-8


# ---------------------------------------------------------------------------- contributors
def contributors(cm, sel=None) -> tuple[tuple[str, ...], NDArray]:
    """Labels of the work terms of a compiled model and their category (index in :data:`CATEGORIES`),
    in the order of :func:`element_work`: drives, loads, joint dampers, spring-dampers, modal damping."""
    labels, cat = [], []
    names = [j.name for j in cm.model.joints]
    comp = ("x", "y", "z", "rx", "ry", "rz")
    for (j, c, _f, _df) in cm.jnt_drives:
        labels.append(f"drive of joint {names[j]!r} ({comp[c]})")
        cat.append(0)
    for ld in cm.forces.loads:
        labels.append(ld.owner)
        cat.append(1)
    for j, c in _damped_joint_components(cm, sel):
        labels.append(f"damper of joint {names[j]!r} ({comp[c]})")
        cat.append(2)
    S = cm.forces.springs
    if S is not None:
        for k in np.flatnonzero(S.c != 0):
            labels.append(f"damping of spring-damper {cm.spring_names[k]!r}")
            cat.append(2)
    for grp, k in _damped_modal(cm):
        labels.append(f"modal damping of {cm.model.bodies[int(grp.bodies[k])].name!r}")
        cat.append(2)
    more, more_cat = impact_terms(cm)  # impacts: added at their nodes (flexmb.dynamics.impact.march)
    return tuple(labels + more), np.array(cat + more_cat, dtype=np.int64)


def _damped_joint_components(cm, sel=None) -> list:
    """The damped free components ``[(joint, component)]`` under the constraint selection ``sel``
    (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set)."""
    from flexmb.dynamics.node.selection import Selection

    if not cm.nj:
        return []
    sel = sel if sel is not None else Selection.full(cm)
    free = ~sel.constrained & (np.asarray(cm.jnt_c) != 0)
    free &= ~sel.universal[:, None]
    return [(int(j), int(c)) for j, c in zip(*np.nonzero(free))]


def _damped_modal(cm) -> list:
    out = []
    for grp in cm.groups:
        C = getattr(grp, "C", None)
        if C is None:
            continue
        out.extend((grp, k) for k in range(len(grp.bodies)) if np.any(C[k]))
    return out


# ---------------------------------------------------------------------------- work of an element
def _plain_layout(system) -> Layout:
    """A layout without index replay (the one of Newton's evaluations is not disturbed)."""
    lay = getattr(system, "_audit_layout", None)
    cm = system.cm
    if lay is None:
        lay = system._audit_layout = Layout(cm.body_slots(), cm.group_of, cm.nj, system.te.p)
    return lay


class WorkPlan:
    """Which work terms (:func:`contributors`) a run's elements have under one constraint selection
    ``sel`` (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set), worked
    out once (:meth:`ElementAudit.plan`): the damped free joint components, the damped modal bodies,
    whether loads or damped spring-dampers need the element's kinematics, the impacts' (zero) terms;
    ``empty`` when the model has no work term at all (no drive, load, damper, modal damping, impact:
    :func:`element_power` is then an empty array without looking at the element)."""

    __slots__ = ("sel", "damped", "modal", "springs", "kinematics", "n_impact", "empty", "strain")

    def __init__(self, cm, sel=None):
        self.sel = sel
        self.damped = _damped_joint_components(cm, sel)
        self.modal = _damped_modal(cm)
        S = cm.forces.springs
        self.springs = bool(S is not None and np.any(S.c))
        self.kinematics = bool(cm.forces.loads) or self.springs
        self.n_impact = len(impact_terms(cm)[0])
        self.empty = not (cm.jnt_drives or cm.forces.loads or self.damped or self.springs or self.modal
                          or self.n_impact)
        #: whether a body group has strain energies (:func:`negative_strain` has something to check)
        self.strain = any(getattr(g, "strain_energies", None) is not None and len(g.bodies) for g in cm.groups)


def element_power(system, st, h: float, U: NDArray, plan: WorkPlan | None = None) -> NDArray:
    """Power of every work term (:func:`contributors`) at the element's Gauss points, ``(nc, p)`` [W];
    ``plan``: the run's :class:`WorkPlan` for the element's selection (default: worked out here)."""
    cm, te = system.cm, system.te
    p = te.p
    if plan is None:
        plan = WorkPlan(cm, system.lay.selection)
    if plan.empty:
        return np.zeros((0, p))
    lay = _plain_layout(system)
    t_g = st.t + h * te.c
    rows = []
    if cm.nj:
        Jv = lay.joint_view(U)
        for (j, c, _f, df) in cm.jnt_drives:
            rate = np.broadcast_to(np.asarray(df(t_g), dtype=float), (p,))
            rows.append(Jv[j, :, JQ + c] * rate)
    if plan.kinematics:
        from flexmb.dynamics.elements.forces import load_wrench, spring_kinematics

        ek = system.element_kin(U, st, h, lay=lay)
        for ld in cm.forces.loads:
            wrench, _ = load_wrench(ek, ld, False)
            nu = ld.att.velocity(ek).nu
            rows.append(np.einsum("kid,kid->i", wrench, nu))
    else:
        ek = None
    if cm.nj:
        for j, c in plan.damped:
            q = Jv[j, :, JS + c] if c < 3 else Jv[j, :, JPHI + c - 3] + st.acc[j, c - 3]
            cq = -(Jv[j, :, JQ + c] + cm.jnt_k[j, c] * (q - cm.jnt_ref[j, c]))
            rows.append(-cq * cq / cm.jnt_c[j, c])
    S = cm.forces.springs
    if plan.springs:
        sk = spring_kinematics(ek, S)
        damped = np.flatnonzero(S.c != 0)
        rows.extend(-S.c[k] * sk.Ldot[k, :, 0] ** 2 for k in damped)
    for grp, k in plan.modal:
        V = lay.group_view(U, grp.bodies, grp.slots)[k]
        nm = grp.nm
        qd = V[:, grp.BW + 6:grp.BW + 6 + nm]
        rows.append(-np.einsum("ij,pi,pj->p", grp.C[k], qd, qd))
    rows.extend(np.zeros(p) for _ in range(plan.n_impact))  # impulsive: no power inside an element
    return np.array(rows, dtype=float).reshape(len(rows), p)


def element_work(system, st, h: float, U: NDArray, plan: WorkPlan | None = None) -> NDArray:
    """Work of every term over the element, ``(nc,)`` [J]: the element's Gauss rule on
    :func:`element_power` (module docstring; ``plan``: the run's :class:`WorkPlan`)."""
    if plan is not None and plan.empty:  # no work term: nothing to evaluate
        return np.zeros(0)
    P = element_power(system, st, h, U, plan)
    return h * (P @ system.te.b) if P.size else np.zeros(P.shape[0])


# ---------------------------------------------------------------------------- scale and acceptance
def model_energy(run) -> float:
    """The model's own energy scale ``F L`` [J] from Newton's magnitudes (0 before they exist)."""
    m = getattr(run, "magnitudes", None)
    return 0.0 if m is None else float(m.F * m.L)


def element_scale(rec, e_model: float, dK: float, dV: float, W: NDArray, E: float) -> float:
    """The energy scale an element's balance defect is judged against [J]: the largest of the energy
    the run has exchanged before it (largest kinetic energy, potential energy range, largest
    cumulative work: ``rec.energy_span``), the element's own exchanges ``|dK|``, ``|dV|`` and work
    ``sum |W|``, and the round-off floor :data:`ROUNDOFF` x the model's ``F L`` or the energy ``|E|``."""
    return max(_span(rec) if rec.energy_span else 0.0, abs(dK), abs(dV), float(np.abs(W).sum()) if W.size else 0.0,
               ROUNDOFF * max(e_model, abs(E)), 1e-300)


class ElementAudit:
    """The acceptance check of a run (``run``: :class:`flexmb.dynamics.simulate.Run`, read for its
    recorder and magnitudes), set as ``system.audit`` so that every element Newton solves, whole or
    as a piece of a halved step, passes the same check."""

    def __init__(self, run):
        self.run = run
        self._plan = None

    def plan(self, system) -> WorkPlan:
        """The :class:`WorkPlan` of the element system's constraint selection (worked out again when the
        run adopts another selection: a new Selection object)."""
        sel = getattr(system.lay, "selection", None)
        if self._plan is None or self._plan.sel is not sel:
            self._plan = WorkPlan(system.cm, sel)
        return self._plan

    def refused(self, system, st, h: float, U: NDArray, st_end):
        """None when the element's balance holds (its work is left in ``self.work``), else
        ``(index, message)``: the unknown to name and why the element is refused."""
        rec = self.run.rec
        plan = self.plan(system)
        W = element_work(system, st, h, U, plan)
        self.work = W
        a, b = rec.node_values(st), rec.node_values(st_end)
        dK, dV = b.ke - a.ke, b.pe - a.pe
        Wt = float(W.sum()) if W.size else 0.0  # (numpy's sum of nothing costs ~5 us)
        defect = dK + dV - Wt
        scale = element_scale(rec, model_energy(self.run), dK, dV, W, max(abs(a.ke + a.pe), abs(b.ke + b.pe)))
        negative = negative_strain(system, st_end, scale) if plan.strain else None
        if negative is not None:
            return negative
        if not abs(defect) > REFUSE_JUMP * scale:
            return None
        labels = rec.audit_labels
        top = ""
        if W.size:
            k = int(np.argmax(np.abs(W)))
            top = f"; largest work term: {labels[k]} {W[k]:+.4g} J"
        msg = (f"converged, but the energy balance jumps by {defect:+.4g} J in the element ({abs(defect) / scale:.3g} x "
               f"the energy scale {scale:.4g} J: kinetic {dK:+.4g} J, potential {dV:+.4g} J, work {Wt:+.4g} J{top}): "
               f"not the motion (a spurious root of the element equations)")
        return _named_index(system, W), msg


def negative_strain(system, st_end, scale: float):
    """``(index, message)`` when a body's strain energy at the element's end is below
    ``-NEGATIVE_STRAIN * scale``, else None.  A strain energy is a sum of squares of the strains: a
    negative one is outside the range of the body's reduced cubic and quartic energy (the modal
    coordinates far beyond any motion it resolves), where the reduced potential is unbounded below and
    a root can balance its energy exactly while the body gains tens of joules from nowhere (X3 "full",
    p = 2, h = 1e-3: the rod's strain energy 0.004 J -> -9.5 J in one element, the balance off by 1 %
    of the exchanged energy only).  The energy balance cannot see such a root; this check does."""
    cm, lay = system.cm, system.lay
    for grp in cm.groups:
        energies = getattr(grp, "strain_energies", None)
        if energies is None or len(grp.bodies) == 0:
            continue
        V = energies(st_end)
        k = int(np.argmin(V))
        if V[k] < -NEGATIVE_STRAIN * scale:
            b = int(grp.bodies[k])
            idx = int(lay.body_start[b] + (lay.p - 1) * lay.body_slots[b] + grp.BQ)
            return idx, (f"converged, but the strain energy of body {cm.model.bodies[b].name!r} is {V[k]:+.4g} J at "
                         f"the element's end (below -{NEGATIVE_STRAIN:g} x the energy scale {scale:.4g} J): its modal "
                         f"coordinates are outside the range of its cubic and quartic strain energy, not the motion "
                         f"(a spurious root of the element equations)")
    return None


def _named_index(system, W: NDArray) -> int:
    """An unknown to name in the error: the reaction of the drive with the largest work, else the first
    unknown."""
    cm, lay = system.cm, system.lay
    if cm.jnt_drives and W.size:
        k = int(np.argmax(np.abs(W[:len(cm.jnt_drives)])))
        j, c = cm.jnt_drives[k][:2]
        return int(lay.joint_off + j * lay.p * JOINT_SLOTS + JQ + c)
    return 0


# ---------------------------------------------------------------------------- node bookkeeping and report
def track_node(rec, t: float, element_w: NDArray) -> None:
    """After a node is recorded: update ``rec.energy_span`` ``[max KE, PE range, max |W|]`` and
    ``rec.worst_jump`` ``[relative jump, t_start, t_end, jump J, contributor]`` of the element that
    ended there."""
    # the last two nodes only (np.asarray of the whole lists made every node O(n): 30,000 elements took
    # 265 s instead of ~60 s, benchmarks/impact.py); as floats (the same double arithmetic)
    ke1, pe1 = float(rec.ke[-1]), float(rec.pe[-1])
    W = float(rec.work[-1].sum()) if rec.work and rec.work[-1].size else 0.0
    if rec.energy_span:
        kmax, pmin, pmax, wmax = rec.energy_span
        rec.energy_span = [max(kmax, ke1), min(pmin, pe1), max(pmax, pe1), max(wmax, abs(W))]
    else:
        rec.energy_span = [ke1, pe1, pe1, abs(W)]
    if len(rec.ke) < 2:
        return
    jump = (ke1 + pe1) - (float(rec.ke[-2]) + float(rec.pe[-2])) - (float(element_w.sum()) if element_w.size else 0.0)
    kmax, pmin, pmax, wmax = rec.energy_span
    rel = abs(jump) / max(kmax, pmax - pmin, wmax, 1e-300)
    if not rec.worst_jump or rel > rec.worst_jump[0]:
        k = int(np.argmax(np.abs(element_w))) if element_w.size else -1
        rec.worst_jump = [rel, float(rec.t[-2]), float(t), float(jump), float(k)]


def _span(rec) -> float:
    kmax, pmin, pmax, wmax = rec.energy_span
    return max(kmax, pmax - pmin, wmax)


def work_fields(rec) -> dict:
    """``extra`` arrays of a Solution: ``work/<category>`` (nt,) cumulative work [J] per category."""
    nt = len(rec.t)
    W = np.array(rec.work, dtype=float).reshape(nt, -1) if nt else np.zeros((0, 0))
    return {f"work/{name}": W[:, rec.audit_category == i].sum(axis=1) if nt else np.zeros(0)
            for i, name in enumerate(CATEGORIES)}


def balance_report(rec, e_model: float, conservative: bool) -> dict:
    """meta entries of the energy audit: ``energy_balance`` (``max_t |E - E0 - W| / scale``),
    ``energy_balance_scale`` [J], ``energy_jump`` (the largest element defect / scale) with
    ``energy_jump_t`` [s] and ``energy_jump_term`` (the element's largest work term), and a WARNING
    above :data:`BALANCE_WARN` for models with work terms (conservative models keep their
    ``energy_drift`` report, flexmb.dynamics.energy)."""
    if len(rec.t) < 2:
        return {}
    E = np.asarray(rec.ke) + np.asarray(rec.pe)
    W = np.array(rec.work, dtype=float).reshape(len(rec.t), -1).sum(axis=1)
    err = np.abs(E - E[0] - W)
    scale = max(_span(rec), ROUNDOFF * max(e_model, float(np.abs(E).max())), 1e-300)
    bal = float(err.max() / scale)
    rel, t1, t2, jump, k = rec.worst_jump if rec.worst_jump else (0.0, 0.0, 0.0, 0.0, -1)
    term = rec.audit_labels[int(k)] if int(k) >= 0 and rec.audit_labels else "none"
    out = {"energy_balance": bal, "energy_balance_scale": scale, "energy_jump": abs(jump) / scale,
           "energy_jump_t": [t1, t2], "energy_jump_term": term}
    if not conservative and bal > BALANCE_WARN:
        kk = int(np.argmax(err))
        log.warning(
            "the energy balance E - E0 - W of this model is off by %.3g %% of its scale (%.3g J of %.3g J at t = %.6g s; "
            "W: the work of drives, loads and dampers); it jumped most in the element t = %.6g .. %.6g s (%+.3g J, "
            "largest work term there: %s): the time step is too coarse for this motion there; use a smaller h or a "
            "higher order p", 100 * bal, err[kk], scale, rec.t[kk], t1, t2, jump, term)
    return out
