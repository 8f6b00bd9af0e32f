"""Model input validation: every error names the element, the value and the fix."""
import logging

import numpy as np
import pytest

import flexmb as fm


def bob(**kw):
    args = dict(mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    args.update(kw)
    return fm.RigidBody("bob", **args)


@pytest.mark.parametrize("kw, match", [
    (dict(mass=0.0), "mass=0.0 must be a finite positive"),
    (dict(mass=float("nan")), "mass=nan"),
    (dict(inertia=(1.0, 1.0, 0.0)), "positive definite"),
    (dict(inertia=(1.0, 1.0, 5.0)), "triangle inequality"),
    (dict(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "not symmetric"),
    (dict(position=(0.0, float("nan"), 0.0)), "position=.*NaN"),
    (dict(velocity=(1.0, 2.0)), "velocity must have 3 components"),
    (dict(orientation=np.diag([1.0, 1.0, -1.0])), "not a proper rotation"),
    (dict(orientation={"quat": (0.0, 0.0, 0.0, 0.0)}), "orientation"),
])
def test_bad_body_input(kw, match):
    with pytest.raises(fm.ModelError, match=match):
        bob(**kw)


def test_unknown_body_in_joint_is_named():
    pin = fm.Revolute("pin", "ground", "bobb", point=(0, 0, 0), axis=(0, 0, 1))
    with pytest.raises(fm.ModelError, match=r"Revolute 'pin': body_b='bobb' is not a body of the model"):
        fm.Model([bob()], [pin])


def test_joint_frames_must_coincide():
    # frames given in body coordinates that do not meet at t = 0
    pin = fm.Spherical("pin", "ground", "bob", frame_a=fm.Frame((0, 0, 0)), frame_b=fm.Frame((0.9, 0, 0)))
    with pytest.raises(fm.ModelError, match=r"Spherical 'pin': attachment frames do not satisfy the joint.*s_x = "):
        fm.simulate(fm.Model([bob()], [pin]), 0.1, 0.01)


def test_inconsistent_initial_velocity_is_projected_and_logged(caplog):
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    model = fm.Model([bob(velocity=(0.5, 2.0, 0.0))], [pin])   # radial component 0.5 violates the pin
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        sol = fm.simulate(model, 0.01, 0.01)
    assert "projected" in caplog.text
    v0 = sol.body_velocity[0, 0]
    assert abs(v0[0]) < 1e-12 and v0[1] == pytest.approx(2.0, rel=1e-3)


def test_bad_step_and_time():
    m = fm.Model([bob()])
    with pytest.raises(fm.ModelError, match=r"simulate: h=-0.1 must be > 0 \[s\]"):
        fm.simulate(m, 1.0, -0.1)
    with pytest.raises(fm.ModelError, match=r"simulate: t_end=0.0 must be greater than t0=0.0 \[s\]"):
        fm.simulate(m, 0.0, 0.1)
    with pytest.raises(fm.ModelError, match=r"simulate: h=nan is not finite"):
        fm.simulate(m, 1.0, float("nan"))


def _fourbar(tilted=True):
    from scipy.optimize import fsolve

    A, B, D = np.zeros(3), np.array([0.6, 0.8, 0.0]), np.array([2.0, 0.0, 0.0])
    C = np.append(fsolve(lambda c: [np.hypot(c[0] - B[0], c[1] - B[1]) - 2.0, np.hypot(c[0] - D[0], c[1] - D[1]) - 1.5],
                         [2.2, 1.4], xtol=1e-14), 0.0)

    def bar(name, p, q):
        L = np.linalg.norm(q - p)
        ex = (q - p) / L
        ez = np.array([0.0, 0.0, 1.0])
        return fm.RigidBody(name, mass=1.0, inertia=(1e-3, L * L / 12, L * L / 12), position=(p + q) / 2,
                            orientation=np.column_stack([ex, np.cross(ez, ex), ez]))

    z = (0, 0, 1)
    bodies = [bar("crank", A, B), bar("coupler", B, C), bar("rocker", C, D)]
    joints = [fm.Revolute("O1", "ground", "crank", point=A, axis=z), fm.Revolute("B", "crank", "coupler", point=B, axis=z),
              fm.Revolute("C", "coupler", "rocker", point=C, axis=z), fm.Revolute("O2", "rocker", "ground", point=D, axis=z)]
    return bodies, joints


def test_redundant_fourbar_runs_correctly_or_is_refused(caplog):
    bodies, joints = _fourbar()
    model = fm.Model(bodies, joints, [fm.Gravity((0, -9.81, 0))])
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        sol = fm.simulate(model, 1.0, 0.01)
    assert len(sol.meta["redundant_constraints"]) == 3
    assert "redundant" in caplog.text
    # same mechanism with the last revolute replaced by a spherical joint (one redundancy left)
    ref = fm.simulate(fm.Model(bodies, joints[:3] + [fm.Spherical("O2", "rocker", "ground", point=(2.0, 0, 0))],
                               [fm.Gravity((0, -9.81, 0))]), 1.0, 0.01)
    assert len(ref.meta["redundant_constraints"]) == 1
    assert np.abs(sol.body_position - ref.body_position).max() < 1e-10
    assert np.ptp(sol.body_position[:, 0, 0]) > 0.1  # it really moves
    with pytest.raises(fm.ModelError, match=r"3 redundant .*(O1|B|C|O2):phi_"):
        fm.simulate(model, 0.1, 0.01, options=fm.SimulationOptions(redundant="error"))


def test_conflicting_drive_is_refused():
    """A driven revolute fighting a weld: no motion satisfies both; refused at set-up."""
    b = bob()
    model = fm.Model([b], [fm.Revolute("drive", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), angular_velocity=1.0),
                           fm.Fixed("weld", "ground", "bob", point=(-1, 0, 0), axis=(0, 0, 1))])
    with pytest.raises(fm.ModelError, match=r"contradict each other: the dependent equations .*(drive|weld):phi_z"):
        fm.simulate(model, 0.1, 0.01)


def test_non_convergence_reports_time_and_equation():
    """A force that grows without bound in one step makes Newton fail: the error says where."""
    model = fm.Model([bob()], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))],
                     [fm.PointForce("bob", lambda t, s: (0.0, 1e12 * np.exp(50 * s.position[1]), 0.0))])
    with pytest.raises(fm.ConvergenceError, match=r"time element t = 0 \.\. .*largest correction: (body 'bob'|joint 'pin')") as info:
        fm.simulate(model, 0.1, 0.05, options=fm.SimulationOptions(max_halvings=1))
    assert info.value.time == 0.0


