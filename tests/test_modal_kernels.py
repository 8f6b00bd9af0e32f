"""Compiled modal-body kernels (flexmb.dynamics.bodies.modal_kernels, modal_laws, modal_attach)
against the former NumPy formulation (tests/modal_reference.py, dense G and H): residual rows and
Jacobian of whole time elements agree to round-off (and to the truncation of the strain-energy
factors, 1e-10 relative), for p = 1, 2, 3, every stiffening option, gravity, joints on interfaces
(multiplier map and its rate) and forces on interfaces; the node-level mass matrix and its inverse,
strain energy, kinetic energy, gravity potential and interface maps too."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import ElementSystem
from flexmb.dynamics.step.advance import predict_element
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import time_element
from modal_reference import ReferenceFlexibleBodies
from test_flexible_dynamics import beam


def _free(stiffening):
    b = fm.FlexibleBody("F", beam("craig-bampton"), stiffening=stiffening, modes=[0, 1, 2, 6],
                        q0=0.01 * np.arange(1, 5), qd0=0.1 * np.ones(4), position=(0.1, 0.2, 0.3),
                        orientation={"rotvec": (0.2, -0.1, 0.3)}, velocity=(0.1, 0.2, -0.1),
                        angular_velocity=(0.3, -0.2, 0.5))
    return fm.Model([b], [], [fm.Gravity((0.5, -9.81, 0.2))])


def _jointed(stiffening):
    f = fm.FlexibleBody("F", beam("craig-bampton"), stiffening=stiffening, modes=[0, 1, 6, 7],
                        orientation={"rotvec": (0.2, -0.1, 0.3)}, angular_velocity=(0.3, -0.2, 0.5),
                        qd0=(0.1, -0.1, 0.05, 0.02))
    a = fm.RigidBody("A", mass=1.3, inertia=(0.11, 0.2, 0.25), position=(0.9, 0.4, 0.1), velocity=(0.1, 0.2, -0.1),
                     angular_velocity=(0.3, -0.2, 0.5), com=(0.02, -0.01, 0.03))
    j = fm.Revolute("j", "A", ("F", "xmax"), axis=(0.3, -0.5, 0.8), stiffness=3.0, damping=0.7)
    pin = fm.Spherical("pin", "ground", ("F", "xmin"))
    s = fm.SpringDamper("s", ("F", "xmax"), "ground", stiffness=40.0, damping=2.0, point_b=(1.2, 0.3, -0.2))
    return fm.Model([a, f], [j, pin], [fm.Gravity((0, 0, -9.81)), s])


def _evaluate(model, p, swap):
    h = 0.02
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    te = time_element(p)
    if swap:  # the same group evaluated by the NumPy reference
        for g, grp in enumerate(cm.groups):
            if grp.kind == "flexible":
                ref = ReferenceFlexibleBodies(model, grp.bodies)
                ref.group_index, ref.vel_cols = grp.group_index, grp.vel_cols
                cm.groups[g] = ref
    system = ElementSystem(cm, te)
    rng = np.random.default_rng(11)
    U = predict_element(system, st, h, w0, None) + 0.05 * rng.standard_normal(system.lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    st.extra["flex_q"] = st.extra["flex_q"] + 0.02 * rng.standard_normal(st.extra["flex_q"].shape)
    F, J = system.evaluate(U, st, h)
    F2, _ = system.evaluate(U, st, h, jacobian=False)
    assert np.array_equal(F, F2)  # the residual does not depend on the Jacobian request
    return F, J.toarray(), cm, st


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("stiffening", ["none", "preload", "full"])
@pytest.mark.parametrize("case", [_free, _jointed])
def test_modal_kernels_match_numpy_reference(case, stiffening, p):
    model = case(stiffening)
    F, J, _, _ = _evaluate(model, p, False)
    Fr, Jr, _, _ = _evaluate(model, p, True)
    scale_f = np.abs(Fr).max()
    assert np.abs(F - Fr).max() <= 1e-11 * scale_f, np.abs(F - Fr).max() / scale_f
    # per entry: relative to the row's largest entry (stiff modal rows next to unit kinematic rows)
    row = np.maximum(np.abs(Jr).max(axis=1, keepdims=True), 1e-300)
    err = np.abs(J - Jr) / row
    assert err.max() <= 1e-10, np.unravel_index(np.argmax(err), err.shape)


@pytest.mark.parametrize("stiffening", ["none", "full"])
def test_node_level_laws_match_numpy_reference(stiffening):
    model = _jointed(stiffening)
    _, _, cm, st = _evaluate(model, 2, False)
    grp = next(g for g in cm.groups if g.kind == "flexible")
    ref = ReferenceFlexibleBodies(model, grp.bodies)
    ref.group_index, ref.vel_cols = grp.group_index, grp.vel_cols
    assert np.allclose(grp.mass_blocks(st), ref.mass_blocks(st), rtol=0, atol=1e-13 * np.abs(ref.mass_blocks(st)).max())
    assert grp.strain_energy(st) == pytest.approx(ref.strain_energy(st), rel=1e-10)
    Mi = grp.inverse_mass_blocks(st)
    eye = np.broadcast_to(np.eye(grp.N), Mi.shape)
    assert np.abs(Mi @ ref.mass_blocks(st) - eye).max() <= 1e-12 * np.linalg.cond(ref.mass_blocks(st)).max()
    w = np.random.default_rng(5).standard_normal((grp.n, grp.N))
    assert grp.kinetic_energy(st, w) == pytest.approx(ref.kinetic_energy(st, w), rel=1e-13)
    g = np.array([0.3, -9.81, 1.1])
    V = ref.gravity_potential(st, g)
    assert abs(V) > 1.0 and grp.gravity_potential(st, g) == pytest.approx(V, rel=1e-13)
    part = next(part for part in cm.att_b.parts if cm.groups[part[0]] is grp)
    _, _, local, data = part
    x, R = grp.node_attach_pose(st, local, data)
    xr, Rr = ref.node_attach_pose(st, local, data)
    assert np.allclose(x, xr, rtol=0, atol=1e-14) and np.allclose(R, Rr, rtol=0, atol=1e-14)
    assert np.allclose(grp.node_velocity_map(st, local, data)[1], ref.node_velocity_map(st, local, data)[1],
                       rtol=0, atol=1e-14)


def test_simulation_matches_numpy_reference():
    """A few elements of the X3 slider-crank ("full": the acceleration preloads use the projected node
    velocity the marching driver stores for groups that have them) with the compiled group and
    with the NumPy reference group: the same trajectory to the Newton tolerance."""
    from flexmb.dynamics.bodies import BODY_TYPES, register_body_type
    from flexmb.validation.cases import case_x3

    model = case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, "full", case_x3.rod_data())
    opts = fm.SimulationOptions(newton=fm.NewtonOptions(tol=1e-13))
    sol = fm.simulate(model, 6e-3, 1e-3, p=2, show_progress=False, options=opts)
    compiled = BODY_TYPES["FlexibleBody"]
    try:
        register_body_type("FlexibleBody", ReferenceFlexibleBodies)
        ref = fm.simulate(model, 6e-3, 1e-3, p=2, show_progress=False, options=opts)
    finally:
        register_body_type("FlexibleBody", compiled)
    q, qr = sol.body("rod").modal, ref.body("rod").modal
    # the factors' truncation (1e-10 of the largest quartic term) and round-off
    assert np.abs(q - qr).max() <= 1e-7 * np.abs(qr).max(), np.abs(q - qr).max() / np.abs(qr).max()
    assert np.abs(sol.body_position - ref.body_position).max() <= 1e-11  # m (lengths 0.15-0.45 m)
