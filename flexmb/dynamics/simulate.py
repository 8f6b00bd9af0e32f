"""The time-marching driver: predict -> Newton on the internal unknowns -> recover end values ->
store, one time element after the other, with step halving and retry when Newton fails.
"""
from __future__ import annotations

import logging
import time as _time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from flexmb import __version__
from flexmb import rotations as rot
from flexmb.checks import check_simulate_args
from flexmb.dynamics.attachments import ElementKin
from flexmb.dynamics.constraints import detect_redundant, dropped_violation, multiplier_momenta, node_velocity
from flexmb.dynamics.forces import force_residual, potential_energy
from flexmb.dynamics.joints import joint_residual, unpack_joints
from flexmb.dynamics.layout import JLAM, JNA, JNB, JOINT_SLOTS, JPHI, JQ, JS, Layout, Pattern, ReplayLayout, Triplets
from flexmb.dynamics.linsolve import linear_solver, superlu
from flexmb.dynamics.newton import NewtonOptions, NewtonResult, newton_solve
from flexmb.dense_output import hermite_positions, hermite_rotations
from flexmb.dynamics.reactions import element_record, node_reactions, node_record
from flexmb.dynamics.scales import adapted, body_lengths, model_magnitudes, unknown_scales
from flexmb.dynamics.system import (COMPONENT_NAMES, CompiledModel, ElementStart, compile_model, initial_configuration, initial_state,
                                    node_momenta)
from flexmb.dynamics.time_elements import TimeElement, time_element
from flexmb.errors import ConstraintViolationError, ConvergenceError, ModelError, SimulationInterrupted
from flexmb.model import Model
from flexmb.progress import progress, progress_enabled
from flexmb.solution import Solution

log = logging.getLogger(__name__)

JOINT_EQUATIONS = {JS: "relative position", JPHI: "relative rotation", JLAM: "multiplier definition",
                   JQ: "joint law", JNA: "attachment velocity a", JNB: "attachment velocity b"}


def make_layout(cm: CompiledModel, p: int, replay: bool = True) -> Layout:
    cls = ReplayLayout if replay else Layout
    return cls(cm.body_slots(), cm.group_of, cm.nj, p)


class ElementSystem:
    """Residual and Jacobian of one time element for a compiled model (pattern built once)."""

    def __init__(self, cm: CompiledModel, te: TimeElement):
        self.cm = cm
        self.te = te
        self.lay = make_layout(cm, te.p)
        self.pattern: Pattern | None = None
        self.n_eval = 0
        self.t_eval = 0.0
        #: step halvings (t, h, reason), repeated as WARNING when they end in a failure
        self.halvings: list = []

    def element_kin(self, U: NDArray, st: ElementStart, h: float, lay: Layout | None = None) -> ElementKin:
        lay = self.lay if lay is None else lay
        ek = ElementKin(te=self.te, h=h, st=st, lay=lay, groups=[], t_gauss=st.t + h * self.te.c,
                        t_cons=st.t + h * self.te.tau_c)
        for grp in self.cm.groups:
            ek.groups.append(grp.unpack(ek, lay.group_view(U, grp.bodies, grp.slots)))
        return ek

    def triplets(self, U: NDArray, st: ElementStart, h: float) -> tuple[NDArray, Triplets]:
        self.lay.rewind()
        cm = self.cm
        ek = self.element_kin(U, st, h)
        res = np.zeros(self.lay.size)
        trip = Triplets(values_only=self.pattern is not None)
        for grp, kin in zip(cm.groups, ek.groups):
            grp.residual(ek, kin, self.lay.group_view(res, grp.bodies, grp.slots), trip, cm.gravity)
        force_residual(cm, ek, res, trip)
        joint_residual(cm, ek, unpack_joints(self.lay, self.te, st, U), res, trip)
        return res, trip

    def evaluate(self, U: NDArray, st: ElementStart, h: float):
        t0 = _time.perf_counter()
        res, trip = self.triplets(U, st, h)
        if self.pattern is None:
            self.pattern = Pattern(trip, self.lay.size)
        J = self.pattern.matrix(trip.values())
        self.n_eval += 1
        self.t_eval += _time.perf_counter() - t0
        return res, J

    def describe(self, index: int) -> str:
        """Name the equation/unknown at global ``index``: body or joint, point, equation."""
        lay, cm = self.lay, self.cm
        if index < 0 or index >= lay.size:
            return "unknown location"
        if index < lay.joint_off:
            b, i, slot = lay.locate_body(index)
            eqs = cm.groups[cm.group_of[b]].equations
            group = max(k for k in eqs if k <= slot)
            return f"body {cm.model.bodies[b].name!r}, {eqs[group]} (component {slot - group}), internal point {i}"
        j, rem = divmod(index - lay.joint_off, lay.p * JOINT_SLOTS)
        i, slot = divmod(rem, JOINT_SLOTS)
        group = max(k for k in JOINT_EQUATIONS if k <= slot)
        return f"joint {cm.model.joints[j].name!r}, {JOINT_EQUATIONS[group]} (component {slot - group}), internal point {i}"