def test_parameter_checks_of_joints_springs_and_model():
    pin = dict(point=(0, 0, 0), axis=(1, 0, 0))
    with pytest.raises(fm.ModelError, match=r"Prismatic 's': stiffness=-1.0 must be >= 0 \[N/m\]"):
        fm.Prismatic("s", "ground", "bob", stiffness=-1.0, **pin)
    with pytest.raises(fm.ModelError, match=r"Prismatic 's': a driven prismatic joint cannot also have stiffness"):
        fm.Prismatic("s", "ground", "bob", displacement=lambda t: 0.1 * t, stiffness=5.0, **pin)
    with pytest.raises(fm.ModelError, match=r"SpringDamper 'k': free_length=-0.5 must be >= 0"):
        fm.SpringDamper("k", "ground", "bob", free_length=-0.5)
    with pytest.raises(fm.ModelError, match=r"SpringDamper 'k': free_length=nan is not finite"):
        fm.SpringDamper("k", "ground", "bob", free_length=float("nan"))
    with pytest.raises(fm.ModelError, match=r"Model: assembly_tol=nan is not finite; give a finite number"):
        fm.Model([bob()], assembly_tol=float("nan"))
    with pytest.raises(fm.ModelError, match=r"Revolute 'pin': damping=nan is not finite; give a finite number \[N m s/rad\]"):
        fm.Revolute("pin", "ground", "bob", damping=float("nan"), **pin)
    with pytest.raises(fm.ModelError, match=r"Revolute 'pin': angle0=nan is not finite"):
        fm.Revolute("pin", "ground", "bob", angle0=float("nan"), **pin)
    with pytest.raises(fm.ModelError, match=r"SimulationOptions: max_halvings=-1 must be >= 0"):
        fm.simulate(fm.Model([bob()]), 0.1, 0.01, options=fm.SimulationOptions(max_halvings=-1))
    # a prismatic spring (no drive) is accepted and acts: a mass on a horizontal slider spring oscillates
    # about s = displacement0 with omega = sqrt(k/m) = 2: x(t) = -1.1 + 0.1 cos(2 t) (p = 2, small h)
    slider = fm.Prismatic("s", "ground", "bob", point=(-1.0, 0, 0), axis=(1, 0, 0), stiffness=4.0, displacement0=-0.1)
    sol = fm.simulate(fm.Model([bob(inertia=np.full(3, 1e-3))], [slider]), 1.0, 0.01, p=2)
    np.testing.assert_allclose(sol.body("bob").position[:, 0], -1.1 + 0.1 * np.cos(2.0 * sol.t), atol=1e-7)


