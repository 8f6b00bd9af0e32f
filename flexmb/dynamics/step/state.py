"""The state of a run in one object: :class:`RunState`, which the checkpoint saves and restores whole.

Everything a run changes as it marches lives here (the model, the options and the compiled data do
not change): the node ``st`` (its time ``st.t``) and its velocities ``w``, the predictor's previous
element ``prev``, Newton's scales and the model's magnitudes, the constraint selection and its
monitor, the recorder (its lists: the results so far), the step controller, the symmetric
projection's history, the event monitor (contacts, impulses) and the counters.  A
:class:`~flexmb.dynamics.simulate.Run` reads and writes them as its own attributes (``run.st`` is
``run.state.st``).

:meth:`RunState.arrays` and :meth:`RunState.history` are what a checkpoint writes
(:mod:`flexmb.dynamics.io.checkpoint`: the bounded engine state, replaced at every write, and the
growing lists, appended to); :meth:`RunState.restore` sets the state from them.  The array names are
the checkpoint format (unchanged since the checkpoints in ``tests/data`` were written).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flexmb.dynamics.step.outcome import ElementPiece
from flexmb.errors import FlexmbError

#: the element-start arrays saved with a node
STATE_FIELDS = ("x", "R", "pi", "s", "Rr", "lam", "acc")


def node_arrays(prefix: str, st) -> dict:
    """The node ``st`` (:class:`~flexmb.dynamics.system.ElementStart`) as named arrays."""
    out = {f"{prefix}/{k}": np.asarray(getattr(st, k)) for k in STATE_FIELDS}
    out[f"{prefix}/t"] = np.asarray(float(st.t))
    if st.lam_end is not None:
        out[f"{prefix}/lam_end"] = np.asarray(st.lam_end)
    for k, v in st.extra.items():
        out[f"{prefix}/extra/{k}"] = np.asarray(v)
    return out


def node_from(prefix: str, ex: dict):
    """The node saved by :func:`node_arrays` under ``prefix``."""
    from flexmb.dynamics.system import ElementStart

    kw = {k: np.array(ex[f"{prefix}/{k}"]) for k in STATE_FIELDS}
    extra = {k[len(prefix) + 7:]: np.array(v) for k, v in ex.items() if k.startswith(f"{prefix}/extra/")}
    lam_end = np.array(ex[f"{prefix}/lam_end"]) if f"{prefix}/lam_end" in ex else None
    return ElementStart(t=float(ex[f"{prefix}/t"]), lam_end=lam_end, extra=extra, **kw)


@dataclass(eq=False)
class RunState:
    """The state of one run (see the module): the node ``st``, its velocities ``w (nv,)``, the previous
    element ``prev`` (:class:`~flexmb.dynamics.step.outcome.ElementPiece`, None after a jump or at the
    start), Newton's ``scale (n,)`` and the model's ``magnitudes``, the constraint ``selection`` (its
    switched equations kept: the contact rows on, saved; its redundant choice: the monitor's meta) and its
    ``monitor``, the recorder ``rec``, ``control`` and ``tolerances`` (error-controlled steps, else
    None), the symmetric ``projection`` (else None), the event monitor ``events`` (else None), and the
    counters ``n_el`` (steps taken), ``wall`` and ``fac_time`` [s], ``singular_t`` (start times of
    elements accepted at a singular matrix), ``stopped_by`` and ``model_changes``."""

    selection: object
    monitor: object
    rec: object
    projection: object = None
    st: object = None
    w: object = None
    prev: ElementPiece | None = None
    scale: object = None
    magnitudes: object = None
    control: object = None
    tolerances: tuple | None = None
    events: object = None
    n_el: int = 0
    wall: float = 0.0
    fac_time: float = 0.0
    singular_t: list = field(default_factory=list)
    stopped_by: str | None = None
    model_changes: list = field(default_factory=list)

    # ------------------------------------------------------------------ saved
    def arrays(self, run) -> dict:
        """The engine state as named arrays (bounded in size: no history), with the parts of ``run`` that
        its element system (evaluation counters) and linear solver (column ordering) keep."""
        system, solver = run.system, run.solver
        ex = node_arrays("ckpt/st", self.st)
        if self.prev is not None:
            ex["ckpt/prev/U"] = np.asarray(self.prev.U)
            ex["ckpt/prev/h"] = np.asarray(float(self.prev.h))
            ex.update(node_arrays("ckpt/prev/st", self.prev.start))
        ex["ckpt/w"] = np.asarray(self.w)
        ex["ckpt/scale"] = np.asarray(self.scale)
        if self.projection is not None:  # symmetric projection: its predictor history
            ex.update(self.projection.state())
        ex["ckpt/magnitudes"] = self.magnitudes.as_array()
        q = getattr(solver, "_q", None)
        if q is not None:
            ex["ckpt/solver_q"] = np.asarray(q)
        if self.control is not None:  # error-controlled steps (flexmb.dynamics.variants.step_control)
            ex.update({f"ckpt/control/{k}": v for k, v in self.control.state().items()})
        if self.selection.switched:  # the switched equations kept (contact rows of resting contacts)
            off = set(self.selection.switched_off)
            ex["ckpt/selection/switched_on"] = np.array([lab for lab in self.selection.switched if lab not in off],
                                                        dtype=np.int64).reshape(-1, 2)
        if self.events is not None:  # contacts and impulses: the event state, its own record
            ex.update({f"ckpt/events/{k}": v for k, v in self.events.state(run).items()})
        ex["ckpt/counters"] = np.array([self.n_el, self.wall, self.fac_time, system.t_eval, system.n_eval], dtype=float)
        for name in self.rec.REPLACED:  # the recorder's running values (energy audit), stored whole
            ex[f"ckpt/rec/{name}"] = np.asarray(getattr(self.rec, name), dtype=float)
        return ex

    def history(self) -> dict:
        """The growing lists (the recorder's, its statistics, body-type node outputs, the elements
        accepted at a singular matrix): key -> the live list (rows are only ever appended)."""
        rec = self.rec
        out = {f"ckpt/rec/{name}": value for name, value in vars(rec).items()
               if isinstance(value, list) and name not in rec.REPLACED}
        out.update({f"ckpt/stats/{name}": value for name, value in rec.stats.items()})
        out.update({f"ckpt/body/{k}": v for k, v in rec.body_extra.items()})  # modal coordinates, interfaces
        out["ckpt/singular_t"] = self.singular_t
        return out

    def meta(self, cm) -> dict:
        """The state's settings entries (JSON): the changes of model and the dropped equations."""
        return {"model_changes": self.model_changes, **self.monitor.meta(cm)}

    # ------------------------------------------------------------------ restored
    def restore(self, run, ex: dict, stored) -> None:
        """Set this state (of ``run``, whose element system and solver take their parts) from a
        checkpoint's arrays ``ex`` (``stored``: the checkpoint, :class:`~flexmb.dynamics.io.checkpoint_files.Stored`)."""
        from flexmb.dynamics.solve.scales import Magnitudes

        if "ckpt/selection/switched_on" in ex:  # the switched equations kept when it was written (contact rows)
            run.select(self.selection.changed(keep=[tuple(lab) for lab in np.array(ex["ckpt/selection/switched_on"])]))
        self.st = node_from("ckpt/st", ex)
        if "ckpt/prev/U" in ex:
            self.prev = ElementPiece(node_from("ckpt/prev/st", ex), float(ex["ckpt/prev/h"]), np.array(ex["ckpt/prev/U"]))
        self.w = np.array(ex["ckpt/w"])
        self.scale = np.array(ex["ckpt/scale"])
        if self.projection is not None:  # symmetric projection: its predictor history
            self.projection.restore(ex)
        self.magnitudes = Magnitudes.from_array(ex["ckpt/magnitudes"])
        if "ckpt/solver_q" in ex and hasattr(run.solver, "adopt_ordering"):
            run.solver.adopt_ordering(np.array(ex["ckpt/solver_q"]))
        if run.cm.nj and "ckpt/rec/imp" not in ex and ex.get("ckpt/rec/t", np.zeros(0)).size:
            raise FlexmbError(f"the checkpoint {stored.path} was written by an older flexmb without the impulse records "
                              f"the node reactions need; re-run the simulation from the start")
        if "ckpt/control/scalars" in ex:
            from flexmb.dynamics.variants.step_control import StepControl

            self.control = StepControl.restore(run, {k[len("ckpt/control/"):]: np.array(v) for k, v in ex.items()
                                                     if k.startswith("ckpt/control/")})
            self.tolerances = (self.control.rtol, self.control.atol)
        rec = self.rec
        for name, value in vars(rec).items():
            if isinstance(value, list) and f"ckpt/rec/{name}" in ex:
                setattr(rec, name, list(np.array(ex[f"ckpt/rec/{name}"])))
        for name in rec.stats:
            rec.stats[name] = list(np.array(ex.get(f"ckpt/stats/{name}", [])))
        # body-type node outputs (flexible bodies: modal coordinates, interface motion)
        body = (("modal/", "modal_rate/", "interface/"), 0) if stored.old_format else (("ckpt/body/",), len("ckpt/body/"))
        rec.body_extra = {k[body[1]:]: list(np.array(v)) for k, v in ex.items() if k.startswith(body[0])}
        if "ckpt/events/resting" in ex:  # contacts and impulses (flexmb.dynamics.impact.march)
            from flexmb.dynamics.impact.march import EventMonitor

            self.events = EventMonitor(run, check=False)
            self.events.restore(run, {k[len("ckpt/events/"):]: v for k, v in ex.items() if k.startswith("ckpt/events/")})
        n_el, self.wall, self.fac_time, run.system.t_eval, n_eval = np.array(ex["ckpt/counters"]).tolist()
        self.n_el, run.system.n_eval = int(n_el), int(n_eval)
        if "ckpt/singular_t" in ex:  # elements accepted at a (nearly) singular matrix (meta['singular_elements'])
            self.singular_t = np.array(ex["ckpt/singular_t"]).tolist()