@dataclass(frozen=True)
class SimulationOptions:
    """Options of :func:`simulate`.

    ``newton``: :class:`NewtonOptions`; ``linear_solver``: ``"superlu"`` (default) or
    ``"umfpack"``; ``max_halvings``: how often a failing element is split in two before giving
    up; ``redundant``: ``"resolve"`` (drop dependent constraint equations, log them) or
    ``"error"`` (refuse the model).
    """

    newton: NewtonOptions = NewtonOptions()
    linear_solver: str = "superlu"
    max_halvings: int = 6
    redundant: str = "resolve"


def _predict(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float, w: NDArray,
             prev: tuple | None) -> NDArray:
    """Initial guess.

    After an element of the same length: the previous element's polynomials extrapolated to the
    new internal points (degree p through the start value and the internal values for unknowns
    with end values, degree p - 1 for internal-only unknowns, increments re-based on the new
    start for the rotations).  Otherwise a constant-velocity guess.
    """
    U = np.zeros(lay.size)
    Jv = lay.joint_view(U)
    if prev is not None:
        U_prev, st_prev, h_prev = prev
        if abs(h_prev - h) <= 1e-12 * h:
            Pe, Pi = _extrapolation_matrices(te)

            def ext(Y, y1):  # degree p through (0, y1), (c_j, Y_j)
                return Pe[None, :, 0, None] * y1[:, None] + np.einsum("kj,bjd->bkd", Pe[:, 1:], Y)

            def ext_internal(Y):  # degree p - 1 through the internal values
                return np.einsum("kj,bjd->bkd", Pi, Y)

            for grp in cm.groups:
                grp.predict_warm(te, st, st_prev, lay.group_view(U, grp.bodies, grp.slots),
                                 lay.group_view(U_prev, grp.bodies, grp.slots), ext, ext_internal)
            if cm.nj:
                Jp = lay.joint_view(U_prev)
                Jv[:] = ext_internal(Jp)
                Jv[..., JS:JS + 3] = ext(Jp[..., JS:JS + 3], st_prev.s)
                lam_p = ext(Jp[..., JLAM:JLAM + 6], st_prev.lam)
                lam_end_prev = te.end[0] * st_prev.lam + np.einsum("j,bjd->bd", te.end[1:], Jp[..., JLAM:JLAM + 6])
                Jv[..., JLAM:JLAM + 6] = lam_p - (lam_end_prev - st.lam)[:, None]
                ph = ext(Jp[..., JPHI:JPHI + 3], np.zeros_like(st_prev.s))
                Jv[..., JPHI:JPHI + 3] = ph - np.einsum("j,bjd->bd", te.end[1:], Jp[..., JPHI:JPHI + 3])[:, None]
            return U
    for grp in cm.groups:
        grp.predict_cold(te, st, h, w[grp.vel_cols], lay.group_view(U, grp.bodies, grp.slots))
    if cm.nj:
        Jv[..., JS:JS + 3] = st.s[:, None]
        Jv[..., JLAM:JLAM + 6] = st.lam[:, None]
        for slot, att in ((JNA, cm.att_a), (JNB, cm.att_b)):
            nu = np.zeros((cm.nj, 6))
            for m, cols, B in att.node_velocity_map(cm, st):
                nu[m] = np.einsum("ndc,nc->nd", B, w[cols])
            Jv[..., slot:slot + 6] = nu[:, None]
    return U


def _extrapolation_matrices(te: TimeElement):
    """Lagrange extrapolation from the previous element to the new internal points ``1 + c_k``.

    ``Pe (p, p+1)`` on the nodes ``{0, c}`` (degree p), ``Pi (p, p)`` on the nodes ``c`` (degree p-1).
    """
    from flexmb.dynamics.time_elements import _lagrange_matrices

    Pe, _ = _lagrange_matrices(np.concatenate([[0.0], te.c]), 1.0 + te.c)
    Pi, _ = _lagrange_matrices(te.c, 1.0 + te.c)
    return Pe, Pi


