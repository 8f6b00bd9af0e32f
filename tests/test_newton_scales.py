"""Newton's absolute scales come from the model's own magnitudes (issue 8 section 2).

Models that failed with scales fixed from gravity and the initial velocities: at rest with no
gravity and driven by a torque, a chain on preloaded torsional springs without gravity, and the
same models moved away from the origin (the scales must not depend on where the model sits).
Each test checks physics, not only that the run finishes.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.solve.scales import model_length, model_magnitudes
from flexmb.dynamics.system import compile_model, initial_state


def _bar(name: str, x0: float, L: float = 1.0, m: float = 1.0, y: float = 0.0):
    J = m * L * L / 12.0
    return fm.RigidBody(name, m, (1e-3 * J, J, J), position=(x0 + L / 2, y, 0.0))


def two_bars(offset=(0.0, 0.0), torque: float = 1.0) -> fm.Model:
    """Two unit bars (1 kg, 1 m) on revolute joints about z, in a horizontal plane, at rest, no
    gravity; a constant torque on the first bar."""
    ox, oy = offset
    return fm.Model([_bar("b1", ox, y=oy), _bar("b2", ox + 1.0, y=oy)],
                    [fm.Revolute("j1", "ground", "b1", point=(ox, oy, 0), axis=(0, 0, 1)),
                     fm.Revolute("j2", "b1", "b2", point=(ox + 1, oy, 0), axis=(0, 0, 1))],
                    [fm.PointTorque("b1", (0, 0, torque), name="T")])


def spring_chain(n: int = 5, offset: float = 0.0) -> fm.Model:
    """A straight chain of unit bars on torsional springs (100 N m/rad) whose free angle is 0.1 rad:
    released from the straight line, no gravity."""
    bodies = [_bar(f"b{i}", offset + i) for i in range(n)]
    joints = [fm.Revolute(f"j{i}", "ground" if i == 0 else f"b{i - 1}", f"b{i}", point=(offset + i, 0, 0),
                          axis=(0, 0, 1), stiffness=100.0, angle0=0.1) for i in range(n)]
    return fm.Model(bodies, joints)


def _angle(sol, joint):
    return sol.joint(joint).rel_rotation[:, 2]


@pytest.mark.parametrize("p", [1, 2, 3])
def test_torque_driven_bars_at_rest_without_gravity(p):
    """Work-energy: the kinetic energy equals the work of the torque, T * angle of the first bar."""
    sol = fm.simulate(two_bars(), 1.0, 0.01, p=p)
    work = 1.0 * _angle(sol, "j1")
    assert work[-1] > 0.3  # it moved
    np.testing.assert_allclose(sol.kinetic_energy, work, atol=2e-4 * work[-1])


@pytest.mark.parametrize("p", [1, 2])
def test_preloaded_spring_chain_without_gravity(p):
    """Starts at t = 0 at the default tolerance and conserves kinetic + spring energy."""
    sol = fm.simulate(spring_chain(), 0.5, 0.005, p=p)
    E = sol.total_energy
    assert E[0] == pytest.approx(5 * 0.5 * 100.0 * 0.1 ** 2, rel=1e-9)
    assert np.ptp(E) < 1e-3 * E[0]
    assert sol.kinetic_energy.max() > 0.1 * E[0]


def test_scales_do_not_depend_on_where_the_model_sits():
    """The same mechanism at the origin and 100 m away: same magnitudes, same relative motion."""
    cms = [compile_model(two_bars(offset=o)) for o in ((0.0, 0.0), (100.0, -50.0))]
    mags = [model_magnitudes(cm, *initial_state(cm, 0.0), 0.0, 1.0) for cm in cms]
    assert mags[0] == mags[1]
    a, b = (fm.simulate(two_bars(offset=o), 0.5, 0.01, p=2) for o in ((0.0, 0.0), (100.0, -50.0)))
    np.testing.assert_allclose(_angle(a, "j2"), _angle(b, "j2"), atol=1e-8)


def test_magnitudes_see_loads_springs_and_drives():
    """The force scale grows with the applied torque and the spring preload; the speed scale with a
    drive's rate; the length is a lever arm, not the distance from the origin."""
    def mag(model, t_end=1.0):
        cm = compile_model(model)
        st, w0 = initial_state(cm, 0.0)
        return model_magnitudes(cm, st, w0, 0.0, t_end)

    assert mag(two_bars(torque=1000.0)).F > 100 * mag(two_bars(torque=1.0)).F
    assert mag(spring_chain()).F >= 100.0 * 0.1 / 5.0  # k |angle0| / L with L the chain's extent
    body = fm.RigidBody("r", 1.0, (0.01, 0.01, 0.02), position=(50.0, 0, 0))
    driven = fm.Model([body], [fm.Revolute("d", "ground", "r", point=(50.0, 0, 0), axis=(0, 0, 1),
                                           angular_velocity=300.0)])
    m = mag(driven)
    assert m.L < 1.0  # radius of gyration, not 50 m from the origin
    assert m.V >= 300.0 * m.L * 0.999
    # spread of the reference points (1 m) and lever arms (0.5 m), wherever the model sits
    assert model_length(compile_model(two_bars(offset=(1e4, 0)))) == pytest.approx(1.0, rel=1e-9)


