"""Checkpoints of a running simulation: the results so far plus everything the engine needs to go
on bit-identically: the run's state whole (:class:`~flexmb.dynamics.step.state.RunState`: element-start
state, predictor history, convergence scales, recorder lists, counters, the dropped equations), the
sparse LU's column ordering, the options and, when it can be pickled, the model.

A checkpoint is a directory (:mod:`flexmb.dynamics.io.checkpoint_files`): each write appends the
history recorded since the previous one and replaces a small state file, so its cost is
proportional to what is new, and a run killed at any moment leaves the previous checkpoint intact.
Writes are :data:`checkpoint_every` seconds of wall time apart, timed from the end of the previous
write (:class:`Checkpoints`).

Resuming (:func:`load_run`) refuses a model other than the checkpoint's: the model's fingerprint
(:mod:`flexmb.dynamics.io.fingerprint`) must match, or, with ``allow_model_change``, the bodies and
joints must be the same and only parameters differ; in both cases the joints must hold at the
resumed node to the model's assembly tolerance (which also catches a changed drive function).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import pickle
import time
from pathlib import Path

import numpy as np

from flexmb.dynamics.io.checkpoint_files import Appender, Stored, read
from flexmb.dynamics.io.fingerprint import describe, differences, fingerprint
from flexmb.dynamics.node.redundancy import constrained_labels, constraint_violation
from flexmb.errors import FlexmbError, ModelError

log = logging.getLogger(__name__)

def _pickle_model(model) -> bytes | None:
    try:
        return pickle.dumps(model)
    except Exception:  # lambdas, closures: try cloudpickle (a dask dependency)
        try:
            import cloudpickle
        except ImportError:
            return None
        try:
            return cloudpickle.dumps(model)
        except Exception:
            return None


def _settings(run) -> dict:
    """The run's settings (JSON): how it was started, its changes of model, the dropped equations."""
    return {"checkpoint": {"p": run.te.p, "transport": run.te.transport, "h": run.h, "t0": run.t0, "t_end": run.t_end,
                           "options": dataclasses.asdict(run.options)}, **run.state.meta(run.cm)}


def _model_file(run, path) -> dict:
    """The model file's arrays: the fingerprint and, when the model pickles, the model."""
    out = {"fingerprint": np.array(json.dumps(fingerprint(run.cm)))}
    blob = _pickle_model(run.model)
    if blob is not None:
        out["pickle"] = np.frombuffer(blob, dtype=np.uint8)
    else:
        log.warning("checkpoint %s: the model could not be pickled (lambdas? install cloudpickle); "
                    "resume it with flexmb.resume(path, model=...)", path)
    return out


class Checkpoints:
    """The checkpoints of one call of ``Run.go``: the target ``path`` is checked when this is made
    (before the run), writes are ``every`` seconds of wall time apart, timed from the end of the
    previous write."""

    def __init__(self, path, every: float, run):
        self.path, self.every = Path(path), float(every)
        self.files = Appender.open(path, getattr(run, "checkpoint_source", None))
        if getattr(run, "resumed_with_other_model", False):
            self.files.forget_model()  # its fingerprint (and pickle) are stored anew
        self.last = time.perf_counter()

    def due(self) -> bool:
        return time.perf_counter() - self.last >= self.every

    def write(self, run) -> None:
        """Append what ``run`` recorded since the previous write and replace the state; a write the
        file system refuses stops the run: :class:`CheckpointWriteError` with its results."""
        try:
            self.files.write(run.state.history(), run.state.arrays(run), _settings(run), lambda: _model_file(run, self.path))
        except OSError as exc:
            err = CheckpointWriteError(
                f"checkpoint {str(self.path)!r}: writing failed at t = {run.st.t:.6g} s ({type(exc).__name__}: {exc}); the "
                f"run stopped there, its results are in the exception's `solution`, the checkpoint holds its previous "
                f"write (continue it with flexmb.resume(path, checkpoint=ANOTHER_PATH))")
            err.solution = run.solution()
            raise err from exc
        self.last = time.perf_counter()

    def save_on_failure(self, run) -> None:
        """The write after a failure or Ctrl-C: a write error is logged, the run's own error is kept."""
        try:
            self.write(run)
        except CheckpointWriteError as exc:
            log.warning("%s", exc)


class CheckpointWriteError(FlexmbError):
    """A checkpoint could not be written; ``solution`` holds the run's results up to there."""

    solution = None


# ------------------------------------------------------------------------------------------- resume
def _stored_model(stored: Stored, path):
    if stored.model_blob is None:
        raise ModelError(f"the checkpoint {path} does not hold the model (it could not be pickled); "
                         f"pass it: flexmb.resume(path, model=the_same_model)")
    return pickle.loads(stored.model_blob)


def _old_fingerprint(stored: Stored, cm) -> dict:
    """The fingerprint of an older single-file checkpoint's model: from the model it holds, else the
    bodies and joints named in its results (their types and parameters unknown)."""
    from flexmb.dynamics.system import compile_model

    if stored.model_blob is not None:
        return fingerprint(compile_model(pickle.loads(stored.model_blob)))
    new = fingerprint(cm)
    bodies, joints = stored.names
    same = [b.name for b in cm.model.bodies] == list(bodies) and [j.name for j in cm.model.joints] == list(joints)
    log.warning("the checkpoint %s was written by an older flexmb without the model or its fingerprint: the model "
                "given is checked only on its body and joint names and on the joints at the resumed node", stored.path)
    structure = new["structure"] if same else {**{f"body {n!r}": "?" for n in bodies}, **{f"joint {n!r}": "?" for n in joints}}
    return {"version": new["version"], "structure": structure, "parameters": new["parameters"]}


