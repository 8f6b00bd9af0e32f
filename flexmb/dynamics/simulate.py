"""The time-marching driver: predict -> Newton on the internal unknowns -> recover end values ->
store, one time element after the other, with step halving and retry when Newton fails.
"""
from __future__ import annotations

import logging
import math
import time as _time
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from flexmb import __version__
from flexmb.model.checks import brief_repr, check_run_args, check_simulate_args, stop_requested
from flexmb.fe.spd_solve import blas_threads
from flexmb.dynamics.solve.heap import keep_freed_blocks
from flexmb.dynamics.io.checkpoint import Checkpoints, load_run
from flexmb.dynamics.io.interrupts import setup_interrupted
from flexmb.dynamics.node.least_norm import add_least_norm, reaction_set
from flexmb.dynamics.node.monitor import RedundancyMonitor
from flexmb.dynamics.node.redundancy import (constrained_labels, detect_redundant, dropped_violation, format_labels,
                                             null_basis, pad_monitor_stats)
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.energy import energy_drift_report, is_conservative
from flexmb.dynamics.modal_range import check_initial
from flexmb.dynamics.energy_audit import ElementAudit, balance_report, model_energy
from flexmb.dynamics.elements.joints import consistent_transport
from flexmb.dynamics.solve.linsolve import expect_factorizations, linear_solver
from flexmb.dynamics.solve.evaluation import JOINT_EQUATIONS, ElementSystem, make_layout  # noqa: F401 (re-exported)
from flexmb.dynamics.solve.newton import NewtonOptions
from flexmb.dynamics.io.recorder import Recorder
from flexmb.dynamics.step.advance import STAGES, Stages, advance, solve_element
from flexmb.dynamics.step.compiled_element import element_stage
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.dynamics.step.state import RunState
from flexmb.dynamics.variants.step_control import StepControl
from flexmb.dynamics.variants.symmetric_projection import SymmetricProjection, symmetric_projection
from flexmb.dynamics.solve.scales import adapted, body_lengths, model_magnitudes, unknown_scales
from flexmb.dynamics.system import (COMPONENT_NAMES, CompiledModel, ElementStart, compile_model, initial_configuration, initial_state)
from flexmb.dynamics.time_elements import TimeElement, time_element
from flexmb.errors import ConstraintViolationError, ConvergenceError, ModelError, SimulationInterrupted
from flexmb.model.model import Model
from flexmb.progress import progress, progress_enabled
from flexmb.results.solution import Solution

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class SimulationOptions:
    """Options of :func:`simulate`.

    ``newton``: :class:`NewtonOptions`; ``linear_solver``: ``"superlu"`` (default: a compiled
    refactorization along the first SuperLU factorization's pivots, dense LU up to 64 unknowns;
    :mod:`flexmb.dynamics.solve.linsolve`), ``"superlu-cached"``, ``"superlu-colamd"`` or ``"umfpack"``; ``max_halvings``: how often a failing element is split in two before giving
    up; ``redundant``: ``"resolve"`` (drop dependent constraint equations, log them) or
    ``"error"`` (refuse the model); ``step_error``: the local error estimate of error-controlled
    steps, ``"history"`` (from the last nodes, no extra solve) or ``"doubling"`` (step doubling,
    1.5 solved elements per recorded one), see :mod:`flexmb.dynamics.variants.step_control`;
    ``resting``: how a plane contact that comes to rest is held, ``"constraint"`` (a
    constraint row of the time element while its reaction is compressive, :mod:`flexmb.dynamics.impact.resting`)
    or ``"node"`` (a velocity-level hold at the nodes only: it sinks by ``|a_n| h^2 / 2`` within an element).
    """

    newton: NewtonOptions = NewtonOptions()
    linear_solver: str = "superlu"
    max_halvings: int = 6
    redundant: str = "resolve"
    step_error: str = "history"
    resting: str = "constraint"


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
        Error-controlled steps (:mod:`flexmb.dynamics.variants.step_control`): the local error of each step,
        estimated from the last nodes without an extra solve (``C_p h^(2p+1) y^(2p+1)``; step
        doubling for the first steps or with ``SimulationOptions(step_error="doubling")``), per body
        ``max(|dx|, |d angle| x lever) / (atol + rtol |x|)`` (``atol`` in the model's length unit,
        default ``rtol x model size``), divided by the step's share of the tolerance (shared equally
        among the run's steps; unspent shares carry over, so that the estimates add up to at most
        the tolerance: error growth along the run is not bounded), must be <= 1, else the step is
        retried smaller; a PI controller chooses the next step, turning no body by more than 2.5 rad
        per element nor 5 rad over the estimate's ``p + 1`` elements.  With ``t_eval`` the requested times
        become nodes where they are sparser than the steps.  ``meta["accepted_steps"]`` (recorded
        steps), ``meta["rejected_steps"]`` and ``meta["solved_elements"]`` (every element Newton
        solved) count them, ``meta["calibration"]`` is the factor that step doubling every 32 steps put on
        the estimate; ``stats["local_error"]`` holds each recorded element's estimate [m].
    on_step : callable, optional
        ``on_step(t, state) -> stop`` after every accepted time node; ``state`` has ``t``, ``body_position``,
        ``body_rotation``, ``body_velocity``, ``body_angular_velocity`` (nb, ...) and ``kinetic_energy``,
        ``potential_energy``; a truthy return ends the run there (``meta["stopped_by"] = "on_step"``).
    t_eval : array_like, optional
        Times [s] (strictly increasing, within ``[t0, t_end]``) at which to return the results,
        interpolated to order 4 from the nodes (:meth:`Solution.at`); by default the nodes.

    A model with contacts or impulses (``Model(contacts=, impulses=)``) marches with events
    (:mod:`flexmb.dynamics.impact.march`): elements end at impulse times and where a contact closes,
    the impacts are solved at those nodes (recorded before the jump, listed in ``Solution.events``);
    fixed steps only.

    Returns
    -------
    Solution
        Node values at ``t0, t0 + h, ...`` or at ``t_eval`` (joint reactions recovered at the nodes to
        the nodal order, see :mod:`flexmb.dynamics.node.reactions`); the reactions as solved for at the
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
    if not isinstance(model, Model):
        raise ModelError(f"simulate: model={brief_repr(model)} ({type(model).__name__}) is not a flexmb.Model; "
                         f"build one with fm.Model(bodies, joints, forces)")
    with setup_interrupted("checking the arguments (it calls the user functions at t0)"):
        t_end, h, t0 = check_simulate_args(model, t_end, h, p, t0, options)  # ModelError naming the argument
        check_initial(model)  # an initial elastic state beyond any modal body's range (dynamics/modal_range.py)
    options = options or SimulationOptions()
    rtol, atol, t_eval = check_run_args(rtol, atol, t_eval, on_step, t0, t_end)  # ModelError naming the argument
    with setup_interrupted("setting up the simulation"), blas_threads(1):  # the set-up's dense algebra
        # (redundancy SVDs) like the run's: one BLAS thread
        run = Run.start(model, t_end, h, p, t0, options)
        if rtol is not None:
            run.tolerances = (rtol, atol if atol is not None else rtol * run.cm.length_scale)
            run.control = StepControl(run, *run.tolerances, t_eval=t_eval, estimator=options.step_error)
        if model.contacts or model.impulses:  # events in the march (flexmb/dynamics/impact/march.py)
            from flexmb.dynamics.impact.march import EventMonitor

            run.events = EventMonitor(run)
    sol = run.go(show_progress=show_progress, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                 on_step=on_step)
    return sol if t_eval is None else sol.at(t_eval)