def test_frames_are_checked_when_simulate_starts_not_at_build():
    pin = fm.Spherical("pin", "ground", "bob", frame_a=fm.Frame((0, 0, 0)), frame_b=fm.Frame((0.9, 0, 0)))
    model = fm.Model([bob()], [pin])  # builds: the check needs t0 (drives) and is done by simulate
    with pytest.raises(fm.ModelError, match="attachment frames do not satisfy the joint at t = 0"):
        fm.simulate(model, 0.1, 0.01)


def test_inertial_points_of_force_elements_equal_their_body_frame_points():
    R = fm.orientation(axis=(0, 0, 1), angle=0.7)
    x = np.array([0.3, -1.0, 0.2])
    b = fm.RigidBody("b", mass=1.0, inertia=(0.01, 0.02, 0.025), position=x, orientation=R, com=(0.1, 0, 0))
    hinge = fm.Spherical("hinge", "ground", "b", point=x + R @ np.array([-0.5, 0.0, 0.0]))
    p_body = np.array([0.4, 0.1, 0.0])
    p_inertial = x + R @ p_body
    g = fm.Gravity((0, -9.81, 0))

    def run(point_frame, pb, pa):
        spring = fm.SpringDamper("k", "ground", "b", point_a=pa, point_b=pb, stiffness=50.0, damping=0.5,
                                 point_frame=point_frame)
        push = fm.PointForce("b", lambda t: (0.0, 0.0, 2.0 * t), point=pb, point_frame=point_frame)
        model = fm.Model([b], [hinge], [g, spring, push])
        assert all(getattr(f, "point_frame", "body") == "body" for f in model.forces)  # converted at build
        return model, fm.simulate(model, 0.2, 0.01)

    m1, s1 = run("body", p_body, (1.0, 0.5, 0.0))
    m2, s2 = run("inertial", p_inertial, (1.0, 0.5, 0.0))  # ground points are inertial either way
    np.testing.assert_allclose(m2.forces[1].point_b, p_body, atol=1e-15)
    np.testing.assert_allclose(m2.forces[2].point, p_body, atol=1e-15)
    np.testing.assert_allclose(s2.body_position, s1.body_position, rtol=0, atol=1e-13)
    np.testing.assert_allclose(s2.joint_force, s1.joint_force, rtol=0, atol=1e-10)


def _parallelogram_at_change_point():
    """Cranks and coupler collinear on the x axis: the change point of a parallelogram four-bar,
    where an in-plane constraint equation is dependent at t0 but not anywhere near it."""
    from flexmb import Gravity, Model, Revolute, RigidBody

    def bar(name, a, b, m=1.0):
        a, b = np.array(a, float), np.array(b, float)
        L = np.linalg.norm(b - a)
        return RigidBody(name, mass=m, inertia=(1e-4, m * L * L / 12, m * L * L / 12), position=(a + b) / 2)

    bodies = [bar("c1", (0, 0, 0), (0.5, 0, 0)), bar("cp", (0.5, 0, 0), (1.5, 0, 0)), bar("c2", (1, 0, 0), (1.5, 0, 0))]
    joints = [Revolute("O1", "ground", "c1", point=(0, 0, 0), axis=(0, 0, 1)),
              Revolute("A", "c1", "cp", point=(0.5, 0, 0), axis=(0, 0, 1)),
              Revolute("B", "cp", "c2", point=(1.5, 0, 0), axis=(0, 0, 1)),
              Revolute("O2", "c2", "ground", point=(1, 0, 0), axis=(0, 0, 1))]
    return Model(bodies, joints, [Gravity((0, -9.81, 0))])


