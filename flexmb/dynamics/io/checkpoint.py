"""Checkpoints of a running simulation: the results so far plus everything the engine needs to go
on bit-identically (element-start state, predictor history, convergence scales, the sparse LU's
column ordering, recorder lists, counters, options and, when it can be pickled, the model).

A checkpoint is a :class:`~flexmb.results.solution.Solution` file (``.npz``): it loads with
``Solution.load`` like any result; the engine state lives in its ``extra`` arrays under
``ckpt/``.  It is written atomically (a temporary file renamed over the old one), so a run killed
while writing leaves the previous checkpoint intact.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import pickle
from pathlib import Path

import numpy as np

from flexmb.dynamics.solve.scales import Magnitudes

from flexmb.errors import FlexmbError, ModelError

log = logging.getLogger(__name__)

_STATE_FIELDS = ("x", "R", "pi", "s", "Rr", "lam", "acc")


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


def _state_arrays(prefix: str, st) -> dict:
    out = {f"{prefix}/{k}": np.asarray(getattr(st, k)) for k in _STATE_FIELDS}
    out[f"{prefix}/t"] = np.asarray(float(st.t))
    if st.lam_end is not None:
        out[f"{prefix}/lam_end"] = np.asarray(st.lam_end)
    for k, v in st.extra.items():
        out[f"{prefix}/extra/{k}"] = np.asarray(v)
    return out


def _state_from(prefix: str, ex: dict):
    from flexmb.dynamics.system import ElementStart

    kw = {k: np.array(ex[f"{prefix}/{k}"]) for k in _STATE_FIELDS}
    extra = {k[len(prefix) + 7:]: np.array(v) for k, v in ex.items() if k.startswith(f"{prefix}/extra/")}
    lam_end = np.array(ex[f"{prefix}/lam_end"]) if f"{prefix}/lam_end" in ex else None
    return ElementStart(t=float(ex[f"{prefix}/t"]), lam_end=lam_end, extra=extra, **kw)


def save_run(run, path) -> Path:
    """Write the checkpoint of ``run`` to ``path`` (atomically)."""
    path = Path(path)
    sol = run.solution()
    ex = {}
    ex.update(_state_arrays("ckpt/st", run.st))
    if run.prev is not None:
        U_prev, st_prev, h_prev = run.prev
        ex["ckpt/prev/U"] = np.asarray(U_prev)
        ex["ckpt/prev/h"] = np.asarray(float(h_prev))
        ex.update(_state_arrays("ckpt/prev/st", st_prev))
    ex["ckpt/w"] = np.asarray(run.w)
    ex["ckpt/scale"] = np.asarray(run.scale)
    if getattr(run, "projection", None) is not None:  # symmetric projection: its predictor history
        ex.update(run.projection.state())
    ex["ckpt/magnitudes"] = run.magnitudes.as_array()
    q = getattr(run.solver, "_q", None)
    if q is not None:
        ex["ckpt/solver_q"] = np.asarray(q)
    for name, value in vars(run.rec).items():
        if isinstance(value, list):
            ex[f"ckpt/rec/{name}"] = np.asarray(value, dtype=float)
    for name, value in run.rec.stats.items():
        ex[f"ckpt/stats/{name}"] = np.asarray(value, dtype=float)
    if getattr(run, "control", None) is not None:  # error-controlled steps (flexmb.dynamics.variants.step_control)
        ex.update({f"ckpt/control/{k}": v for k, v in run.control.state().items()})
    ex["ckpt/counters"] = np.array([run.n_el, run.wall, run.fac_time, run.system.t_eval, run.system.n_eval], dtype=float)
    ex["ckpt/singular_t"] = np.asarray(getattr(run, "singular_t", []), dtype=float)
    blob = _pickle_model(run.model)
    if blob is not None:
        ex["ckpt/model"] = np.frombuffer(blob, dtype=np.uint8)
    sol.extra.update(sol._checked_extra(ex))
    sol.meta["checkpoint"] = {
        "p": run.te.p, "transport": run.te.transport, "h": run.h, "t0": run.t0, "t_end": run.t_end,
        "options": dataclasses.asdict(run.options), "model_stored": blob is not None,
    }
    tmp = path.with_name(path.name + ".tmp.npz")
    written = sol.save(tmp)
    os.replace(written, path)
    if blob is None and not getattr(run, "_warned_pickle", False):
        log.warning("checkpoint %s: the model could not be pickled (lambdas? install cloudpickle); "
                    "resume it with flexmb.resume(path, model=...)", path)
        run._warned_pickle = True
    return path


def load_run(path, run_class, options_class, model=None, t_end: float | None = None):
    """A run (``run_class``: :class:`~flexmb.dynamics.simulate.Run`, built with options of
    ``options_class``) restored from a checkpoint, ready to ``go``."""
    from flexmb.dynamics.solve.newton import NewtonOptions
    from flexmb.dynamics.time_elements import TimeElement, time_element
    from flexmb.results.solution import Solution

    path = Path(path)
    sol = Solution.load(path)
    info = sol.meta.get("checkpoint")
    if not info:
        raise FlexmbError(f"{path} is a results file but not a checkpoint (no engine state); write checkpoints "
                          f"with simulate(..., checkpoint=PATH)")
    ex = sol.extra
    if model is None:
        if "ckpt/model" not in ex:
            raise ModelError(f"the checkpoint {path} does not hold the model (it could not be pickled); "
                             f"pass it: flexmb.resume(path, model=the_same_model)")
        model = pickle.loads(np.asarray(ex["ckpt/model"], dtype=np.uint8).tobytes())
    od = dict(info["options"])
    options = options_class(**{**od, "newton": NewtonOptions(**od["newton"])})
    # the time element as it ran: its order and its multiplier transport (a run with the opt-in
    # transport must not resume with the default one)
    transport = info.get("transport", "node")
    te = time_element(int(info["p"])) if transport == "node" else TimeElement.of_order(int(info["p"]), transport=transport)
    run = run_class(model, float(info["t_end"]), float(info["h"]), te, float(info["t0"]), options)
    from flexmb.dynamics.node.redundancy import restore_selection

    restore_selection(run.cm, sol.meta)  # the dropped equations may have been re-selected during the run
    if t_end is not None:
        if not t_end > float(ex["ckpt/st/t"]):
            raise ModelError(f"t_end={t_end!r} must lie after the checkpoint's time {float(ex['ckpt/st/t']):.6g} s")
        run.t_end = float(t_end)
    run.st = _state_from("ckpt/st", ex)
    if "ckpt/prev/U" in ex:
        run.prev = (np.array(ex["ckpt/prev/U"]), _state_from("ckpt/prev/st", ex), float(ex["ckpt/prev/h"]))
    run.w = np.array(ex["ckpt/w"])
    run.scale = np.array(ex["ckpt/scale"])
    if getattr(run, "projection", None) is not None:  # symmetric projection: its predictor history
        run.projection.restore(ex)
    run.magnitudes = Magnitudes.from_array(ex["ckpt/magnitudes"])
    if "ckpt/solver_q" in ex and hasattr(run.solver, "adopt_ordering"):
        run.solver.adopt_ordering(np.array(ex["ckpt/solver_q"]))
    if run.cm.nj and "ckpt/rec/imp" not in ex:
        raise FlexmbError(f"the checkpoint {path} was written by an older flexmb without the impulse records the "
                          f"node reactions need; re-run the simulation from the start")
    if "ckpt/control/scalars" in ex:
        from flexmb.dynamics.variants.step_control import StepControl

        run.control = StepControl.restore(run, {k[len("ckpt/control/"):]: np.array(v) for k, v in ex.items()
                                                if k.startswith("ckpt/control/")})
        run.tolerances = (run.control.rtol, run.control.atol)
    for name, value in vars(run.rec).items():
        if isinstance(value, list) and f"ckpt/rec/{name}" in ex:
            setattr(run.rec, name, list(np.array(ex[f"ckpt/rec/{name}"])))
    for name in run.rec.stats:
        run.rec.stats[name] = list(np.array(ex[f"ckpt/stats/{name}"]))
    # body-type node outputs (flexible bodies: modal coordinates, interface motion) are result arrays
    run.rec.body_extra = {k: list(np.array(v)) for k, v in ex.items()
                          if k.startswith(("modal/", "modal_rate/", "interface/"))}
    n_el, run.wall, run.fac_time, run.system.t_eval, n_eval = np.array(ex["ckpt/counters"]).tolist()
    run.n_el, run.system.n_eval = int(n_el), int(n_eval)
    if "ckpt/singular_t" in ex:  # elements accepted at a (nearly) singular matrix (meta['singular_elements'])
        run.singular_t = np.array(ex["ckpt/singular_t"]).tolist()
    return run
