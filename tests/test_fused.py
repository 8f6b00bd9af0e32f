"""The element evaluator is chosen once per model (flexmb/dynamics/solve/evaluation.py): the fused one
(one compiled call per evaluation, flexmb/dynamics/solve/fused.py) for rigid-only models without state
callbacks, the general one otherwise.  Both call the one compiled implementation of each law; the fused
one only places the values, in the general evaluator's pattern.  Checked here: the choice, and that
the two place the same values at the same positions (residual and Jacobian to round-off) for every
joint type and force element, the ground on either side, the consistent transport; the Jacobians
themselves are checked against central differences in tests/test_jacobian.py."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.march.marching import predict as _predict
from flexmb.dynamics.simulate import ElementSystem
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import TimeElement, time_element
from test_jacobian import JOINTS, _bodies, _forces


def _chain(ground_on_b: bool):
    L, m = 0.3, 0.3
    bodies = [fm.RigidBody(f"bar{k + 1}", mass=m, inertia=(1e-3 * m * L * L, m * L * L / 12, m * L * L / 12),
                           position=((k + 0.5) * L, 0.0, 0.0)) for k in range(3)]
    first = fm.Spherical("P1", "bar1", "ground", point=(0, 0, 0)) if ground_on_b else \
        fm.Spherical("P1", "ground", "bar1", point=(0, 0, 0))
    joints = [first, fm.Revolute("R2", "bar1", "bar2", point=(L, 0, 0), axis=(0, 1, 0)),
              fm.Universal("U3", "bar3", "bar2", point=(2 * L, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0))]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def _pair(kind):
    a, b = _bodies()
    return fm.Model([a, b], [fm.Spherical("pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                    [fm.Gravity((0, 0, -9.81))])


MODELS = {"chain_ground_a": lambda: _chain(False), "chain_ground_b": lambda: _chain(True),
          **{k: (lambda k=k: _pair(k)) for k in sorted(JOINTS)},
          "forces": lambda: fm.Model(list(_chain(False).bodies), list(_chain(False).joints), [
              fm.PointForce("bar2", (0.3, 0.2, -1.0), point=(0.0, 0.1, 0.2), frame="body"),
              fm.PointTorque("bar1", lambda t: (0.0, np.sin(t), 0.1)),
              fm.SpringDamper("s1", "bar1", "bar3", point_a=(0.1, 0.0, 0.0), point_b=(-0.1, 0.05, 0.0),
                              stiffness=50.0, damping=2.0, free_length=0.3),
              fm.SpringDamper("s2", "ground", "bar2", point_a=(0.0, 0.5, 0.0), point_b=(0.0, 0.0, 0.0),
                              stiffness=5.0, damping=1.0)])}


def _state(model, te, h=0.02, seed=1):
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    systems = [ElementSystem(cm, te, evaluator=e) for e in ("auto", "general")]
    rng = np.random.default_rng(seed)
    U = _predict(cm, systems[0].lay, te, st, h, w0, None) + 0.05 * rng.standard_normal(systems[0].lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    return systems, U, st


@pytest.mark.parametrize("te", [time_element(1), time_element(2), time_element(3),
                                TimeElement.of_order(3, transport="consistent")], ids=["p1", "p2", "p3", "p3c"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_places_the_general_values(name, te):
    """Residual and Jacobian of the fused evaluator equal the general evaluator's to round-off, at two
    states (values-only evaluations of the same pattern), and its residual-only evaluation equals its full
    one bit for bit."""
    (fused, general), U, st = _state(MODELS[name](), te)
    assert_same_values(fused, general, U, st)


def assert_same_values(fused, general, U, st, h=0.02):
    """The fused and the general evaluator give the same residual and Jacobian to round-off at ``U`` and
    near it, and the fused residual-only evaluation equals its full one bit for bit."""
    assert fused.evaluator.name == "fused" and general.evaluator.name == "general"
    for U_ in (U, U * (1 + 1e-3)):
        F1, J1 = fused.evaluate(U_, st, h)
        F0, J0 = general.evaluate(U_, st, h)
        assert np.abs(F1 - F0).max() <= 1e-13 * max(1.0, np.abs(F0).max())
        assert np.array_equal(fused.residual(U_, st, h), F1)
        D = (J1 - J0).tocoo()
        assert np.abs(D.data).max(initial=0.0) <= 1e-13 * np.abs(J0.data).max()


def test_the_evaluator_is_chosen_once_per_model():
    """Rigid-only models get the fused evaluator; a state callback or a flexible body keeps the general
    one, and so does ``evaluator="general"``."""
    a, b = _bodies()
    te = time_element(2)
    assert ElementSystem(compile_model(_pair("universal")), te).evaluator.name == "fused"
    assert ElementSystem(compile_model(_pair("universal")), te, evaluator="general").evaluator.name == "general"
    assert ElementSystem(compile_model(fm.Model([a, b], [], _forces(True))), te).evaluator.name == "general"
    assert ElementSystem(compile_model(fm.Model([a, b], [], _forces(False))), te).evaluator.name == "fused"
    with pytest.raises(ValueError, match="evaluator"):
        ElementSystem(compile_model(_pair("universal")), te, evaluator="fast")


def test_runs_of_every_joint_type_keep_their_constraints():
    """A chain of every joint type (universal, damped revolute, prismatic spring) through the fused
    evaluator and the compiled Newton loop: the joints hold at every node (the relative position of the
    spherical and revolute joints stays at zero) and the energy balance of a damped system decreases."""
    bodies = [fm.RigidBody(f"b{k}", mass=0.5, inertia=(0.01, 0.02, 0.02), position=(0.3 * k + 0.15, 0.0, 0.0))
              for k in range(4)]
    joints = [fm.Revolute("r0", "ground", "b0", point=(0, 0, 0), axis=(0, 1, 0), damping=0.05),
              fm.Universal("u1", "b0", "b1", point=(0.3, 0, 0), axis=(0, 0, 1), axis2=(0, 1, 0)),
              fm.Spherical("s2", "b1", "b2", point=(0.6, 0, 0)),
              fm.Prismatic("p3", "b2", "b3", point=(0.9, 0, 0), axis=(1, 0, 0), stiffness=50.0, damping=0.5)]
    model = fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])
    sol = fm.simulate(model, 0.5, 0.01, p=2)
    for name in ("r0", "u1", "s2"):
        assert np.abs(sol.joint(name).rel_position).max() <= 1e-9, name
    E = sol.kinetic_energy + sol.potential_energy
    assert np.all(np.diff(E) <= 1e-9 * np.abs(E).max()), "the dampers dissipate"
    assert E[-1] < E[0] - 1e-6