def _end_values(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float, U: NDArray) -> ElementStart:
    x, R, pi = st.x.copy(), st.R.copy(), st.pi.copy()
    extra = dict(st.extra)
    for grp in cm.groups:
        out = grp.end_values(te, st, lay.group_view(U, grp.bodies, grp.slots))
        x[grp.bodies], R[grp.bodies], pi[grp.vel_cols] = out[:3]
        if len(out) > 3:  # body-type end values (e.g. modal coordinates)
            extra.update(out[3])
    Jv = lay.joint_view(U)
    e0, e = te.end[0], te.end[1:]
    if cm.nj:
        s = e0 * st.s + np.einsum("j,bjd->bd", e, Jv[..., JS:JS + 3])
        phi = np.einsum("j,bjd->bd", e, Jv[..., JPHI:JPHI + 3])
        Rr = st.Rr @ rot.exp(phi)
        lam = e0 * st.lam + np.einsum("j,bjd->bd", e, Jv[..., JLAM:JLAM + 6])
        acc = st.acc + phi
    else:
        s, Rr, lam, acc = st.s, st.Rr, st.lam, st.acc
    # re-orthonormalize the reference rotations (round-off only)
    R = _orthonormalize(R) if cm.nb else R
    Rr = _orthonormalize(Rr) if cm.nj else Rr
    new = ElementStart(t=st.t + h, x=x, R=R, pi=pi, s=s, Rr=Rr, lam=lam, acc=acc, lam_end=lam, extra=extra)
    # Gauge reset of the multipliers: (pi, lambda) -> (pi + Lambda(lambda), 0).  The homogeneous
    # solution of lambda' + S lambda = 0 started from lambda2, transported to the bodies, solves the
    # bodies' homogeneous equation too, so the next element starts with pi = p (the momenta) and
    # lambda = 0: the multipliers stay impulses over one element instead of growing without bound.
    if cm.nj:
        new.pi = pi + multiplier_momenta(cm, new, lam)
        new.lam = np.zeros_like(lam)
    return new


def _orthonormalize(R: NDArray) -> NDArray:
    u, _, vt = np.linalg.svd(R)
    return u @ vt


class _Recorder:
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
        cm = self.cm
        Lam = multiplier_momenta(cm, st, st.lam)
        w, mu, labels = node_velocity(cm, st, Lam, multiplier=True)
        self.t.append(st.t)
        # the scheme's own momenta at the node: p = pi + Lambda (equal to pi after the gauge reset)
        self.mom.append((st.pi + Lam)[self._first6].reshape(cm.nb, 6))
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
        self.pe.append(potential_energy(cm, st))
        if cm.nj:
            xa, Ra = cm.att_a.node_pose(cm, st)
            xb, _ = cm.att_b.node_pose(cm, st)
            nus = []
            for att in (cm.att_a, cm.att_b):
                nu = np.zeros((cm.nj, 6))
                for m, cols, B in att.node_velocity_map(cm, st):
                    nu[m] = np.einsum("ndc,nc->nd", B, w[cols])
                nus.append(nu)
            na, nb_ = nus
            RaT = np.swapaxes(Ra, 1, 2)
            sdot = np.einsum("jde,je->jd", RaT, nb_[:, :3] - na[:, :3] - rot.cross(na[:, 3:], xb - xa))
            wr = np.einsum("jde,je->jd", RaT, nb_[:, 3:] - na[:, 3:])
            self.srel.append(st.s.copy())
            self.rrel.append(st.acc.copy())
            self.vrel.append(np.concatenate([sdot, wr], axis=1))
            self.lam.append((st.lam if st.lam_end is None else st.lam_end).copy())
            self._impulse(st, mu, labels, self.vrel[-1], 1.0)
        return w

    def subnode(self, st: ElementStart) -> None:
        """A node inside a halved step: not output, but its impulses count for the reactions."""
        if self.cm.nj:
            _, mu, labels = node_velocity(self.cm, st, multiplier=True)
            self._impulse(st, mu, labels, None, 0.0)

    def _impulse(self, st, mu, labels, qdot, output: float) -> None:
        self.imp_t.append(st.t)
        self.imp.append(node_record(self.cm, st, mu, labels, qdot))
        self.imp_out.append(output)

    def internal(self, te: TimeElement, st: ElementStart, h: float, lay: Layout, U: NDArray, xb: NDArray | None = None):
        """Record an element: its internal points and, for the reactions, ``xb (nj, p, 3)`` B's origins there."""
        self.ti.extend(st.t + h * te.c)
        if not self.cm.nj:
            return
        Jv = lay.joint_view(U)
        self.imp_el.append(element_record(te, Jv[..., JLAM:JLAM + 6], xb))
        for i in range(te.p):
            self.force.append(Jv[:, i, JQ:JQ + 3].copy())
            self.moment.append(Jv[:, i, JQ + 3:JQ + 6].copy())

    def solution(self, meta: dict) -> Solution:
        cm = self.cm
        nj = cm.nj
        kw = {}
        if nj:
            fn, mn = node_reactions(cm, np.array(self.imp_t), np.array(self.imp),
                                    np.array(self.imp_el).reshape(-1, nj, 6 * self.te.p - 3),
                                    np.array(self.imp_out) > 0.5, self.te)
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


