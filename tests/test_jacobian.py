"""Analytic Jacobian of the time-element equations = central finite differences, for every body,
joint and force element type, at random states (FORMULATION.md section 2), through both element
evaluators: the fused one (rigid-only models, one compiled call) and the general one (any body types);
both call the one compiled implementation of each law."""
import numpy as np
import pytest

from flexmb.model import (Cylindrical, Fixed, Gravity, Model, Planar, PointForce, PointTorque, Prismatic,
                          Revolute, RigidBody, Spherical, SpringDamper, Universal)
from flexmb.dynamics.time_elements import TimeElement
from fd_jacobian import fd_check  # noqa: F401 (also imported from here by test_body_contract)


def _bodies():
    a = RigidBody("A", mass=1.3, inertia=(0.11, 0.2, 0.25), position=(0.0, 0.0, 0.0),
                  orientation={"rotvec": (0.2, -0.1, 0.3)}, velocity=(0.1, 0.2, -0.1),
                  angular_velocity=(0.3, -0.2, 0.5), com=(0.02, -0.01, 0.03))
    b = RigidBody("B", mass=0.7, inertia=(0.05, 0.06, 0.08), position=(0.5, 0.1, 0.05),
                  orientation={"rotvec": (-0.3, 0.4, 0.1)}, velocity=(-0.2, 0.1, 0.3),
                  angular_velocity=(-0.4, 0.1, 0.2))
    return a, b


AXIS = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
AX2 = np.cross(AXIS, [1.0, 0.0, 0.0])
AX2 /= np.linalg.norm(AX2)
P = (0.25, 0.05, 0.02)

JOINTS = {
    "spherical": lambda: Spherical("j", "A", "B", point=P),
    "revolute": lambda: Revolute("j", "A", "B", point=P, axis=AXIS),
    "revolute_damped_spring": lambda: Revolute("j", "A", "B", point=P, axis=AXIS, stiffness=3.0, damping=0.7, angle0=0.1),
    "revolute_driven": lambda: Revolute("j", "A", "B", point=P, axis=AXIS, angle=lambda t: 0.3 * np.sin(2 * t)),
    "universal": lambda: Universal("j", "A", "B", point=P, axis=AXIS, axis2=AX2),
    "prismatic": lambda: Prismatic("j", "A", "B", point=P, axis=AXIS, damping=0.4, stiffness=2.0),
    "prismatic_driven": lambda: Prismatic("j", "A", "B", point=P, axis=AXIS, velocity=0.5),
    "cylindrical": lambda: Cylindrical("j", "A", "B", point=P, axis=AXIS),
    "planar": lambda: Planar("j", "A", "B", point=P, axis=AXIS),
    "fixed": lambda: Fixed("j", "A", "B", point=P, axis=AXIS),
}




