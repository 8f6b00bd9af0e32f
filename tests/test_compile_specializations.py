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
