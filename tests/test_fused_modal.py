"""The fused evaluator on models with modal flexible bodies (flexmb/dynamics/solve/fused.py,
fused_modal.py): chosen once for models of rigid and modal bodies, it places the values of the modal
body's own kernels (rows, interface poses, velocities, the multipliers' map and its rate) in the
general evaluator's pattern.  Checked: the choice (and the cases that keep the general evaluator), and
that both evaluators give the same residual and Jacobian to round-off at random states, for every joint
kind with a modal side (side a or b, against a rigid body, the ground or another modal body), every
stiffening option and p = 1, 2, 3.  The Jacobians themselves are checked against central differences in
tests/test_modal_kernels.py and tests/test_flexible_dynamics.py."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import ElementSystem
from flexmb.dynamics.step.advance import predict_element
from flexmb.dynamics.system import compile_model, initial_state
from flexmb import rotations as rot
from flexmb.dynamics.time_elements import TimeElement, time_element
from test_flexible_dynamics import beam
from test_fused import assert_same_values

AXIS = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
AX2 = np.cross(AXIS, [1.0, 0.0, 0.0])
AX2 /= np.linalg.norm(AX2)
ROTVEC = (0.2, -0.1, 0.3)
#: where the first modal body's xmax interface is (the second one starts there, turned the same)
XMAX = rot.exp(np.array(ROTVEC)) @ np.array([1.0, 0.0, 0.0])

#: every joint kind, between sides ``a`` and ``b``
JOINTS = {
    "spherical": lambda a, b: fm.Spherical("j", a, b),
    "revolute": lambda a, b: fm.Revolute("j", a, b, axis=AXIS),
    "revolute_damped_spring": lambda a, b: fm.Revolute("j", a, b, axis=AXIS, stiffness=3.0, damping=0.7, angle0=0.1),
    "revolute_driven": lambda a, b: fm.Revolute("j", a, b, axis=AXIS, angle=lambda t: 0.3 * np.sin(2 * t)),
    "universal": lambda a, b: fm.Universal("j", a, b, axis=AXIS, axis2=AX2),
    "prismatic": lambda a, b: fm.Prismatic("j", a, b, axis=AXIS, damping=0.4, stiffness=2.0),
    "prismatic_driven": lambda a, b: fm.Prismatic("j", a, b, axis=AXIS, velocity=0.5),
    "cylindrical": lambda a, b: fm.Cylindrical("j", a, b, axis=AXIS),
    "planar": lambda a, b: fm.Planar("j", a, b, axis=AXIS),
    "fixed": lambda a, b: fm.Fixed("j", a, b, axis=AXIS),
}


def _flex(name, stiffening, modes=(0, 1, 6, 7), **kw):
    return fm.FlexibleBody(name, beam("craig-bampton"), stiffening=stiffening, modes=list(modes),
                           orientation={"rotvec": ROTVEC}, angular_velocity=(0.3, -0.2, 0.5),
                           qd0=0.05 * np.arange(1, len(modes) + 1), **kw)


def _rigid():
    return fm.RigidBody("A", mass=1.3, inertia=(0.11, 0.2, 0.25), position=(0.9, 0.4, 0.1), velocity=(0.1, 0.2, -0.1),
                        angular_velocity=(0.3, -0.2, 0.5), com=(0.02, -0.01, 0.03))


def _model(kind, stiffening, other):
    """A modal body pinned at ``xmin`` to the ground, its ``xmax`` joined by ``kind`` to ``other``:
    ``"rigid_a"`` (a rigid body on side a), ``"rigid_b"`` (on side b), ``"ground"``, ``"modal"`` (a
    second modal body on side b, with two modes)."""
    f = _flex("F", stiffening)
    bodies, end = [f], ("F", "xmax")
    pin = fm.Spherical("pin", "ground", ("F", "xmin"))
    if other == "rigid_a":
        bodies.append(_rigid())
        j = JOINTS[kind]("A", end)
    elif other == "rigid_b":
        bodies.append(_rigid())
        j = JOINTS[kind](end, "A")
    elif other == "ground":
        j = JOINTS[kind](end, "ground")
    else:
        bodies.append(_flex("G", stiffening, modes=(0, 6), position=tuple(XMAX)))
        j = JOINTS[kind](end, ("G", "xmin"))
    return fm.Model(bodies, [pin, j], [fm.Gravity((0.5, -9.81, 0.2))])


def _systems(model, te, h=0.02, seed=3):
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    fused, general = (ElementSystem(cm, te, evaluator=e) for e in ("auto", "general"))
    rng = np.random.default_rng(seed)
    U = predict_element(general, st, h, w0, None) + 0.05 * rng.standard_normal(general.lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    st.extra["flex_q"] = st.extra["flex_q"] + 0.02 * rng.standard_normal(st.extra["flex_q"].shape)
    return fused, general, U, st


@pytest.mark.parametrize("other", ["rigid_a", "rigid_b", "ground", "modal"])
@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_fused_places_the_general_values_modal(kind, other):
    """Residual and Jacobian of the fused evaluator equal the general evaluator's to round-off, at two
    states, for every joint kind on a modal interface (p = 2, stiffening "none")."""
    assert_same_values(*_systems(_model(kind, "none", other), time_element(2)))


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("stiffening", ["none", "preload", "full"])
def test_fused_modal_every_stiffening_and_order(stiffening, p):
    """The same for every stiffening option (preloads of the frame accelerations, cubic and quartic
    elastic forces) and p = 1, 2, 3: a damped revolute to a rigid body on side b, a second modal body."""
    f, g = _flex("F", stiffening), _flex("G", stiffening, modes=(0, 6), position=tuple(XMAX))
    model = fm.Model([_rigid(), f, g], [fm.Revolute("r0", "ground", ("F", "xmin"), axis=(0, 0, 1), damping=0.3),
                                        fm.Universal("u", ("F", "xmax"), ("G", "xmin"), axis=AXIS, axis2=AX2),
                                        JOINTS["revolute_damped_spring"](("G", "xmax"), "A")],
                     [fm.Gravity((0.5, -9.81, 0.2))])
    assert_same_values(*_systems(model, time_element(p)))


def test_the_evaluator_of_modal_models():
    """A model with a modal body gets the fused evaluator, unless a force element sits on a modal body
    or the time element uses the consistent transport (the general evaluator then)."""
    te = time_element(2)
    assert ElementSystem(compile_model(_model("revolute", "full", "rigid_a")), te).evaluator.name == "fused"
    spring = fm.SpringDamper("s", ("F", "xmax"), "ground", stiffness=40.0, damping=2.0, point_b=(1.2, 0.3, -0.2))
    m = _model("revolute", "none", "rigid_a")
    assert ElementSystem(compile_model(fm.Model(m.bodies, m.joints, list(m.forces) + [spring])), te).evaluator.name \
        == "general"
    on_rigid = fm.SpringDamper("s", "A", "ground", stiffness=40.0, damping=2.0, point_b=(1.2, 0.3, -0.2))
    m2 = fm.Model(m.bodies, m.joints, list(m.forces) + [on_rigid])
    fused, general, U, st = _systems(m2, te)
    assert_same_values(fused, general, U, st)  # a force element on a rigid body of a model with a modal body
    assert ElementSystem(compile_model(m), TimeElement.of_order(3, transport="consistent")).evaluator.name == "general"