def resume(path: str | Path, model: Model | None = None, *, t_end: float | None = None,
           show_progress: bool | None = None, checkpoint: str | Path | None = "same",
           checkpoint_every: float = 60.0, on_step: Callable | None = None,
           allow_model_change: bool = False) -> Solution:
    """Continue a run from its checkpoint (see :func:`simulate`), bit-identically to a run that was
    never interrupted.

    ``model``: the model of the run; needed only when the checkpoint could not store it (a model
    holding lambdas without ``cloudpickle`` installed).  Another model (:mod:`flexmb.dynamics.io.fingerprint`:
    what is and is not compared) is a ModelError naming what differs, unless ``allow_model_change=True``
    and it has the same bodies and joints, which hold at the checkpoint's state to the model's
    assembly tolerance (``meta["model_changes"]`` records it).  ``t_end``: a new final time (default:
    the original one).  ``checkpoint``: where to go on checkpointing (default: the same; None: off).
    """
    check_run_args(None, None, None, on_step, 0.0, 1.0)  # on_step callable
    with setup_interrupted("loading the checkpoint"), blas_threads(1):
        run = load_run(path, Run, SimulationOptions, model, t_end, allow_model_change=allow_model_change)
    target = Path(path) if checkpoint == "same" else checkpoint
    return run.go(show_progress=show_progress, checkpoint=target, checkpoint_every=checkpoint_every, on_step=on_step)