def simulate(model: Model, t_end: float, h: float, *, p: int | TimeElement = 1, t0: float = 0.0,
             options: SimulationOptions | None = None, show_progress: bool | None = None,
             checkpoint: str | Path | None = None, checkpoint_every: float = 60.0,
             on_step: Callable | None = None, rtol: float | None = None, atol: float | None = None,
             t_eval=None) -> Solution:
    """Integrate ``model`` from ``t0`` to ``t_end`` with time elements of length ``h``, or with steps
    chosen from a local error estimate when ``rtol``/``atol`` are given (``h`` is then the first step).

    Parameters
    ----------
    model : Model
    t_end : float
        Final time [s] (> ``t0``).
    h : float
        Time-element length [s]; the last element is shortened to land on ``t_end``.
    p : int or TimeElement
        Order of the time elements (1: implicit-midpoint-equivalent, nodal order 2; 2: order 4;
        3: order 6).
    options : SimulationOptions, optional
    show_progress : bool, optional
        Progress bar with ETA (default: only on a terminal; elsewhere INFO log lines every
        ``PROGRESS_LOG_SECONDS`` of wall time).
    checkpoint : path, optional
        ``.npz`` file where the results so far and the engine state are written every
        ``checkpoint_every`` seconds of wall time, at the end, and when the run fails or is
        interrupted; :func:`resume` continues such a run bit-identically.
    rtol, atol : float, optional
        Error-controlled steps: each step is taken once with ``h`` and once as two halves; the
        difference, divided by ``2^(2p) - 1`` (the nodal order is ``2p``), estimates the local error
        ``e`` of the two halves, which are kept when ``err = e (t_end - t0) / h <= 1`` (error per
        unit step, so that the local errors add up to at most the tolerance over the run) with
        ``e = max |dx| / (atol + rtol |x|)`` over the bodies' reference points (rotations count as
        ``angle x model size``; ``atol`` in the model's length unit, default ``rtol x model size``);
        otherwise the step is retried smaller.  The next step is ``h (0.9 / err)^(1 / 2p)`` within
        [0.2 h, 4 h].  ``meta["accepted_steps"]`` and
        ``meta["rejected_steps"]`` count them; ``stats`` lists every element solved and kept.
    on_step : callable, optional
        ``on_step(t, state) -> stop`` after every accepted time node; ``state`` has ``t``, ``body_position``,
        ``body_rotation``, ``body_velocity``, ``body_angular_velocity`` (nb, ...) and ``kinetic_energy``,
        ``potential_energy``; a truthy return ends the run there (``meta["stopped_by"] = "on_step"``).
    t_eval : array_like, optional
        Times [s] (strictly increasing, within ``[t0, t_end]``) at which to return the results,
        interpolated to order 4 from the nodes (:meth:`Solution.at`); by default the nodes.

    Returns
    -------
    Solution
        Node values at ``t0, t0 + h, ...`` or at ``t_eval`` (joint reactions recovered at the nodes to
        the nodal order, see :mod:`flexmb.dynamics.reactions`); the reactions as solved for at the
        internal points too.

    Raises
    ------
    ConvergenceError
        When an element fails even after ``max_halvings`` step halvings; the message names the
        time, the element and the equation with the largest Newton correction.  Its ``solution``
        attribute holds the results up to the last accepted node (also saved to ``checkpoint``).
    SimulationInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``), with the partial ``solution`` likewise.
    """
    t_end, h, t0 = check_simulate_args(model, t_end, h, p, t0, options)  # ModelError naming the argument
    options = options or SimulationOptions()
    if rtol is not None or atol is not None:
        rtol = 0.0 if rtol is None else float(rtol)
        if not (np.isfinite(rtol) and rtol >= 0) or (atol is not None and not (np.isfinite(atol) and atol > 0)):
            raise ModelError(f"rtol={rtol!r}, atol={atol!r}: give finite tolerances, rtol >= 0 and atol > 0 "
                             f"(e.g. rtol=1e-6, atol=1e-8 m)")
        if rtol == 0 and atol is None:
            raise ModelError("rtol=0 needs an absolute tolerance atol > 0 [model length unit]")
    run = Run.start(model, t_end, h, p, t0, options)
    if rtol is not None:
        run.tolerances = (rtol, atol if atol is not None else rtol * run.cm.length_scale)
        run.dense = t_eval is not None
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).reshape(-1)
        if t_eval.size and np.all(np.isfinite(t_eval)) and (t_eval.min() < t0 or t_eval.max() > t_end):
            raise ModelError(f"t_eval spans [{t_eval.min():.6g}, {t_eval.max():.6g}] s, outside the run "
                             f"[{t0:.6g}, {t_end:.6g}] s; request times within the simulated interval")
    sol = run.go(show_progress=show_progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                 on_step=on_step)
    return sol if t_eval is None else sol.at(t_eval)


def resume(path: str | Path, model: Model | None = None, *, t_end: float | None = None,
           show_progress: bool | None = None, checkpoint: str | Path | None = "same",
           checkpoint_every: float = 60.0, on_step: Callable | None = None) -> Solution:
    """Continue a run from its checkpoint file (see :func:`simulate`), bit-identically to a run that
    was never interrupted.

    ``model``: the model of the run; needed only when the checkpoint could not store it (a model
    holding lambdas without ``cloudpickle`` installed).  ``t_end``: a new final time (default: the
    original one).  ``checkpoint``: where to keep checkpointing (default: the same file; None: off).
    """
    from flexmb.dynamics.checkpoint import load_run

    run = load_run(path, model, t_end)
    target = Path(path) if checkpoint == "same" else checkpoint
    return run.go(show_progress=show_progress, checkpoint=target, checkpoint_every=checkpoint_every, on_step=on_step)


