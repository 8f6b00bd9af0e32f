"""The compiled kernels compile one specialization per argument type, not one per literal constant.

numba types a constant argument written in compiled code (``f(x, True)``, ``f(x, 0)``) as a literal
(``Literal[bool](True)``) and compiles the callee (and every kernel it calls with that argument) once
more for it, next to the ``bool`` / ``int64`` specialization the Python callers use.  The fused Newton
loop once called the element kernel with a literal ``True``: the whole fused element (joints, forces,
rigid bodies) compiled twice on a cold cache (pendulum p = 1, 2, 3: 164 s of CPU -> 110 s without the
literal specializations).  Compiled callers pass typed values (``np.bool_(True)``, ``np.int64(6)``,
a bool variable): see flexmb.dynamics.kernels."""
from __future__ import annotations

import sys

import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher

import flexmb as fm


def _flexmb_dispatchers():
    out = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("flexmb") or mod is None:
            continue
        for obj in vars(mod).values():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("flexmb"):
                out[f"{obj.py_func.__module__}.{obj.py_func.__name__}"] = obj
    return out


def _signatures(disp):
    """The signatures compiled in this process and those in the on-disk cache of ``disp``."""
    sigs = list(disp.signatures)
    try:
        index = disp._cache._cache_file._load_index()  # numba's cache index: {(signature, target...): file}
        sigs += [key[0] for key in index]
    except Exception:  # noqa: BLE001 - no cache (read-only location): the in-process signatures only
        pass
    return sigs


def _literal(t) -> bool:
    if isinstance(t, types.Literal):
        return True
    return isinstance(t, types.BaseTuple) and any(_literal(e) for e in t.types)


def test_no_kernel_is_specialized_for_a_literal_argument():
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    spring = fm.SpringDamper("s", "ground", "bob", stiffness=10.0, damping=0.1, point_a=(0, 1, 0))
    fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0)), spring]), 0.1, 0.02, p=2)
    from flexmb.dynamics.solve import fused_newton

    # the fused Newton loop (compiled callers of the laws) ran: a rigid model's through newton_rigid
    assert fused_newton.newton_rigid.signatures or fused_newton.newton_element.signatures
    found = {name: [s for s in _signatures(d) if any(_literal(a) for a in s)]
             for name, d in _flexmb_dispatchers().items()}
    found = {k: v for k, v in found.items() if v}
    assert not found, found


def _kinds(value):
    """numba's types of the arrays in ``value`` (nested tuples), flattened: read-only flag included."""
    import numba

    if isinstance(value, tuple):
        return [t for v in value for t in _kinds(v)]
    return [numba.typeof(value)] if isinstance(value, np.ndarray) else []


def test_fused_kernels_see_one_type_per_constant_whatever_the_model():
    """numba types a read-only array apart from a writable one: a rigid model, a modal model and a mixed
    one once handed the fused element its model constants (attachment sides, modal parts, body data,
    loads, springs, joint laws) read-only in one model and writable in another, and a clean test run
    compiled the whole fused call tree (Newton loop, element, joints, modal body: ~70 s of CPU each)
    six times.  Now every constant is read-only (flexmb.dynamics.kernels.frozen), the stand-ins of a
    model without modal bodies too (fused_modal.no_modal, compiled): the types agree across models."""
    from flexmb.dynamics.bodies.modal_residual import kernel_start
    from flexmb.dynamics.simulate import Run, SimulationOptions
    from flexmb.dynamics.solve.fused import FusedEvaluator
    from flexmb.dynamics.solve.fused_modal import no_modal
    from test_node_stage_modal import mixed, modal_chain

    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    spring = fm.SpringDamper("s", "ground", "bob", stiffness=10.0, damping=0.1, point_a=(0, 1, 0))
    rigid = fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0)), spring])
    seen = {}
    for name, model in {"rigid": rigid, "modal": modal_chain(), "mixed": mixed()}.items():
        run = Run.start(model, 0.02, 0.01, 2, 0.0, SimulationOptions())
        ev = FusedEvaluator(run.cm, run.te)
        body, mod, jt, loads = ev.arguments(run.st, 0.01, run.system.lay)
        if ev.nbm == 0:
            mod, mp = no_modal(np.int64(2))  # what newton_rigid and element build in compiled code
        else:
            mp = ev.mp
        # (the pairs of entries on both sides stay writable: fused._pairs; the last load item: values per element)
        consts = dict(sides=(ev.sa, ev.sb), modal_parts=mp[:2], body=body[3:], modal=mod[5:], law=jt[5:-3],
                      springs=ev.springs[:5], loads=loads[:-1])
        for key, value in consts.items():
            kinds = _kinds(value)
            assert kinds and all(t.mutable is False for t in kinds), (name, key, kinds)
            seen.setdefault(key, {})[name] = [(t.dtype, t.ndim, t.layout, t.mutable) for t in kinds]
        seen.setdefault("pairs", {})[name] = [(t.dtype, t.mutable) for t in _kinds((mp[2:], jt[-3:-1], ev.springs[5]))]
    for key, by_model in seen.items():
        assert len({tuple(v) for v in by_model.values()}) == 1, (key, by_model)


def test_the_fused_call_tree_compiles_once_for_rigid_and_modal_models():
    """The fused element, its joints and the compiled Newton loop have one specialization for a rigid
    model (through newton_rigid's empty modal stand-ins and the evaluator's ``_empty_modal``), a modal
    one and a mixed one: after running the three (and whatever ran before in this cache), numba's
    index of each holds a single signature.  A second one costs a clean test run ~100 s of CPU."""
    from flexmb.dynamics.solve import fused_element, fused_joints, fused_newton
    from test_node_stage_modal import mixed, modal_chain

    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    for model in (fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0))]), modal_chain(), mixed()):
        fm.simulate(model, 0.02, 0.01, p=2, show_progress=False)
    for disp in (fused_newton.newton_element, fused_element.whole_element, fused_joints.joints):
        sigs = {str(s) for s in _signatures(disp)}
        assert len(sigs) == 1, (disp.py_func.__name__, sorted(sigs))