def _check_model(run, stored: Stored, allow_model_change: bool) -> None:
    """Refuse a model other than the checkpoint's (ModelError naming what differs); with
    ``allow_model_change``, accept other parameters (recorded in ``run.model_changes``)."""
    new = fingerprint(run.cm)
    old = stored.fingerprint if stored.fingerprint is not None else _old_fingerprint(stored, run.cm)
    where = f"the checkpoint {str(stored.path)!r}"
    struct = differences(old, new, "structure")
    if struct:
        raise ModelError(f"{where} was written with another model: {describe(struct)}. A run resumes only with the same "
                         f"bodies and joints (its state and history have their shapes); resume with the checkpoint's "
                         f"model (model=None uses the one it holds)")
    params = differences(old, new, "parameters") if old.get("version") == new["version"] else []
    if params and not allow_model_change:
        raise ModelError(f"{where} was written with another model, which differs in {len(params)} "
                         f"{'entry' if len(params) == 1 else 'entries'}: "
                         f"{describe(params)}. Resume with the checkpoint's model (model=None uses the one it holds), "
                         f"or pass allow_model_change=True to go on from its state with this model (accepted when "
                         f"its joints hold at the resumed node)")
    if params:
        run.model_changes.append({"t": float(stored.arrays["ckpt/st/t"]), "differences": params})
        run.resumed_with_other_model = True


def _check_assembled(run, stored: Stored) -> None:
    """The joints must hold at the resumed node to the model's assembly tolerance."""
    from flexmb.dynamics.layout import COMPONENT_NAMES

    open_rows = set(run.selection.switched_off)  # a contact row switched off: the contact is open
    v, j, c = constraint_violation(run.cm, run.st, [lab for lab in constrained_labels(run.cm) if lab not in open_rows])
    if v <= 1.0:
        return
    name = run.cm.model.joints[j].name
    comp = COMPONENT_NAMES[c] if isinstance(c, int) else "cross-axis condition"
    why = ("its parameters differ from the checkpoint's model" if getattr(run, "resumed_with_other_model", False) else
           "the model matches the checkpoint's fingerprint, so a drive function (not part of it) changed")
    raise ModelError(f"the state of the checkpoint {str(stored.path)!r} at t = {run.st.t:.6g} s violates joint "
                     f"{name!r} ({comp}) of the model by {v:.3g} x its assembly tolerance ({why}); the run cannot go "
                     f"on from it with this model: resume with the checkpoint's model")


def load_run(path, run_class, options_class, model=None, t_end: float | None = None, allow_model_change: bool = False):
    """A run (``run_class``: :class:`~flexmb.dynamics.simulate.Run`, built with options of
    ``options_class``) restored from a checkpoint, ready to ``go``; ``model``: None for the one the
    checkpoint holds; another model is refused unless ``allow_model_change`` (see the module)."""
    from flexmb.dynamics.solve.newton import NewtonOptions
    from flexmb.dynamics.time_elements import TimeElement, time_element
    from flexmb.model.model import Model

    stored = read(path)
    info, ex = stored.meta["checkpoint"], stored.arrays
    if model is None:
        model = _stored_model(stored, path)
    elif not isinstance(model, Model):
        raise ModelError(f"resume: model={type(model).__name__} is not a flexmb.Model; give the run's model or None "
                         f"(the model the checkpoint holds)")
    od = dict(info["options"])
    od.setdefault("resting", "node")  # a checkpoint of a flexmb before the contacts' constraint rows held them at the nodes
    options = options_class(**{**od, "newton": NewtonOptions(**od["newton"])})
    # the time element as it ran: its order and its multiplier transport (a run with the opt-in
    # transport must not resume with the default one)
    transport = info.get("transport", "node")
    te = time_element(int(info["p"])) if transport == "node" else TimeElement.of_order(int(info["p"]), transport=transport)
    run = run_class(model, float(info["t_end"]), float(info["h"]), te, float(info["t0"]), options)
    run.model_changes = list(stored.meta.get("model_changes", []))
    _check_model(run, stored, allow_model_change)
    labels = run.monitor.restore(run.cm, stored.meta)  # the dropped equations may have been re-selected during the run
    if set(labels) != set(run.selection.redundant):  # (the switched contact rows: RunState.restore)
        run.select(run.selection.changed(keep=run.selection.redundant, drop=labels))
    if t_end is not None:
        if not t_end > float(ex["ckpt/st/t"]):
            raise ModelError(f"t_end={t_end!r} must lie after the checkpoint's time {float(ex['ckpt/st/t']):.6g} s")
        run.t_end = float(t_end)
    run.state.restore(run, ex, stored)  # the run's state, whole (flexmb.dynamics.step.state.RunState)
    _check_assembled(run, stored)
    if getattr(run, "resumed_with_other_model", False):
        log.warning("resuming %s at t = %.6g s with another model (allow_model_change=True): %s", stored.path,
                    run.st.t, describe(run.model_changes[-1]["differences"]))
    run.checkpoint_source = dataclasses.replace(stored, arrays={}, model_blob=None)  # what the next write continues
    return run