#: wall-time interval of the INFO progress lines when no progress bar is shown [s]
PROGRESS_LOG_SECONDS = 10.0


class Run:
    """One simulation in progress: the compiled model, the engine state and the results so far."""

    def __init__(self, model, t_end, h, te, t0, options):
        self.model, self.t_end, self.h, self.te, self.t0, self.options = model, t_end, h, te, t0, options
        self.cm = compile_model(model)
        x_init, R_init, _ = initial_configuration(self.cm)
        _handle_redundancy(self.cm, SimpleNamespace(x=x_init, R=R_init), options, t0)
        self.system = ElementSystem(self.cm, te)
        self.solver = linear_solver(options.linear_solver)
        self.rec = _Recorder(self.cm, te)
        self._plain_lay = None  # a layout without index replay, for the recorder's own evaluations
        self.prev = None
        self.n_el = 0
        self.wall = 0.0
        self.fac_time = 0.0
        self.stopped_by = None
        #: (rtol, atol) for error-controlled steps, None for fixed steps
        self.tolerances = None
        self.h_next = h
        self.accepted = 0
        self.rejected = 0
        #: error-controlled steps also bound the error of the results between the nodes (t_eval)
        self.dense = False
        #: lever length of each body [m] (error measure of rotations)
        self.lever = body_lengths(self.cm)

    @classmethod
    def start(cls, model, t_end, h, p, t0, options) -> "Run":
        run = cls(model, t_end, h, time_element(p), t0, options)
        run.st, w0 = initial_state(run.cm, t0)
        run.magnitudes = model_magnitudes(run.cm, run.st, w0, t0, t_end)
        log.debug("Newton scales: %s", run.magnitudes)
        run.scale = unknown_scales(run.cm, run.system.lay, run.magnitudes, h)
        run.w = run.rec.node(run.st)
        return run

    def factor(self, A):
        t = _time.perf_counter()
        try:
            return self.solver(A)
        finally:
            self.fac_time += _time.perf_counter() - t

    def step(self) -> None:
        """Advance one time element (subdivided when Newton fails) and record it."""
        if self.tolerances is not None:
            return self.step_controlled()
        h_el = min(self.h, self.t_end - self.st.t)
        st_new, U, res, retries = _advance(self.system, self.st, h_el, self.w, self.prev, self.scale, self.factor,
                                           self.options)
        self._record(res, retries)
        self.prev = (res[-1][2], res[-1][0], res[-1][1])
        self.st = st_new
        self.w = self.rec.node(st_new)
        self.n_el += 1
        self._adapt_scales(res[-1][2], self.h)
        self._check_dropped()

    def _error(self, a, b, h: float) -> float:
        """Scaled difference of two end states: the bodies' reference points, rotations (angle x the
        body's lever length, :func:`flexmb.dynamics.scales.body_lengths`) and velocities (times ``h``: the displacement they cause over a step; near a turning
        point a phase error shows in the velocities before the positions)."""
        rtol, atol = self.tolerances
        L = self.lever  # per body: a rotation error moves the body's points by angle x lever
        dx = np.linalg.norm(a.x - b.x, axis=1)
        dr = np.linalg.norm(rot.log(a.R @ np.swapaxes(b.R, 1, 2)), axis=1) * L if self.cm.nb else dx
        wa, wb = node_velocity(self.cm, a), node_velocity(self.cm, b)
        first6 = self.cm.vel_off[:, None] + np.arange(6)
        dw = (wa - wb)[first6]
        dv = h * np.maximum(np.linalg.norm(dw[:, :3], axis=1), np.linalg.norm(dw[:, 3:], axis=1) * L)
        xs = np.linalg.norm(b.x, axis=1)
        return float(np.max(np.maximum(np.maximum(dx, dv), dr) / (atol + rtol * xs), initial=0.0))

    def _dense_error(self, a, wa, mid, b, wb, h: float) -> float:
        """Scaled distance between the computed mid node of a step and the order-4 interpolation
        (:mod:`flexmb.dense_output`) through the step's end nodes: positions and rotations x lever."""
        rtol, atol = self.tolerances
        cols = self.cm.vel_off[:, None] + np.arange(6)
        t2 = np.array([0.0, h])
        x = np.stack([a.x, b.x])
        v = np.stack([wa[cols[:, :3]], wb[cols[:, :3]]])
        om = np.stack([wa[cols[:, 3:]], wb[cols[:, 3:]]])
        xi = hermite_positions(t2, x, v, np.array([h / 2]))[0]
        Ri = hermite_rotations(t2, np.stack([a.R, b.R]), om, np.array([h / 2]))[0]
        dx = np.linalg.norm(xi - mid.x, axis=1)
        dr = np.linalg.norm(rot.log(Ri @ np.swapaxes(mid.R, 1, 2)), axis=1) * self.lever
        return float(np.max(np.maximum(dx, dr) / (atol + rtol * np.linalg.norm(mid.x, axis=1)), initial=0.0))

    def step_controlled(self) -> None:
        """One error-controlled step: ``h`` and two ``h/2`` from the same start; keep the halves
        when the estimated error is within the tolerances, else retry with a smaller ``h``."""
        p = self.te.p
        while True:
            h = min(self.h_next, self.t_end - self.st.t)
            whole, _, _, _ = _advance(self.system, self.st, h, self.w, None, self.scale, self.factor, self.options)
            mid, U1, res1, r1 = _advance(self.system, self.st, h / 2, self.w, None, self.scale, self.factor, self.options)
            w_mid = node_velocity(self.cm, mid)
            end, U2, res2, r2 = _advance(self.system, mid, h / 2, w_mid, (res1[-1][2], res1[-1][0], res1[-1][1]),
                                         self.scale, self.factor, self.options)
            # error of the two halves, per unit step: the errors of the steps add up to at most the
            # tolerance over the whole run (error per unit step, so the global error is controlled)
            err = self._error(whole, end, h) / (2.0 ** (2 * p) - 1.0) * (self.t_end - self.t0) / h
            # and results between the nodes (dense output, order 4): the cubic through the step's
            # ends misses the computed mid node by ~16 x the error of the cubics on the halves
            # (only when results between the nodes are requested: t_eval)
            err_dense = (self._dense_error(self.st, self.w, mid, end, node_velocity(self.cm, end), h) / 16.0
                         if self.dense else 0.0)
            grow = min(4.0 if err == 0 else 0.9 * err ** (-1.0 / (2 * p)),
                       4.0 if err_dense == 0 else 0.9 * err_dense ** (-0.25))
            grow = min(4.0, max(0.2, grow))
            err = max(err, err_dense)
            if err <= 1.0:
                break
            self.rejected += 1
            self.h_next = h * grow
            if self.h_next < 1e-12 * max(1.0, abs(self.t_end)):
                raise ConvergenceError(
                    f"error-controlled step at t = {self.st.t:.6g} s: the step fell below 1e-12 s without meeting "
                    f"rtol/atol = {self.tolerances}; loosen the tolerances", time=self.st.t)
        self.accepted += 1
        self._record(res1, r1)
        self.rec.node(mid)
        self._record(res2, r2)
        self.prev = (res2[-1][2], res2[-1][0], res2[-1][1])
        self.st = end
        self.w = self.rec.node(end)
        self.n_el += 2
        self.h_next = h * grow
        self._adapt_scales(res2[-1][2], self.h_next)
        self._check_dropped()

    def _adapt_scales(self, U, h: float) -> None:
        """Newton's absolute scales follow the motion (speeds and joint reactions of the last element),
        never below the model's own magnitudes (:mod:`flexmb.dynamics.scales`)."""
        mag = adapted(self.magnitudes, self.cm, self.system.lay, self.w, U)
        self.scale = unknown_scales(self.cm, self.system.lay, mag, h)

    def _record(self, res, retries) -> None:
        te, lay, rec = self.te, self.system.lay, self.rec
        for k, (s_start, hh, UU, rr) in enumerate(res):
            if k:  # the start of the second half of a halved step
                rec.subnode(s_start)
            rec.internal(te, s_start, hh, lay, UU, self._gauss_xb(s_start, hh, UU))
            rec.stats["t_start"].append(s_start.t)
            rec.stats["h"].append(hh)
            rec.stats["iterations"].append(rr.iterations)
            rec.stats["rate"].append(rr.rate)
            rec.stats["factorizations"].append(rr.n_factor)
            rec.stats["residual"].append(rr.error)
            rec.stats["retries"].append(retries)

    def _gauss_xb(self, st: ElementStart, h: float, U: NDArray) -> NDArray | None:
        """B's origins of the joints at the Gauss points of an element (nj, p, 3)."""
        if not self.cm.nj:
            return None
        if self._plain_lay is None:
            self._plain_lay = make_layout(self.cm, self.te.p, replay=False)
        return self.cm.att_b.pose(self.system.element_kin(U, st, h, lay=self._plain_lay), "gauss").x

    def _check_dropped(self) -> None:
        """The equations dropped as redundant must stay satisfied (they are implied by the others at a
        generic configuration); a violation beyond the assembly tolerance means the choice was wrong."""
        worst = dropped_violation(self.cm, self.st)
        if worst is None or worst[0] <= 1.0:
            return
        v, j, c = worst
        name = self.cm.model.joints[j].name
        comp = COMPONENT_NAMES[c] if isinstance(c, int) else c
        raise ConstraintViolationError(
            f"joint {name!r} component {comp}, dropped at t = {self.t0} as redundant, is violated by {v:.3g} x the "
            f"assembly tolerance at t = {self.st.t:.6g} s: the equations chosen as redundant are not implied by the "
            f"others in this configuration (a singular configuration at the start?). Start the model away from "
            f"singular positions, remove the redundant joint components (e.g. revolute -> spherical or universal), "
            f"or use SimulationOptions(redundant='error') to see the dependent equations",
            time=self.st.t)

    def done(self) -> bool:
        return self.st.t >= self.t_end - 1e-12 * max(1.0, abs(self.t_end))

    def go(self, *, show_progress=None, checkpoint=None, checkpoint_every=60.0, on_step=None) -> Solution:
        from flexmb.dynamics.checkpoint import save_run

        if checkpoint_every is None or not checkpoint_every > 0:
            raise ModelError(f"checkpoint_every={checkpoint_every!r} must be a positive number of seconds")
        last_save = last_log = _time.perf_counter()
        start_wall = _time.perf_counter() - self.wall
        t_start = self.st.t
        bar_on = progress_enabled() if show_progress is None else bool(show_progress)
        try:
            with progress(self.t_end - self.t0, desc="simulate", enabled=show_progress) as bar:
                bar.update(self.st.t - self.t0)
                while not self.done():
                    t_prev = self.st.t
                    self.step()
                    bar.update(self.st.t - t_prev)
                    now = _time.perf_counter()
                    self.wall = now - start_wall
                    if checkpoint is not None and now - last_save >= checkpoint_every:
                        save_run(self, checkpoint)
                        last_save = now
                    if not bar_on and now - last_log >= PROGRESS_LOG_SECONDS:
                        frac = (self.st.t - t_start) / max(self.t_end - t_start, 1e-300)
                        eta = (now - start_wall) * (1.0 / max(frac, 1e-12) - 1.0)
                        log.info("simulate: t = %.6g of %.6g s (%.0f %%), %d elements, %.0f s elapsed, ETA %.0f s",
                                 self.st.t, self.t_end, 100 * frac, self.n_el, self.wall, eta)
                        last_log = now
                    if on_step is not None and on_step(self.st.t, self.node_state()):
                        self.stopped_by = "on_step"
                        break
        except (ConvergenceError, ConstraintViolationError) as exc:
            exc.solution = self.solution()
            if checkpoint is not None:
                save_run(self, checkpoint)
            raise
        except KeyboardInterrupt:
            sol = self.solution()
            if checkpoint is not None:
                save_run(self, checkpoint)
            raise SimulationInterrupted(
                f"simulation interrupted at t = {self.st.t:.6g} s; the results up to there are in the exception's "
                f"`solution`" + (f" and in {checkpoint} (continue with flexmb.resume)" if checkpoint else ""),
                sol) from None
        self.wall = _time.perf_counter() - start_wall
        if checkpoint is not None:
            save_run(self, checkpoint)
        return self.solution()

    def node_state(self) -> SimpleNamespace:
        rec = self.rec
        return SimpleNamespace(t=self.st.t, body_position=rec.pos[-1], body_rotation=rec.rotm[-1],
                               body_velocity=rec.vel[-1], body_angular_velocity=rec.om[-1],
                               kinetic_energy=rec.ke[-1], potential_energy=rec.pe[-1])

    def solution(self) -> Solution:
        cm, te, lay, system = self.cm, self.te, self.system.lay, self.system
        meta = {
            "flexmb_version": __version__, "units": self.model.units, "time_element": te.p, "order": te.order,
            "h": self.h, "t0": self.t0, "t_end": self.t_end, "t_reached": float(self.st.t),
            "complete": bool(self.done()), "stopped_by": self.stopped_by,
            "n_bodies": cm.nb, "n_joints": cm.nj, "unknowns_internal": lay.size,
            "unknowns_end": 6 * cm.nb + cm.nv + 12 * cm.nj, "jacobian_nnz": system.pattern.nnz if system.pattern else 0,
            "wall_time": self.wall, "evaluation_time": system.t_eval, "factorization_time": self.fac_time,
            "redundant_constraints": [[cm.model.joints[j].name, str(c)] for j, c in getattr(cm, "redundant_labels", [])],
        }
        if self.tolerances is not None:
            meta.update({"rtol": self.tolerances[0], "atol": self.tolerances[1], "accepted_steps": self.accepted,
                         "rejected_steps": self.rejected})
        rec = self.rec
        meta.update(energy_drift_report(cm, np.array(rec.t), np.array(rec.ke), np.array(rec.pe)))
        return rec.solution(meta)


