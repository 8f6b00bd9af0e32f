"""Analytic Jacobian of the time-element equations = central finite differences, for every body,
joint and force element type, at random states (FORMULATION.md section 2)."""
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




@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_jacobian(kind, p):
    a, b = _bodies()
    model = Model([a, b], [Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                  [Gravity((0, 0, -9.81))])
    err, where = fd_check(model, p)
    assert err < 1e-6, where


@pytest.mark.parametrize("p", [1, 3])
@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_jacobian_consistent_transport(kind, p):
    """The opt-in consistent transport (transport moment at the Gauss points, issue 8 section 3):
    its moment couples the Gauss points (p = 3) and depends on the multipliers, B's pose and the
    attachment velocities."""
    a, b = _bodies()
    model = Model([a, b], [Spherical("ground_pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                  [Gravity((0, 0, -9.81))])
    err, where = fd_check(model, TimeElement.of_order(p, transport="consistent"))
    assert err < 1e-6, where


@pytest.mark.parametrize("p", [1, 3])
def test_force_jacobian(p):
    a, b = _bodies()
    forces = [
        Gravity((0.5, -9.81, 0.2)),
        PointForce("A", (1.0, -2.0, 0.5), point=(0.1, 0.2, -0.1)),
        PointForce("B", (0.3, 0.2, -1.0), point=(0.0, 0.1, 0.2), frame="body"),
        PointForce("B", lambda t: (np.sin(t), 0.0, 1.0), point=(0.1, 0.0, 0.0)),
        PointForce("A", lambda t, s: -3.0 * s.position - 0.5 * s.velocity, point=(0.05, 0.0, 0.0)),
        PointTorque("A", (0.1, 0.2, 0.3)),
        PointTorque("B", (0.2, -0.1, 0.4), frame="body"),
        PointTorque("B", lambda t, s: -0.2 * s.angular_velocity),
        SpringDamper("s1", "A", "B", point_a=(0.1, 0.0, 0.0), point_b=(-0.1, 0.05, 0.0), stiffness=50.0,
                     damping=2.0, free_length=0.3),
        SpringDamper("s2", "ground", "B", point_a=(1.0, 1.0, 0.0), point_b=(0.0, 0.0, 0.1), stiffness=20.0, damping=1.0),
    ]
    model = Model([a, b], [], forces)
    err, where = fd_check(model, p)
    assert err < 1e-6, where


def test_free_body_jacobian_p3():
    a, _ = _bodies()
    err, where = fd_check(Model([a]), 3)
    assert err < 1e-6, where