def load_checkpoint(path: str | Path, model: Model | None = None) -> Solution:
    """The results a checkpoint holds (up to its last node), without continuing the run; ``model`` as
    for :func:`resume`."""
    with setup_interrupted("loading the checkpoint"), blas_threads(1):
        return load_run(path, Run, SimulationOptions, model).solution()


#: the last element of a fixed-step run is stretched by up to this fraction of h instead of leaving a sliver
SLIVER = 1e-3

#: wall-time interval of the INFO progress lines when no progress bar is shown [s]
PROGRESS_LOG_SECONDS = 10.0


def _state_attribute(name: str) -> property:
    """``run.<name>``: the attribute ``name`` of the run's :class:`~flexmb.dynamics.step.state.RunState`."""

    def get(run):
        return getattr(run.state, name)

    def set_(run, value):
        setattr(run.state, name, value)

    return property(get, set_, doc=f"``state.{name}`` (:class:`~flexmb.dynamics.step.state.RunState`)")


class Run:
    """One simulation in progress: its settings (model, times, time element, options), the compiled model
    and the element system, and its state (:attr:`state`, a :class:`~flexmb.dynamics.step.state.RunState`:
    the node, the results so far, the constraint selection, the counters), which the run reads and writes
    as its own attributes (``run.st`` is ``run.state.st``) and the checkpoint saves whole."""

    def __init__(self, model, t_end, h, te, t0, options, selection: Selection | None = None,
                 monitor: RedundancyMonitor | None = None):
        self.model, self.t_end, self.h, self.te, self.t0, self.options = model, t_end, h, te, t0, options
        keep_freed_blocks()  # large work arrays reused, not page-faulted in at every iteration (glibc)
        self.cm = compile_model(model, contact_rows=getattr(options, "resting", "constraint") == "constraint")
        x_init, R_init, _ = initial_configuration(self.cm)
        monitor = monitor if monitor is not None else RedundancyMonitor()
        selection = _handle_redundancy(self.cm, SimpleNamespace(x=x_init, R=R_init), options, t0, monitor, selection)
        redundant = bool(selection.redundant)
        # the switched equations (the contacts' rows, flexmb.dynamics.impact.resting) start off: the event
        # monitor keeps a row while its contact rests
        if selection.switched:
            selection = selection.changed(drop=selection.switched)
        #: everything the run changes as it marches (flexmb.dynamics.step.state.RunState)
        self.state = RunState(selection=selection, monitor=monitor, rec=Recorder(self.cm, te, selection),
                              projection=SymmetricProjection(self.cm, te) if symmetric_projection(te) else None)
        self.system = ElementSystem(self.cm, te, selection=selection)
        self.solver = linear_solver(options.linear_solver)
        # the second column ordering only where the run can repay it (flexmb.dynamics.solve.linsolve.ata_repays):
        # from the run's arguments alone, so that a resumed run (built with them) decides alike
        expect_factorizations(self.solver, np.ceil((t_end - t0) / h))
        self.system.audit = ElementAudit(self)  # every element's energy balance (dynamics/energy_audit.py)
        if redundant:  # redundant loops: the choice of dropped equations is monitored
            self.state.rec.stats.update(constraint_conditioning=[], redundancy_quality=[], reselected=[])
        self._plain_lay = None  # the recorder's own layout (its index replay separate from Newton's)
        #: lever length of each body [m] (error measure of rotations)
        self.lever = body_lengths(self.cm)
        #: the step's replaceable parts (flexmb.dynamics.step.advance.Stages): tests and instrumentation;
        #: the default ones with the compiled element of a rigid model where it applies (a backend of the
        #: same stages: flexmb.dynamics.step.compiled_element)
        element = element_stage(self.system)
        self.stages = STAGES if element is None else replace(STAGES, element=element)

    # the run's state as its own attributes (flexmb.dynamics.step.state.RunState documents them)
    st = _state_attribute("st")
    w = _state_attribute("w")
    prev = _state_attribute("prev")
    scale = _state_attribute("scale")
    magnitudes = _state_attribute("magnitudes")
    selection = _state_attribute("selection")
    monitor = _state_attribute("monitor")
    rec = _state_attribute("rec")
    control = _state_attribute("control")
    tolerances = _state_attribute("tolerances")
    projection = _state_attribute("projection")
    events = _state_attribute("events")
    n_el = _state_attribute("n_el")
    wall = _state_attribute("wall")
    fac_time = _state_attribute("fac_time")
    singular_t = _state_attribute("singular_t")
    stopped_by = _state_attribute("stopped_by")
    model_changes = _state_attribute("model_changes")

    @classmethod
    def start(cls, model, t_end, h, p, t0, options, stages: Stages | None = None, *,
              selection: Selection | None = None, monitor: RedundancyMonitor | None = None) -> "Run":
        """A run of ``model`` from ``t0`` to ``t_end`` with elements of length ``h`` and order ``p`` (the
        arguments of :func:`simulate`, checked there); ``stages``: the step's replaceable parts
        (:class:`~flexmb.dynamics.step.advance.Stages`, for tests and instrumentation); ``selection``: the
        equations to drop at t0 instead of the run's own choice (a
        :class:`~flexmb.dynamics.node.selection.Selection` of the model's compiled constraint set, dropping as
        many equations as are redundant); ``monitor``: the watch over that choice
        (:class:`~flexmb.dynamics.node.monitor.RedundancyMonitor`, e.g. ``reselect_tol=0`` never revises it)."""
        run = cls(model, t_end, h, time_element(p), t0, options, selection, monitor)
        if stages is not None:
            run.stages = stages
        run.st, w0 = initial_state(run.cm, t0, run.selection)
        run.magnitudes = model_magnitudes(run.cm, run.st, w0, t0, t_end)
        log.debug("Newton scales: %s", run.magnitudes)
        run.scale = unknown_scales(run.cm, run.system.lay, run.magnitudes, h, consistent_transport(run.te))
        run.w = run.rec.node(run.st)
        return run

    def factor(self, A):
        t = _time.perf_counter()
        try:
            return self.solver(A)
        finally:
            self.state.fac_time += _time.perf_counter() - t

    def step(self) -> None:
        """Advance one time element (subdivided when Newton fails) and record it; with tolerances,
        one error-controlled step (:mod:`flexmb.dynamics.variants.step_control`)."""
        if self.state.control is not None:
            return self.state.control.step(self)
        if self.state.events is not None:  # contacts and impulses: events located (flexmb/dynamics/impact/march.py)
            return self.state.events.step(self)
        out = self.solve_element(self.state.st, self.next_h(), self.state.w, self.state.prev)  # predict -> solve -> end values
        self.commit(out, self.h)  # record -> node projection -> Newton's scales -> dropped equations

    def next_h(self) -> float:
        """The next fixed-step element's length [s]."""
        rest = self.t_end - self.state.st.t
        # the last element takes what is left when that is at most SLIVER longer than h: node times are
        # sums of h whose round-off (1e-7 s after 240,000 steps of 0.0987 s) would leave a sliver element
        # of 1e-7 s at the end, on which Newton stalls (its multipliers of 1 / h)
        # (a remainder within done()'s tolerance is skipped as before: the element is then exactly h)
        return rest if rest - self.h > self._end_tol() and rest <= self.h * (1.0 + SLIVER) else min(self.h, rest)

    def solve_element(self, st: ElementStart, h: float, w: NDArray, prev: ElementPiece | None) -> ElementOutcome:
        """Predict, solve and end values of the element of length ``h`` from ``st`` (halved when Newton
        fails; :mod:`flexmb.dynamics.step.advance`), wrapped by the symmetric projection when the time
        element asks for it (which re-solves the element from its own start nodes through the solve
        stage, :func:`flexmb.dynamics.step.advance.solve_element`)."""
        system, scale, factor, options, stages = self.system, self.state.scale, self.factor, self.options, self.stages
        if self.state.projection is not None:  # symmetric projection of the node momenta (issue 8 section 3)

            def solve(start, U0):  # a warm re-solve passes the root checks like every solved element (the
                # energy audit books its work there)
                out = solve_element(system, start, h, U0, scale, factor, options, stages)
                if out.converged:
                    out.refusal = stages.refusal(system, U0, out)
                return out

            return self.state.projection.step(
                self, st, h, lambda start: advance(system, start, h, w, prev, scale, factor, options, stages), solve)
        return advance(system, st, h, w, prev, scale, factor, options, stages)

    def commit(self, out: ElementOutcome, h_scale: float, local_error=None) -> None:
        """Node and record stages of a solved step ``out``: record its pieces, move to its end node (the
        node velocities projected on the velocity constraints, :meth:`Recorder.node`), adapt Newton's
        scales to a step ``h_scale`` and check the dropped constraint equations."""
        self._record(out)
        if local_error is not None:
            self.state.rec.stats["local_error"].extend([local_error] * len(out.pieces))
        self.state.prev = out.last
        self.state.st = out.end
        self.state.w = self.state.rec.node(out.end)
        self.state.n_el += 1
        self._adapt_scales(out.U, h_scale)
        self._check_dropped()

    def _adapt_scales(self, U, h: float) -> None:
        """Newton's absolute scales follow the motion (speeds and joint reactions of the last element),
        never below the model's own magnitudes (:mod:`flexmb.dynamics.solve.scales`)."""
        mag = adapted(self.state.magnitudes, self.cm, self.system.lay, self.state.w, U)
        self.state.scale = unknown_scales(self.cm, self.system.lay, mag, h, consistent_transport(self.te))

    def _record(self, out: ElementOutcome) -> None:
        te, lay, rec = self.te, self.system.lay, self.state.rec
        stats = rec.stats
        for k, piece in enumerate(out.pieces):
            s_start, hh, UU, rr = piece.start, piece.h, piece.U, piece.result
            if k:  # the start of the second half of a halved step
                rec.subnode(s_start)
            rec.internal(te, s_start, hh, lay, UU, self._gauss_xb(piece))
            rec.add_work(piece.work)  # accepted by the audit (variants/root_checks.py)
            stats["t_start"].append(s_start.t)
            stats["h"].append(hh)
            stats["iterations"].append(rr.iterations)
            stats["rate"].append(rr.rate)
            stats["factorizations"].append(rr.n_factor)
            stats["residual"].append(rr.error)
            stats["retries"].append(out.halvings)
            if math.isfinite(rr.residual):  # converged in the residual: a (nearly) rank-deficient matrix
                self.state.singular_t.append(s_start.t)

    def _gauss_xb(self, piece: ElementPiece) -> NDArray | None:
        """B's origins of the joints at the Gauss points of a solved element (nj, p, 3): the piece's own
        where its solve computed them (``piece.xb``), else from its unknowns; None when the reactions do not
        need them (no joints; p = 1: no element moments)."""
        if not self.cm.nj or self.te.p < 2:
            return None
        if piece.xb is not None:
            return piece.xb
        st, h, U = piece.start, piece.h, piece.U
        if self._plain_lay is None:
            self._plain_lay = make_layout(self.cm, self.te.p, self.state.selection)
        return self.system.gauss_xb(st, h, U, self._plain_lay)

    def _check_dropped(self) -> None:
        """The equations dropped as redundant must stay satisfied (they are implied by the others at a
        generic configuration); a violation beyond the assembly tolerance means the choice was wrong.
        Then the conditioning of the kept loop equations is monitored (:meth:`_monitor_kept`)."""
        worst = dropped_violation(self.cm, self.state.st, self.state.selection)
        if worst is not None and worst[0] > 1.0:
            v, j, c = worst
            name = self.cm.model.joints[j].name
            comp = COMPONENT_NAMES[c] if isinstance(c, int) else c
            since = self.state.monitor.since(self.t0)
            pad_monitor_stats(self.state.rec.stats)  # the partial results attached to the error stay consistent
            raise ConstraintViolationError(
                f"joint {name!r} component {comp}, dropped at t = {since:.6g} as redundant, is violated by {v:.3g} x "
                f"the assembly tolerance at t = {self.state.st.t:.6g} s: the equations chosen as redundant are not implied "
                f"by the others in this configuration (a singular configuration at the start?). Start the model away "
                f"from singular positions, remove the redundant joint components (e.g. revolute -> spherical or "
                f"universal), or use SimulationOptions(redundant='error') to see the dependent equations",
                time=self.state.st.t)
        self._monitor_kept()

    def _monitor_kept(self) -> None:
        """The choice of dropped equations at the new node (:meth:`flexmb.dynamics.node.monitor.RedundancyMonitor.node`:
        stats, re-selection, adopted by :meth:`select`)."""
        new = self.state.monitor.node(self.cm, self.state.st, self.state.selection, self.state.rec.stats, len(self.state.rec.t),
                                self.state.tolerances is not None)
        if new is not None:
            self.select(new)

    def select(self, selection: Selection) -> None:
        """Keep the constraint equations of ``selection`` (:class:`~flexmb.dynamics.node.selection.Selection`)
        from the next element on: the Jacobian pattern and the layouts' index records are rebuilt (the
        law rows of the swapped components change); the recorder and the node projection read the new
        selection.  The documented way to switch constraint rows on and off during a run
        (``run.select(run.selection.changed(drop=..., keep=...))``)."""
        if selection.key == self.state.selection.key and selection.dropped == self.state.selection.dropped:
            return
        self.state.selection = selection
        self.state.rec.selection = selection
        self.system.pattern = None
        self.system.lay = make_layout(self.cm, self.te.p, selection)
        self._plain_lay = None

    def _end_tol(self) -> float:
        """How close to ``t_end`` a node counts as the end [s]."""
        return 1e-12 * max(1.0, abs(self.t_end))

    def done(self) -> bool:
        return self.state.st.t >= self.t_end - self._end_tol()

    def go(self, *, show_progress=None, checkpoint=None, checkpoint_every=60.0, on_step=None) -> Solution:

        if checkpoint_every is None or not checkpoint_every > 0:
            raise ModelError(f"checkpoint_every={checkpoint_every!r} must be a positive number of seconds")
        # the target is checked before the run (flexmb.dynamics.io.checkpoint_files.check_target)
        ck = None if checkpoint is None else Checkpoints(checkpoint, checkpoint_every, self)
        last_log = _time.perf_counter()
        start_wall = _time.perf_counter() - self.state.wall
        t_start = self.state.st.t
        bar_on = progress_enabled() if show_progress is None else bool(show_progress)
        try:
            # one BLAS thread: the run's dense algebra is small (node blocks, the redundancy monitor's
            # SVDs), where threads cost more than they give: an 80 x 96 SVD took 500 ms with two
            # OpenBLAS threads on a loaded 2-core machine, 5 ms with one
            with blas_threads(1), progress(self.t_end - self.t0, desc="simulate", enabled=show_progress) as bar:
                bar.update(self.state.st.t - self.t0)
                while not self.done():
                    t_prev = self.state.st.t
                    self.step()
                    bar.update(self.state.st.t - t_prev)
                    now = _time.perf_counter()
                    self.state.wall = now - start_wall
                    if ck is not None and ck.due():
                        ck.write(self)
                    if not bar_on and now - last_log >= PROGRESS_LOG_SECONDS:
                        frac = (self.state.st.t - t_start) / max(self.t_end - t_start, 1e-300)
                        eta = (now - start_wall) * (1.0 / max(frac, 1e-12) - 1.0)
                        log.info("simulate: t = %.6g of %.6g s (%.0f %%), %d elements, %.0f s elapsed, ETA %.0f s",
                                 self.state.st.t, self.t_end, 100 * frac, self.state.n_el, self.state.wall, eta)
                        last_log = now
                    if on_step is not None and stop_requested(on_step(self.state.st.t, self.node_state()), self.state.st.t):
                        self.state.stopped_by = "on_step"
                        break
        except (ConvergenceError, ConstraintViolationError) as exc:
            exc.solution = self.solution()
            if ck is not None:
                ck.save_on_failure(self)
            raise
        except KeyboardInterrupt:
            sol = self.solution()
            if ck is not None:
                ck.save_on_failure(self)
            raise SimulationInterrupted(
                f"simulation interrupted at t = {self.state.st.t:.6g} s; the results up to there are in the exception's "
                f"`solution`" + (f" and in {checkpoint} (continue with flexmb.resume)" if checkpoint else ""),
                sol) from None
        self.state.wall = _time.perf_counter() - start_wall
        if ck is not None:
            ck.write(self)
        return self.solution()

    def node_state(self) -> SimpleNamespace:
        return self.state.rec.node_state()  # read-only views (io/recorder.py)

    def solution(self) -> Solution:
        cm, te, lay, system = self.cm, self.te, self.system.lay, self.system
        meta = {
            "flexmb_version": __version__, "units": self.model.units, "time_element": te.p, "order": te.order,
            "h": self.h, "t0": self.t0, "t_end": self.t_end, "t_reached": float(self.state.st.t),
            "complete": bool(self.done()), "stopped_by": self.state.stopped_by,
            "n_bodies": cm.nb, "n_joints": cm.nj, "unknowns_internal": lay.size,
            "unknowns_end": 6 * cm.nb + cm.nv + 12 * cm.nj, "jacobian_nnz": system.pattern.nnz if system.pattern else 0,
            "wall_time": self.state.wall, "evaluation_time": system.t_eval, "factorization_time": self.state.fac_time,
            **self.state.monitor.meta(cm),
        }
        singular = self.state.singular_t
        meta["singular_elements"] = len(singular)  # elements accepted on the residual (newton.py, singular positions)
        if singular:
            log.info("%d time elements passed a (nearly) singular Newton matrix, converged in the residual with "
                     "least-norm corrections (first at t = %.6g s): a singular position of a closed loop; "
                     "meta['singular_elements'] counts them", len(singular), singular[0])
        if self.state.control is not None:
            meta.update(self.state.control.meta())
        if self.state.model_changes:  # resumed with another model (resume(..., allow_model_change=True))
            meta["model_changes"] = self.state.model_changes
        rec = self.state.rec
        meta.update(energy_drift_report(cm, np.array(rec.t), np.array(rec.ke), np.array(rec.pe), model_energy(self)))
        meta.update(balance_report(rec, model_energy(self), is_conservative(cm)))
        if self.state.events is not None:
            meta.update(self.state.events.meta(self.state.events.cs.names))
        held = reaction_set(cm, self.state.monitor, self.state.selection)  # the full set after a re-selection
        if self.state.events is not None:  # the contact rows held: a row switched off carried its reaction before
            held = self.state.events.rows_held(held)
        sol = rec.solution(meta, held)
        if self.state.events is not None:  # the impacts (Solution.events)
            sol.extra.update(self.state.events.arrays(cm))
        return add_least_norm(cm, sol, self.state.monitor, self.state.selection, rec.reactions).attach(self.model)  # the model behind the flexible-body outputs