def test_redundancy_is_decided_at_a_generic_configuration(caplog):
    """Issue 8 section 1: at the change point 4 equations are dependent, generically only the 3
    out-of-plane ones; dropping an in-plane one would let the joint open by metres."""
    import logging

    from flexmb.dynamics.node.redundancy import detect_redundant
    from flexmb.dynamics.system import compile_model, initial_state

    model = _parallelogram_at_change_point()
    cm = compile_model(model)
    st, _ = initial_state(cm)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        dep, inconsistent = detect_redundant(cm, st)
    assert len(dep) == 3 and not inconsistent
    assert {c for _, c in dep} == {2, 3, 4}  # s_z, phi_x, phi_y: out of plane
    assert any("singular" in r.getMessage() for r in caplog.records)


def test_a_dropped_equation_that_drifts_stops_the_run():
    """The dropped (redundant) equations are monitored at every node: a violation beyond the
    assembly tolerance stops the run with an error naming the joint and component."""
    from flexmb.dynamics.simulate import Run, SimulationOptions

    model = _parallelogram_at_change_point()
    run = Run.start(model, 0.1, 0.01, 1, 0.0, SimulationOptions())
    labels = run.selection.dropped
    assert labels
    j, c = labels[0]
    if c < 3:
        run.st.s[j, c] += 1e-3  # as if the dropped equation had opened
    else:
        run.st.acc[j, c - 3] += 1e-3
    from flexmb.errors import ConstraintViolationError

    with pytest.raises(ConstraintViolationError, match=rf"{model.joints[j].name}.*dropped"):
        run._check_dropped()


@pytest.mark.parametrize("kind", ["revolute", "universal", "prismatic"])
def test_attachment_frames_from_point_and_axis_are_checked_rotations(kind):
    """The attachment frames a model derives from a joint's point and axis (``Frame.checked``: no input
    checks again) are the body-frame images of one orthonormal joint frame: proper rotations whose
    z axis (universal: x and y) is the given axis in each body, meeting at the point, with the arrays
    the checked constructor makes of the same values (float (3,) and (3, 3))."""
    from flexmb.rotations import so3

    axis = np.array([0.3, -0.4, 0.5]) / np.linalg.norm([0.3, -0.4, 0.5])
    axis2 = np.cross(axis, [1.0, 0.0, 0.0])
    axis2 /= np.linalg.norm(axis2)
    R = so3.exp(np.array([0.2, -0.1, 0.7]))
    b = bob(orientation=R)
    point = np.array([-0.5, 0.2, 0.1])
    cls = {"revolute": fm.Revolute, "universal": fm.Universal, "prismatic": fm.Prismatic}[kind]
    kw = dict(axis2=axis2) if kind == "universal" else {}
    joint = cls("j", "ground", "bob", point=point, axis=axis, **kw)
    model = fm.Model([b], [joint])
    fa, fb = model.attachment_frames(joint)
    for f, Rb, xb in ((fa, np.eye(3), np.zeros(3)), (fb, R, b.position)):
        again = fm.Frame(f.origin, f.orientation)  # the checking constructor accepts them, unchanged
        assert np.array_equal(again.origin, f.origin) and np.array_equal(again.orientation, f.orientation)
        same = fm.Frame.checked(list(f.origin), f.orientation.tolist(), site="s")  # lists: float arrays
        assert np.array_equal(same.origin, f.origin) and np.array_equal(same.orientation, f.orientation)
        assert same.site == "s" and same.origin.shape == (3,)
        assert f.origin.dtype == float and f.origin.shape == (3,) and f.orientation.shape == (3, 3)
        G = Rb @ f.orientation  # the joint frame in inertial axes
        assert np.allclose(G.T @ G, np.eye(3), atol=1e-14) and np.linalg.det(G) > 0
        assert np.allclose(xb + Rb @ f.origin, point, atol=1e-14)
        if kind == "universal":
            assert np.allclose(G[:, 0], axis, atol=1e-14) and np.allclose(G[:, 1], axis2, atol=1e-14)
        else:
            assert np.allclose(G[:, 2], axis, atol=1e-14)
