"""Flexible-body outputs (issue 7 section 5): node-set displacements and positions, deflection from
the chord between two interfaces, per-body elastic and kinetic energy, deflection plots, and the
errors when the solution does not know its model."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh.structured import structured_box

ALU = fm.Material(E=7e9, nu=0.3, rho=2700.0)  # E lowered tenfold: visible deflections in 0.2 s


@lru_cache(maxsize=None)
def bar_data():
    """1 m x 2 cm x 2 cm hex20 bar along x, Craig-Bampton on xmin (reference) and xmax:
    4 fixed-interface modes + the 6 constraint modes of xmax (10 modal coordinates)."""
    mesh = structured_box((1.0, 0.02, 0.02), (8, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01), material=ALU)
    return build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4)


@lru_cache(maxsize=None)
def pendulum_run(stiffening="full"):
    """The flexible bar on a hinge at its root with a rigid bob on a spherical joint at its tip, under gravity."""
    data = bar_data()
    bar = fm.FlexibleBody("bar", data, stiffening=stiffening)
    bob = fm.RigidBody("bob", 0.1, np.full(3, 1e-5), position=(1.0, 0, 0), com=(0.01, 0.0, 0.0))
    joints = [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1)),
              fm.Spherical("tip", ("bar", "xmax"), "bob", point=(1.0, 0, 0))]
    model = fm.Model([bar, bob], joints, [fm.Gravity((0, -9.81, 0))])
    return model, fm.simulate(model, 0.2, 0.005, p=2)


def attached(stiffening="full"):
    model, sol = pendulum_run(stiffening)
    return model, sol.attach(model)


def test_node_positions_are_the_floating_frame_plus_the_mode_shapes():
    """position = x + R (X0 + Phi q) and displacement = Phi q at every node and time, by hand; the
    deflection is real (mm)."""
    _, sol = attached()
    body, data = sol.body("bar"), bar_data()
    ns = body.nodes()
    assert ns.position.shape == (sol.nt, data.n_nodes, 3) and ns.nodes.tolist() == list(range(data.n_nodes))
    k = sol.nt - 1
    u = data.mode_shapes @ body.modal[k]  # (n, 3)
    np.testing.assert_allclose(ns.displacement[k], u, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ns.position[k], body.position[k] + (data.points + u) @ body.rotation[k].T,
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(ns.displacement_inertial[k], u @ body.rotation[k].T, rtol=0, atol=1e-15)
    assert np.abs(ns.displacement).max() > 1e-3


def test_rigid_interface_nodes_move_with_the_interface():
    """The nodes of a rigid (RBE2-like) interface move rigidly with it: their centroid is the
    interface point (the face centre) at every time, and the root face (reference) does not deform."""
    _, sol = attached()
    body, data = sol.body("bar"), bar_data()
    tip = body.nodes("xmax")
    assert np.allclose(data.points[tip.nodes].mean(axis=0), data.interface("xmax").position, atol=1e-15)
    assert np.abs(tip.position.mean(axis=1) - body.interface("xmax").position).max() < 1e-14
    assert np.abs(body.nodes("xmin").displacement).max() < 1e-15


def test_points_snap_to_nodes_only_within_the_tolerance():
    _, sol = attached()
    body, data = sol.body("bar"), bar_data()
    node = 17
    assert body.nodes(points=data.points[node]).nodes.tolist() == [node]
    with pytest.raises(ModelError, match=r"0\.01 m from the nearest node .*pass tol="):
        body.nodes(points=(0.5, 0.0, 0.0))  # the bar's axis has no nodes (1 element across)
    snapped = body.nodes(points=[(0.5, 0.0, 0.0), (1.0, 0.01, 0.0)], tol=0.011)
    d = np.linalg.norm(data.points[snapped.nodes] - [(0.5, 0, 0), (1.0, 0.01, 0)], axis=1)
    assert np.all(d <= 0.0100001)
    with pytest.raises(ModelError, match="interfaces: \\['xmin', 'xmax'\\]"):
        body.nodes("tip")
    with pytest.raises(ModelError, match="node indices 0 .. "):
        body.nodes([data.n_nodes])


def test_chord_deflection_is_the_distance_from_the_deformed_chord():
    """d = r - (r.e) e with r from the root interface point to the deformed node and e the unit chord
    to the deformed tip interface point: checked by hand; d is normal to the chord; the signed form
    along z x e is d's y-like component; a node on the undeformed chord line (the interface point
    itself) has d = 0 at q = 0."""
    _, sol = attached()
    body, data = sol.body("bar"), bar_data()
    node = int(np.argmin(np.linalg.norm(data.points - [0.5, 0.01, 0.0], axis=1)))
    d = body.chord_deflection(node, ("xmin", "xmax"))
    q = body.modal
    p = data.points[node] + q @ data.mode_shapes[node].T
    a = data.interface("xmin").position + q @ data.interface("xmin").modal_map[:3].T
    b = data.interface("xmax").position + q @ data.interface("xmax").modal_map[:3].T
    e = (b - a) / np.linalg.norm(b - a, axis=1)[:, None]
    r = p - a
    np.testing.assert_allclose(d, r - np.sum(r * e, axis=1)[:, None] * e, rtol=0, atol=1e-15)
    assert np.abs(np.sum(d * e, axis=1)).max() < 1e-15
    s = body.chord_deflection(node, ("xmin", "xmax"), axis=(0, 0, 1))
    np.testing.assert_allclose(s, np.sum(d * np.cross([0, 0, 1.0], e), axis=1), rtol=0, atol=1e-15)
    # at t = 0 (undeformed) the node sits 0.01 m above the chord, and gravity bends the bar down (-y)
    assert s[0] == pytest.approx(0.01, abs=1e-14) and (s - 0.01).min() < -5e-4
    with pytest.raises(ModelError, match="interfaces"):
        body.chord_deflection(node, ("xmin", "tip"))


def test_chord_deflection_refuses_a_chord_or_an_axis_it_cannot_measure():
    """One interface named twice (a zero chord: NaNs and numpy's divide warning before) and an axis
    along the chord (axis x chord ~ 0: numbers scaled towards zero before) are errors; an axis tilted
    from the bending normal gives the same signed deflection (unit direction of axis x chord)."""
    import warnings

    from flexmb.results.flexible_outputs import modal_chord_deflection

    data = bar_data()
    q = np.zeros((3, data.n_modes))
    q[:, :2] = [[0.0, 0.0], [1e-3, 2e-3], [-2e-3, 1e-3]]
    node = int(np.argmin(np.linalg.norm(data.points - [0.5, 0.01, 0.0], axis=1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning on the way to the error
        with pytest.raises(ModelError, match=r"ends=\('xmax', 'xmax'\) name one interface twice.*give two different"):
            modal_chord_deflection(data, q, node, ("xmax", "xmax"))
        for axis in [(1, 0, 0), (1.0, 0.05, 0.0), (-2, 0, 0)]:
            with pytest.raises(ModelError, match=r"deg from the chord 'xmin' -> 'xmax'.*give an axis normal"):
                modal_chord_deflection(data, q, node, ("xmin", "xmax"), axis=axis)
        for axis in ["z", (0, 0, 0), (0, 0, np.nan), (0, 1)]:
            with pytest.raises(ModelError, match="axis=.* must be a non-zero finite vector"):
                modal_chord_deflection(data, q, node, ("xmin", "xmax"), axis=axis)
    s_z = modal_chord_deflection(data, q, node, ("xmin", "xmax"), axis=(0, 0, 1))
    for k in range(len(q)):  # an axis tilted along the deformed chord: the same direction axis x chord
        a, b = (data.interface(n).position + data.interface(n).modal_map[:3] @ q[k] for n in ("xmin", "xmax"))
        tilted = np.array([0, 0, 1.0]) + (b - a) / np.linalg.norm(b - a)
        s_k = modal_chord_deflection(data, q[k:k + 1], node, ("xmin", "xmax"), axis=tilted)
        assert s_k[0] == pytest.approx(s_z[k], rel=1e-12)
    d = modal_chord_deflection(data, q, node, ("xmin", "xmax"))
    assert np.all(np.abs(s_z) <= np.linalg.norm(d, axis=1) + 1e-15)  # a component of d along a unit vector


def test_body_energies_add_up_to_the_solution_energies():
    """Sum over the bodies of the per-body kinetic energy = Solution.kinetic_energy (rigid bob with
    an offset centre of mass, flexible bar with its configuration-dependent mass matrix); the bar's
    elastic energy with 'full' (quadratic + cubic + quartic) and 'none' (quadratic only, by hand)
    = the potential energy minus gravity's, which is computed here from the deformed mesh's mass."""
    for stiffening in ("full", "none"):
        model, sol = attached(stiffening)
        T = sum(sol.body(n).kinetic_energy for n in sol.body_names)
        assert np.abs(T - sol.kinetic_energy).max() < 1e-12 * sol.kinetic_energy.max()
        bar, bob = sol.body("bar"), sol.body("bob")
        data = bar_data()
        # gravity potential -m g.x_c of both bodies: the bar's centre of mass from its invariants
        S = data.invariants.first_moment + bar.modal @ data.invariants.modal_first_moment
        xc_bar = bar.position + np.einsum("tij,tj->ti", bar.rotation, S) / data.mass
        xc_bob = bob.point(model.bodies[1].com).position
        Vg = 9.81 * (data.mass * xc_bar[:, 1] + 0.1 * xc_bob[:, 1])
        U = bar.elastic_energy
        assert np.abs(U + Vg - sol.potential_energy).max() < 1e-11 * np.abs(Vg).max()
        assert U.max() > 1e-6
        if stiffening == "none":
            np.testing.assert_allclose(U, 0.5 * np.sum(data.omega2 * bar.modal ** 2, axis=1), rtol=1e-13, atol=0)


def test_free_body_elastic_energy_is_its_potential_energy():
    """No gravity, no joints: the potential energy is the strain energy, including the cubic and
    quartic terms of a large initial modal amplitude ('full')."""
    data = bar_data()
    f = fm.FlexibleBody("F", data, modes=[0, 1], q0=(0.03, 0.02), angular_velocity=(0, 0, 2.0))
    model = fm.Model([f])
    sol = fm.simulate(model, 0.05, 0.005, p=2).attach(model)
    U = sol.body("F").elastic_energy
    quad = 0.5 * np.sum(data.omega2[:2] * sol.body("F").modal ** 2, axis=1)
    assert np.abs(U - sol.potential_energy).max() < 1e-12 * U.max()
    assert np.abs(U - quad).max() > 1e-6 * U.max()  # the cubic/quartic terms are there


def test_outputs_need_the_model_and_name_the_fix(tmp_path):
    model, sol = pendulum_run()
    path = sol.save(tmp_path / "run.npz")
    loaded = fm.Solution.load(path)
    assert loaded.model is None
    with pytest.raises(ModelError, match=r"FlexibleBodyData of body 'bar'.*sol\.attach\(model\)"):
        loaded.body("bar").nodes()
    with pytest.raises(ModelError, match="sol.attach"):
        loaded.body("bob").kinetic_energy  # noqa: B018
    loaded.attach(model)
    np.testing.assert_array_equal(loaded.body("bar").nodes("xmax").position, sol.attach(model).body("bar").nodes("xmax").position)
    with pytest.raises(ModelError, match="rigid body"):
        loaded.body("bob").nodes()
    other = fm.Model([fm.FlexibleBody("bar", bar_data(), modes=[0, 1]), model.bodies[1]], model.joints[:1])
    with pytest.raises(ModelError, match=f"2 modes in the model but {bar_data().n_modes} modal coordinates"):
        loaded.attach(other)
    with pytest.raises(ModelError, match="bodies"):
        loaded.attach(fm.Model([model.bodies[1]]))
    # dense output keeps the model
    assert sol.at([0.1]).body("bar").nodes(0).position.shape == (1, 1, 3)


def test_plot_deflection_draws_the_tip_interface(tmp_path):
    pytest.importorskip("matplotlib")
    model, sol = pendulum_run()
    ax = sol.plot_deflection("bar", components="y", model=model, path=tmp_path / "tip.png")
    (line,) = ax.get_lines()
    mm = bar_data().interface("xmax").modal_map[:3]
    np.testing.assert_allclose(line.get_ydata(), (sol.body("bar").modal @ mm.T)[:, 1], rtol=0, atol=0)
    assert line.get_label() == "xmax y" and (tmp_path / "tip.png").stat().st_size > 0
    ax = sol.plot_deflection("bar", interfaces=[], nodes=[3, 5], components="xy")
    assert len(ax.get_lines()) == 4
    with pytest.raises(ModelError, match="no interface 'tip'"):
        sol.plot_deflection("bar", interfaces=["tip"])


def test_motion_in_another_body_frame():
    """The bob hangs on a spherical joint at the bar's tip interface: seen from the bar's frame it sits
    at the tip interface's deformed point c + Phi_t q and moves with Phi_t qd (to the joint's
    constraint tolerance); a body seen from itself stays at its origin, unturned."""
    _, sol = attached()
    bar, bob = sol.body("bar"), sol.body("bob")
    data = bar_data()
    seen = bob.in_frame(bar)
    T = data.interface("xmax").modal_map[:3]
    tip = data.interface("xmax").position + bar.modal @ T.T
    assert seen.frame == "bar" and np.abs(seen.position - tip).max() < 1e-9
    assert np.abs(seen.velocity - bar.modal_rate @ T.T).max() < 1e-9 * np.abs(bob.velocity).max()
    self_view = bar.in_frame(bar)
    assert np.abs(self_view.position).max() == 0 and np.abs(self_view.rotation - np.eye(3)).max() < 1e-15
    assert np.abs(self_view.velocity).max() == 0 and np.abs(self_view.angular_velocity).max() == 0
    tip_view = self_view.interface("xmax")  # the tip interface in the bar frame: its deformed point
    assert np.abs(tip_view.position - tip).max() < 1e-12
    pts = bob.in_frame(bar).point((0.01, 0.0, 0.0))  # body-fixed points follow the relative motion
    assert np.abs(pts.position - (seen.position + np.einsum("tij,j->ti", seen.rotation, [0.01, 0, 0]))).max() < 1e-15
    with pytest.raises(ModelError, match="not the kinetic energy"):
        seen.kinetic_energy  # noqa: B018
    with pytest.raises(ModelError, match="already relative"):
        seen.in_frame(bar)
    with pytest.raises(ModelError, match="needs a BodyView"):
        bob.in_frame("bar")


def test_chord_angle_is_the_frame_angle_plus_the_chord_rotation():
    """Planar swing about z: the inertial chord angle (from the interfaces' inertial points) is the
    frame's angle plus the deformed chord's angle in the body frame; it starts at 0 (horizontal) and
    falls; the same chord seen from the bar's own frame turns by the elastic part only."""
    _, sol = attached()
    bar, data = sol.body("bar"), bar_data()
    ang = bar.chord_angle(("xmin", "xmax"))
    d = bar.interface("xmax").position - bar.interface("xmin").position
    np.testing.assert_allclose(ang, np.unwrap(np.arctan2(d[:, 1], d[:, 0])), atol=1e-12)
    frame = np.unwrap(np.arctan2(bar.rotation[:, 1, 0], bar.rotation[:, 0, 0]))
    own = bar.in_frame(bar).chord_angle(("xmin", "xmax"))
    np.testing.assert_allclose(ang, frame + own, atol=1e-12)
    assert ang[0] == pytest.approx(0.0, abs=1e-12) and ang[-1] < -0.2  # it swings down (-0.27 rad in 0.2 s)
    assert 0 < np.abs(own).max() < 0.01  # the chord's elastic rotation: small, not zero
    assert np.allclose(bar.chord_angle(("xmin", "xmax"), axis=(0, 0, -1)), -ang)
    with pytest.raises(ModelError, match=r"deg from axis=\[1, 0, 0\].*normal to the plane"):
        bar.chord_angle(("xmin", "xmax"), axis=(1, 0, 0), zero=(0, 1, 0))
    with pytest.raises(ModelError, match="name one interface twice"):
        bar.chord_angle(("xmin", "xmin"))
    with pytest.raises(ModelError, match="zero=.* is along axis"):
        bar.chord_angle(("xmin", "xmax"), zero=(0, 0, 2))