def _handle_redundancy(cm: CompiledModel, st, options: SimulationOptions, t0: float, monitor: RedundancyMonitor,
                       given: Selection | None = None) -> Selection:
    """The run's initial :class:`~flexmb.dynamics.node.selection.Selection`: the model's full constraint set
    without its redundant equations (:func:`~flexmb.dynamics.node.redundancy.detect_redundant`), or the one
    ``given`` (checked: it must drop as many loop equations as are redundant); sets up ``monitor``."""
    if options.redundant not in ("resolve", "error"):
        raise ValueError(f"SimulationOptions.redundant={options.redundant!r}; use 'resolve' or 'error'")
    full = Selection.full(cm)
    dep, inconsistent = detect_redundant(cm, st, t0)
    if given is not None:
        dep = _given_selection(cm, given, dep)
    if not dep:
        return full

    def fmt(labels):
        return format_labels(cm, labels)

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
        "components set to zero (the motion is unaffected; reactions are one particular solution; the "
        "conditioning of the kept equations is monitored and the choice revised if it degrades)", len(dep), txt,
    )
    sel = given if given is not None else full.dropping(dep)
    monitor.initial = list(sel.redundant)
    monitor.nulls = [null_basis(cm, st)]  # the dependences at t0 (least-norm reactions)
    return sel