EVALUATORS = {"fused": "auto", "general": "general"}


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_jacobian(kind, p, evaluator):
    a, b = _bodies()
    model = Model([a, b], [Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                  [Gravity((0, 0, -9.81))])
    err, where = fd_check(model, p, evaluator=EVALUATORS[evaluator], expect=evaluator)
    assert err < 1e-6, where


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
@pytest.mark.parametrize("p", [1, 3])
@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_jacobian_consistent_transport(kind, p, evaluator):
    """The opt-in consistent transport (transport moment at the Gauss points, issue 8 section 3):
    its moment couples the Gauss points (p = 3) and depends on the multipliers, B's pose and the
    attachment velocities."""
    a, b = _bodies()
    model = Model([a, b], [Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                  [Gravity((0, 0, -9.81))])
    err, where = fd_check(model, TimeElement.of_order(p, transport="consistent"), evaluator=EVALUATORS[evaluator],
                          expect=evaluator)
    assert err < 1e-6, where


def _forces(callbacks: bool):
    out = [
        Gravity((0.5, -9.81, 0.2)),
        PointForce("A", (1.0, -2.0, 0.5), point=(0.1, 0.2, -0.1)),
        PointForce("B", (0.3, 0.2, -1.0), point=(0.0, 0.1, 0.2), frame="body"),
        PointForce("B", lambda t: (np.sin(t), 0.0, 1.0), point=(0.1, 0.0, 0.0)),
        PointForce("A", lambda t: (0.2, np.cos(t), -0.1), point=(0.0, 0.1, 0.0), frame="body"),
        PointTorque("A", (0.1, 0.2, 0.3)),
        PointTorque("B", (0.2, -0.1, 0.4), frame="body"),
        SpringDamper("s1", "A", "B", point_a=(0.1, 0.0, 0.0), point_b=(-0.1, 0.05, 0.0), stiffness=50.0,
                     damping=2.0, free_length=0.3),
        SpringDamper("s2", "ground", "B", point_a=(1.0, 1.0, 0.0), point_b=(0.0, 0.0, 0.1), stiffness=20.0, damping=1.0),
        SpringDamper("s3", "A", "ground", point_a=(0.0, 0.2, 0.0), point_b=(-1.0, 0.5, 0.3), stiffness=10.0, damping=0.5),
    ]
    if callbacks:
        out += [PointForce("A", lambda t, s: -3.0 * s.position - 0.5 * s.velocity, point=(0.05, 0.0, 0.0)),
                PointTorque("B", lambda t, s: -0.2 * s.angular_velocity)]
    return out


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
@pytest.mark.parametrize("p", [1, 2, 3])
def test_force_jacobian(p, evaluator):
    """Constant, time-function and body-frame point loads and spring-dampers (one side on the ground
    either way), through both evaluators."""
    a, b = _bodies()
    model = Model([a, b], [Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0))], _forces(False))
    err, where = fd_check(model, p, evaluator=EVALUATORS[evaluator], expect=evaluator)
    assert err < 1e-6, where


@pytest.mark.parametrize("p", [1, 3])
def test_force_callback_jacobian(p):
    """State callbacks (central differences in Python) keep a model on the general evaluator."""
    a, b = _bodies()
    err, where = fd_check(Model([a, b], [], _forces(True)), p, expect="general")
    assert err < 1e-6, where


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
def test_free_body_jacobian_p3(evaluator):
    a, _ = _bodies()
    err, where = fd_check(Model([a]), 3, evaluator=EVALUATORS[evaluator], expect=evaluator)
    assert err < 1e-6, where


@pytest.mark.parametrize("p", [1, 2, 3])
def test_chain_of_every_joint_jacobian(p):
    """Every joint type in one chain (the ground on side A and on side B, joints between bodies with
    levers on both sides, a universal joint among the others): the fused evaluator's blocks where the
    general evaluator's pattern puts them."""
    bodies = [RigidBody(f"b{k}", mass=0.5 + 0.1 * k, inertia=(0.02, 0.03, 0.025), position=(0.3 * k, 0.02 * k, 0.0),
                        orientation={"rotvec": (0.1 * k, -0.05, 0.02 * k)}, angular_velocity=(0.2, -0.1 * k, 0.3),
                        com=(0.01, -0.02, 0.0)) for k in range(5)]
    joints = [Revolute("r0", "ground", "b0", point=(-0.15, 0.0, 0.0), axis=AXIS, stiffness=2.0, damping=0.3),
              Universal("u1", "b0", "b1", point=(0.15, 0.01, 0.0), axis=AXIS, axis2=AX2),
              Prismatic("p2", "b1", "b2", point=(0.45, 0.03, 0.0), axis=AXIS, damping=0.4, stiffness=1.5),
              Cylindrical("c3", "b3", "b2", point=(0.75, 0.05, 0.0), axis=AXIS),
              Spherical("s4", "b3", "b4", point=(1.05, 0.07, 0.0)),
              Planar("l5", "b4", "ground", point=(1.35, 0.08, 0.0), axis=AXIS)]
    model = Model(bodies, joints, [Gravity((0, 0, -9.81))])
    err, where = fd_check(model, p, expect="fused")
    assert err < 1e-6, where