#: relative energy change of a conservative model above which simulate() logs a WARNING
ENERGY_DRIFT_WARN = 0.05


def is_conservative(cm: CompiledModel) -> bool:
    """True when the model's energy must be constant: gravity, undamped spring-dampers and joint
    springs only (no damping, no drives, no point forces or torques, which may depend on time or
    state and whose work ``potential_energy`` does not account for)."""
    springs = cm.forces.springs
    return (not cm.jnt_drives and not cm.forces.loads and not np.any(cm.jnt_c)
            and (springs is None or not np.any(springs.c)))


def energy_drift_report(cm: CompiledModel, t: NDArray, ke: NDArray, pe: NDArray) -> dict:
    """Energy drift of a conservative model (``{}`` for other models).

    ``energy_drift = max_t |E(t) - E(t0)| / E_scale`` with ``E_scale = max(max_t KE, max_t PE -
    min_t PE)`` (the energy the motion exchanges; floor 1e-300 J), and ``energy_trend`` = (largest
    ``|E - E(t0)|`` over the last 10 % of the nodes minus that over the first 10 %) / ``E_scale``:
    a bounded error has a trend near 0, a secular drift a positive one.  A WARNING is logged when
    ``energy_drift`` exceeds :data:`ENERGY_DRIFT_WARN` (5 %).
    """
    if not is_conservative(cm) or t.size < 2:
        return {}
    E = ke + pe
    scale = max(float(ke.max()), float(np.ptp(pe)), 1e-300)
    err = np.abs(E - E[0])
    n10 = max(1, t.size // 10)
    drift = float(err.max() / scale)
    trend = float((err[-n10:].max() - err[:n10].max()) / scale)
    if drift > ENERGY_DRIFT_WARN:
        k = int(np.argmax(err))
        log.warning(
            "the energy of this conservative model changed by %.3g %% of its scale (%.3g J of %.3g J, at t = %.6g s; "
            "trend first -> last 10 %% of the run: %+.3g %%): the time step is too coarse for this motion; use a "
            "smaller h or a higher order p", 100 * drift, err[k], scale, t[k], 100 * trend,
        )
    return {"energy_drift": drift, "energy_trend": trend, "energy_scale": scale}


def _handle_redundancy(cm: CompiledModel, st, options: SimulationOptions, t0: float = 0.0) -> None:
    if options.redundant not in ("resolve", "error"):
        raise ValueError(f"SimulationOptions.redundant={options.redundant!r}; use 'resolve' or 'error'")
    dep, inconsistent = detect_redundant(cm, st, t0)
    cm.redundant_labels = dep
    if not dep:
        return
    names = ["s_x", "s_y", "s_z", "phi_x", "phi_y", "phi_z"]

    def fmt(labels):
        return ", ".join(f"{cm.model.joints[j].name}:{names[c] if isinstance(c, int) else c}" for j, c in labels)

    if inconsistent:
        raise ModelError(
            f"the joint constraints contradict each other: the dependent equations {fmt(inconsistent)} prescribe "
            f"motion that the other joints forbid (a drive fighting a closed loop or a weld). Remove the drive "
            f"or the conflicting joint"
        )
    txt = fmt(dep)
    if options.redundant == "error":
        raise ModelError(
            f"the model has {len(dep)} redundant (dependent) constraint equations: {txt}. Replace joints "
            f"(e.g. a revolute by a spherical or universal joint) or use SimulationOptions(redundant='resolve')"
        )
    log.warning(
        "the model has %d redundant constraint equations (%s); they are dropped and their reaction "
        "components set to zero (the motion is unaffected; reactions are one particular solution)", len(dep), txt,
    )
    for j, c in dep:
        if isinstance(c, int):
            cm.jnt_constrained[j, c] = False
        else:  # universal cross condition: make it a plain free moment about z
            cm.jnt_universal[j] = False
            cm.jnt_constrained[j] = [True, True, True, False, False, False]


def _advance(system: ElementSystem, st: ElementStart, h: float, w: NDArray, prev, scale, factor, options,
             depth: int = 0):
    """Advance one element of length ``h``, splitting it in halves when Newton fails."""
    cm, lay, te = system.cm, system.lay, system.te
    U0 = _predict(cm, lay, te, st, h, w, prev)
    # a diverging trial iterate may overflow: that is detected (non-finite residual) and handled
    # by halving the step, so numpy's floating-point warnings are not shown
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r = newton_solve(lambda U: system.evaluate(U, st, h), U0, scale, factor, options.newton)
    if r.converged:
        return _end_values(cm, lay, te, st, h, r.U), r.U, [(st, h, r.U, r)], depth
    if depth >= options.max_halvings:
        for t_h, h_h, msg in system.halvings[-options.max_halvings:]:
            log.warning("Newton failed at t=%.6g (h=%.3g: %s); the step was halved", t_h, h_h, msg)
        where = system.describe(r.worst)
        raise ConvergenceError(
            f"Newton did not converge in the time element t = {st.t:.6g} .. {st.t + h:.6g} s "
            f"({r.message}; {r.iterations} iterations, contraction rate {r.rate:.3g}, scaled correction "
            f"{r.error:.3g}) after {depth} step halvings; largest correction: {where}. "
            f"Try a smaller step h, check the model for a singular configuration or a mechanism that locks, "
            f"or loosen SimulationOptions(newton=NewtonOptions(tol=...)).",
            time=st.t, report={"where": where, "message": r.message, "history": r.history},
        )
    log.info("Newton failed at t=%.6g (h=%.3g: %s); halving the step", st.t, h, r.message)
    system.halvings.append((st.t, h, r.message))
    st_mid, _, res1, d1 = _advance(system, st, h / 2, w, None, scale, factor, options, depth + 1)
    w_mid = node_velocity(cm, st_mid)
    st_end, U2, res2, d2 = _advance(system, st_mid, h / 2, w_mid, (res1[-1][2], res1[-1][0], res1[-1][1]),
                                    scale, factor, options, depth + 1)
    return st_end, U2, res1 + res2, max(d1, d2)