def _given_selection(cm: CompiledModel, given: Selection, dep: list) -> list:
    """The dropped labels of a selection given to :meth:`Run.start`, checked against the model: the same
    full constraint set, and as many dropped equations as the model has redundant ones (ModelError).  The
    switched equations (contact rows: :attr:`~flexmb.dynamics.node.selection.Selection.switched`) are not
    counted: they are not redundancy (the run switches them itself, off at the start)."""
    if not isinstance(given, Selection) or given.nj != cm.nj or not (
            np.array_equal(given.full_constrained, cm.jnt_constrained)
            and np.array_equal(given.full_universal, cm.jnt_universal)):
        raise ModelError(f"Run.start(selection={given!r}): not a Selection of this model's constraint equations; "
                         f"make one with Selection.full(compile_model(model, contact_rows=...)).dropping(labels) "
                         f"(contact_rows=True for a model with plane contacts and SimulationOptions(resting="
                         f"'constraint'), the default)")
    mine = given.redundant
    if len(mine) != len(dep) or not set(mine) <= set(constrained_labels(cm)):
        raise ModelError(f"Run.start(selection=...) drops {len(mine)} equation(s) "
                         f"({format_labels(cm, mine) or '-'}); the model has {len(dep)} redundant ones "
                         f"({format_labels(cm, dep) or '-'}): drop as many, from its closed loops")
    return list(mine)
