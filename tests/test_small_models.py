"""The fixed cost per time element of small models (issue 6 C): what was changed to cut it keeps the
results of full Newton to round-off.

* Full Newton reuses its last factorization for the converging iteration (``NewtonOptions.reuse_near``):
  one Jacobian and one factorization fewer per element, the converged unknowns unchanged to round-off
  (the simplified increment differs from the Newton one by O(|previous increment| x |increment|)).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.dynamics.solve.linsolve import linear_solver
from flexmb.dynamics.solve.newton import NewtonOptions, newton_solve


def cubic_problem(n=40, c=0.3, seed=0):
    rng = np.random.default_rng(seed)
    D = sp.random(n, n, density=0.1, random_state=rng, format="csc") * 0.1
    b = rng.standard_normal(n)

    def residual(U):
        return U + c * U ** 3 + D @ U - b

    def evaluate(U):
        return residual(U), (sp.diags(1.0 + 3 * c * U ** 2) + D).tocsc()

    return evaluate, residual, b


def test_late_reuse_converges_to_the_full_newton_root_with_fewer_factorizations():
    evaluate, residual, b = cubic_problem()
    scale = np.ones(b.size)
    # the |dU| <= tol test alone: both stop after the same increment, whose remaining error is then
    # O(|dU|^2) (full) or O(|previous dU| |dU|) (late), both at round-off (the predicted stop would accept
    # the increment before, at a remaining error ~1e-13 that differs between the two; tested in
    # tests/test_newton_stop.py)
    full = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"),
                        NewtonOptions(reuse_near=0.0, predicted_stop=False), residual=residual)
    late = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(predicted_stop=False),
                        residual=residual)
    assert full.converged and late.converged
    assert full.n_factor == full.iterations  # full Newton: a factorization per iteration
    assert late.iterations == full.iterations and late.n_factor == full.n_factor - 1
    assert late.n_jacobian == full.n_jacobian - 1
    assert np.abs(late.U - full.U).max() <= 1e-14 * np.abs(full.U).max()


def test_late_reuse_needs_a_residual_only_evaluation():
    evaluate, _, b = cubic_problem()
    r = newton_solve(evaluate, b.copy(), np.ones(b.size), linear_solver("superlu"), NewtonOptions())
    assert r.converged and r.n_factor == r.iterations


def test_newton_option_reuse_near_is_checked():
    model = fm.Model([fm.RigidBody("b", mass=1.0, inertia=(1, 1, 1))], [], [])
    with pytest.raises(fm.ModelError, match="reuse_near"):
        fm.simulate(model, 0.1, 0.05, options=fm.SimulationOptions(newton=NewtonOptions(reuse_near=-1.0)))


def pendulum():
    bob = fm.RigidBody("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(-1.0, 0, 0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    return fm.Model([bob], [pin], [fm.Gravity((0, -9.81, 0))])


def chain(n=4):
    bodies = [fm.RigidBody(f"bar{k}", mass=0.3, inertia=(2.25e-3, 2.25e-3, 2.7e-8), position=((k - 0.5) * 0.3, 0, 0))
              for k in range(1, n + 1)]
    joints = [fm.Spherical(f"J{k}", "ground" if k == 1 else f"bar{k - 1}", f"bar{k}", point=((k - 1) * 0.3, 0, 0))
              for k in range(1, n + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


@pytest.mark.parametrize("make, h, p", [(pendulum, 1 / 32, 2), (chain, 2e-3, 1), (chain, 1e-2, 3)])
def test_simulation_with_late_reuse_equals_full_newton_to_roundoff(make, h, p):
    # the |dU| <= tol test alone (predicted_stop=False): with the predicted stop full Newton may accept
    # the increment before the one the late reuse replaces (tests/test_newton_stop.py)
    # (reuse="none": the late reuse is full Newton's; "auto" reuses within the element from reuse_min_unknowns on)
    full = fm.simulate(make(), 0.5, h, p=p, options=fm.SimulationOptions(
        newton=NewtonOptions(reuse="none", reuse_near=0.0, predicted_stop=False)))
    late = fm.simulate(make(), 0.5, h, p=p, options=fm.SimulationOptions(
        newton=NewtonOptions(reuse="none", predicted_stop=False)))
    # the last iteration of every element reuses the factorization of the one before
    assert np.sum(late.stats["factorizations"]) < np.sum(full.stats["factorizations"]) - 0.5 * late.stats["h"].size
    np.testing.assert_array_equal(late.stats["iterations"], full.stats["iterations"])
    L = np.abs(full.body_position).max()
    assert np.abs(late.body_position - full.body_position).max() <= 1e-12 * L
    V = np.abs(full.body_velocity).max()
    assert np.abs(late.body_velocity - full.body_velocity).max() <= 1e-12 * V
    # node reactions are derivatives of the impulses over a few nodes (dividing by h): round-off of the
    # states is amplified (measured 2e-14 at p = 1, 1.8e-12 at p = 3)
    F = np.abs(full.joint_force).max()
    assert np.abs(late.joint_force - full.joint_force).max() <= 1e-10 * F


def test_unknown_scales_follow_the_magnitudes_through_the_caches():
    """The Newton scales (memoized while the magnitudes stay, body slots kept while only F changes)
    equal the slot-by-slot definition of flexmb.dynamics.solve.scales for every change of L, V, F, h."""
    from flexmb.dynamics.layout import JOINT_SLOTS
    from flexmb.dynamics.solve.scales import Magnitudes, unknown_scales
    from flexmb.dynamics.simulate import Run

    run = Run.start(chain(3), 0.1, 1e-2, 2, 0.0, fm.SimulationOptions())
    cm, lay = run.cm, run.system.lay
    for L, V, F, h in [(1.0, 2.0, 3.0, 0.01), (1.0, 2.0, 3.0, 0.01), (1.0, 2.0, 5.0, 0.01), (1.0, 4.0, 5.0, 0.01),
                       (1.0, 4.0, 5.0, 0.02), (0.5, 4.0, 5.0, 0.02)]:
        s = unknown_scales(cm, lay, Magnitudes(L, V, F), h)
        assert not s.flags.writeable
        joint = s[lay.joint_off:].reshape(cm.nj, lay.p, JOINT_SLOTS)
        expect = np.repeat([L, 1.0, F * h, F * L * h, F, F * L, V, V / L, V, V / L], 3)
        np.testing.assert_array_equal(joint, np.broadcast_to(expect, joint.shape))
        for grp in cm.groups:
            body = lay.group_view(s, grp.bodies, grp.slots)
            np.testing.assert_array_equal(body, np.broadcast_to(grp.scales(L, V)[:, None, :], body.shape))