def test_spinning_rotor_at_the_origin():
    """A carrier with a spinning rotor on a revolute joint, built at the origin: angular momentum of
    the free system is conserved."""
    carrier = fm.RigidBody("carrier", 10.0, (1.0, 1.0, 1.0), angular_velocity=(0.3, 0.0, 0.0))
    rotor = fm.RigidBody("rotor", 1.0, (0.01, 0.01, 0.02), angular_velocity=(0.3, 0.0, 100.0))
    sol = fm.simulate(fm.Model([carrier, rotor], [fm.Revolute("spin", "carrier", "rotor", point=(0, 0, 0), axis=(0, 0, 1))]),
                      0.2, 0.002, p=2)
    H = []
    for name, J in (("carrier", np.diag([1.0, 1.0, 1.0])), ("rotor", np.diag([0.01, 0.01, 0.02]))):
        b = sol.body(name)
        H.append(np.einsum("tij,jk,tlk,tl->ti", b.rotation, J, b.rotation, b.angular_velocity))
    Htot = H[0] + H[1]
    np.testing.assert_allclose(Htot, np.broadcast_to(Htot[0], Htot.shape), atol=1e-6 * np.linalg.norm(Htot[0]))


def test_sampled_max_is_the_largest_norm_of_the_samples_to_the_bit():
    """The sampled maximum of a time function (drive rates, loads) is the largest ``np.linalg.norm`` of its
    finite samples up to the first sample that raises (the one-array path for scalar values must give
    the same bits, also where the square overflows or underflows)."""
    from flexmb.dynamics.solve.scales import _sampled_max

    def reference(fn, times):
        best = 0.0
        for t in times:
            try:
                val = np.asarray(fn(float(t)), dtype=float).reshape(-1)
            except ZeroDivisionError:
                return best
            if np.all(np.isfinite(val)):
                best = max(best, float(np.linalg.norm(val)))
        return best

    rng = np.random.default_rng(17)
    times = np.linspace(0.0, 1.0, 33)
    for scale in (1.0, 1e-170, 1e160, 1e200, 1e-200):
        v = scale * rng.standard_normal(times.size)
        v[[3, 11]] = (np.nan, np.inf)
        table = dict(zip(times.tolist(), v.tolist()))
        scalar = lambda t, table=table: [table[t]]  # noqa: E731 - a drive's rate, as model_magnitudes wraps it
        stops = lambda t, table=table: [table[t] if t < 0.5 else 1 / 0]  # noqa: E731
        vector = lambda t, table=table: [table[t], -2 * table[t], 0.5]  # noqa: E731 - a load
        with np.errstate(over="ignore", under="ignore"):
            for fn in (scalar, stops, vector):
                assert _sampled_max(fn, times, "f") == reference(fn, times)
    assert _sampled_max(lambda t: 1 / 0, times, "f") == 0.0
