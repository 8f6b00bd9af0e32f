"""The compiled joint evaluation of rigid-only models (flexmb/dynamics/rigid/element.py) computes the
general path's residual bit for bit and its Jacobian values to round-off (the general path's Jacobian
is the one checked against finite differences, tests/test_jacobian.py), block after block in the
pattern's order; models it does not cover keep the general path."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.rigid import element as rigid_element
from flexmb.dynamics.system import compile_model
from flexmb.dynamics.time_elements import TimeElement, time_element
from test_jacobian import JOINTS, _bodies
from test_lean_eval import _system


def _chain(ground_on_b: bool):
    L, m = 0.3, 0.3
    bodies = [fm.RigidBody(f"bar{k + 1}", mass=m, inertia=(1e-3 * m * L * L, m * L * L / 12, m * L * L / 12),
                           position=((k + 0.5) * L, 0.0, 0.0)) for k in range(3)]
    first = fm.Spherical("P1", "bar1", "ground", point=(0, 0, 0)) if ground_on_b else \
        fm.Spherical("P1", "ground", "bar1", point=(0, 0, 0))
    joints = [first, fm.Revolute("R2", "bar1", "bar2", point=(L, 0, 0), axis=(0, 1, 0)),
              fm.Spherical("P3", "bar3", "bar2", point=(2 * L, 0, 0))]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def _pair(kind):
    a, b = _bodies()
    j = fm.Revolute("j", "A", "B", point=(0.1, 0.0, 0.0), axis=(0, 0, 1), stiffness=3.0, angle0=0.1) \
        if kind == "revolute_spring" else JOINTS[kind]()
    return fm.Model([a, b], [fm.Spherical("pin", "ground", "A", point=(-0.3, 0.0, 0.0)), j],
                    [fm.Gravity((0, 0, -9.81))])


MODELS = {"chain_ground_a": lambda: _chain(False), "chain_ground_b": lambda: _chain(True),
          **{k: (lambda k=k: _pair(k)) for k in ("spherical", "revolute", "revolute_driven", "prismatic_driven",
                                                 "cylindrical", "planar", "fixed")},
          "revolute_spring": lambda: _pair("revolute_spring"), "with_forces": lambda: _with_forces()}


def _with_forces():
    """Force elements: the bodies through the general path, the joints compiled."""
    m = _chain(False)
    return fm.Model(list(m.bodies), list(m.joints), list(m.forces) + [
        fm.PointForce("bar2", (0.3, 0.2, -1.0), point=(0.0, 0.1, 0.2), frame="body"),
        fm.SpringDamper("s1", "bar1", "bar3", point_a=(0.1, 0.0, 0.0), point_b=(-0.1, 0.05, 0.0), stiffness=50.0,
                        damping=2.0, free_length=0.3)])


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_evaluation_equals_the_general_path(name, p, monkeypatch):
    system, U, st = _system(MODELS[name](), p)
    h = 0.02
    rj = rigid_element.rigid_joints(system.cm, system.te)
    assert rj is not None and rj.whole == (name != "with_forces")
    calls = []
    # count the calls of the kernel this model uses (with force elements: the joints only; without: the
    # whole element); only that one is wrapped, so that the other, if numba compiles it meanwhile (cold
    # cache: whole_element calls element), sees the compiled function and not the Python wrapper
    name_ = "whole_element" if rj.whole else "element"
    real = getattr(rigid_element, name_)
    monkeypatch.setattr(rigid_element, name_, lambda *a, _f=real: calls.append(1) or _f(*a))
    monkeypatch.setattr(rigid_element, "ENABLED", False)
    F0, J0 = system.evaluate(U, st, h)  # builds the pattern (general path)
    F0b, J0b = system.evaluate(U, st, h)
    r0 = system.residual(U, st, h)
    assert not calls
    monkeypatch.setattr(rigid_element, "ENABLED", True)
    for U_ in (U, U * (1 + 1e-3)):
        F1, J1 = system.evaluate(U_, st, h)
        r1 = system.residual(U_, st, h)
        monkeypatch.setattr(rigid_element, "ENABLED", False)
        Fg, Jg = system.evaluate(U_, st, h)
        monkeypatch.setattr(rigid_element, "ENABLED", True)
        assert np.array_equal(F1, Fg) and np.array_equal(r1, Fg)
        assert np.array_equal(J1.indices, Jg.indices) and np.array_equal(J1.indptr, Jg.indptr)
        assert np.abs(J1.data - Jg.data).max() <= 1e-14 * np.abs(Jg.data).max()
    assert len(calls) == 4  # two full and two residual-only evaluations went through the kernel
    assert np.array_equal(F0, F0b) and np.array_equal(r0, F0)


@pytest.mark.parametrize("kind", ["universal", "revolute_damped_spring", "prismatic"])
def test_joints_it_does_not_cover_keep_the_general_path(kind):
    cm = compile_model(_pair(kind))
    assert rigid_element.rigid_joints(cm, time_element(2)) is None


def test_consistent_transport_keeps_the_general_path():
    cm = compile_model(_chain(False))
    assert rigid_element.rigid_joints(cm, TimeElement.of_order(1, transport="consistent")) is None
    assert rigid_element.rigid_joints(cm, time_element(1)) is not None


def test_runs_equal_the_general_path(monkeypatch):
    model = _chain(True)
    gen = None
    for enabled in (False, True):
        monkeypatch.setattr(rigid_element, "ENABLED", enabled)
        sol = fm.simulate(model, 0.2, 0.01, p=2)
        if gen is None:
            gen = sol
    assert np.array_equal(sol.stats["iterations"], gen.stats["iterations"])
    for what in ("body_position", "body_rotation", "body_velocity", "joint_force"):
        a, b = getattr(sol, what), getattr(gen, what)
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max(), what


@pytest.mark.parametrize("name", ["chain_ground_a", "chain_ground_b", "spherical"])
def test_gauss_origins_of_b_equal_the_general_path(name, monkeypatch):
    from flexmb.dynamics.simulate import Run, SimulationOptions

    run = Run.start(MODELS[name](), 1.0, 0.01, 3, 0.0, SimulationOptions())
    run.step()
    U = run.prev[0] * (1 + 1e-3)
    fast = run._gauss_xb(run.st, 0.01, U)
    monkeypatch.setattr(rigid_element, "ENABLED", False)
    assert np.array_equal(fast, run._gauss_xb(run.st, 0.01, U))
