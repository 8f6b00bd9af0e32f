"""Newton's predicted stopping test (``NewtonOptions.predicted_stop``): an increment is also accepted
when the error it leaves, estimated from the measured contraction ``theta`` as
``theta / (1 - theta) |dU|``, is below the tolerance (and ``|dU| <= sqrt(tol)``).

* On a contraction known exactly (a linear problem solved with a deliberately inexact matrix,
  theta = 0.1), the accepted iterate's true error is below the tolerance and one iteration is saved.
* On a nonlinear problem with full Newton the result equals the root to the tolerance.
* On the models of issue 6 C (chain of 60 bars, p = 1, simplified Newton; pendulum p = 2) it saves
  iterations and the positions stay within 1e-10 of a solution converged to round-off.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.dynamics.solve.linsolve import linear_solver
from flexmb.dynamics.solve.newton import NewtonOptions, newton_solve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_exudyn import flexmb_chain, flexmb_pendulum  # noqa: E402


def inexact_linear(theta, n=5):
    """F(U) = U - b with a 'factorization' that solves (1 - theta) x = F: every increment removes the
    fraction 1 - theta of the error, the contraction is exactly theta."""
    b = np.linspace(1.0, 2.0, n)

    def evaluate(U):
        return U - b, sp.identity(n, format="csc")

    def factor(J):
        return lambda F: (1.0 - theta) * np.asarray(F)

    return evaluate, factor, b


@pytest.mark.parametrize("theta", [0.1, 0.01])
def test_predicted_stop_leaves_an_error_below_the_tolerance_on_a_known_contraction(theta):
    evaluate, factor, b = inexact_linear(theta)
    scale = np.ones(b.size)
    U0 = np.zeros(b.size)
    opts = NewtonOptions(reuse="none", reuse_near=0.0, predicted_stop=False)
    plain = newton_solve(evaluate, U0, scale, factor, opts)
    pred = newton_solve(evaluate, U0, scale, factor, NewtonOptions(reuse="none", reuse_near=0.0))
    assert plain.converged and pred.converged
    tol = opts.tol
    true_error = np.max(np.abs(pred.U - b) / (scale + np.abs(b)))
    assert true_error <= tol
    # the saving: one iteration (the estimate is exact here, the |dU| test is late by a factor theta)
    assert pred.iterations == plain.iterations - 1
    # the plain test is never worse than its own tolerance either
    assert np.max(np.abs(plain.U - b) / (scale + np.abs(b))) <= tol


def test_predicted_stop_measures_the_contraction_of_the_unknowns_that_carry_the_increment():
    """Two groups: A (error 1, contraction 1e-8) dominates the first increment, B (error 1e-6,
    contraction 0.1) the second (9e-8).  The ratio of max norms (9e-8) would call the error left 1e-14
    and stop with 1e-8 left in B; the contraction of B's own components (0.1) does not."""
    n = 4
    b = np.linspace(1.0, 2.0, n)
    theta = np.array([1e-8, 1e-8, 0.1, 0.1])

    def evaluate(U):
        return U - b, sp.identity(n, format="csc")

    def factor(J):
        return lambda F: (1.0 - theta) * np.asarray(F)

    U0 = b - np.array([1.0, 1.0, 1e-6, 1e-6]) * (1.0 + np.abs(b))
    r = newton_solve(evaluate, U0, np.ones(n), factor, NewtonOptions(reuse="none", reuse_near=0.0))
    assert r.converged and r.iterations > 2
    assert np.max(np.abs(r.U - b) / (1.0 + np.abs(b))) <= NewtonOptions().tol


def test_predicted_stop_with_full_newton_reaches_the_root_to_the_tolerance():
    rng = np.random.default_rng(0)
    n, c = 40, 0.3
    D = sp.random(n, n, density=0.1, random_state=rng, format="csc") * 0.1
    b = rng.standard_normal(n)

    def evaluate(U):
        return U + c * U ** 3 + D @ U - b, (sp.diags(1.0 + 3 * c * U ** 2) + D).tocsc()

    scale = np.ones(n)
    ref = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"),
                       NewtonOptions(tol=1e-15, reuse_near=0.0, predicted_stop=False))
    pred = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(reuse_near=0.0))
    assert ref.converged and pred.converged
    assert np.max(np.abs(pred.U - ref.U) / (scale + np.abs(ref.U))) <= NewtonOptions().tol


@pytest.mark.parametrize("make, t_end, h, p, saved", [
    # 2880 unknowns: simplified Newton ("auto"); at h = 1e-3 3.95 -> 3.55 with the former rotation predictor,
    # 3.00 -> 3.00 since flexmb.dynamics.march.rotation_predictor (its third increment is below tol); at h = 2e-3 4.0 -> 3.1
    (lambda: flexmb_chain(60), 0.04, 2e-3, 1, 0.5),
    (flexmb_pendulum, 1.0, 1 / 32, 2, 0.05),  # full Newton; 3.00 -> 2.91 (10 s: 3.24 -> 2.99)
])
def test_predicted_stop_saves_iterations_and_keeps_the_accuracy(make, t_end, h, p, saved):
    def run(**kw):
        return fm.simulate(make(), t_end, h, p=p, show_progress=False,
                           options=fm.SimulationOptions(newton=NewtonOptions(**kw)))

    ref = run(tol=1e-14, predicted_stop=False)  # Newton converged to round-off
    off = run(predicted_stop=False)
    on = run()
    assert np.mean(on.stats["iterations"]) <= np.mean(off.stats["iterations"]) - saved
    L = np.ptp(ref.body_position[0], axis=0).max() or np.abs(ref.body_position).max()
    assert np.abs(on.body_position - ref.body_position).max() <= 1e-10 * L
    # node velocities (projection) and node reactions (impulse differences / h) amplify Newton's
    # tolerance, with the |dU| <= tol test too (point-mass pendulum, inertia 1e-9 kg m^2: velocity
    # 7.2e-10 m/s, force 3.5e-8 N off the round-off solution; chain 1.6e-14 m/s, 2.9e-12 N); the
    # predicted stop keeps them at that level (measured 7.6e-10 / 8.4e-8; 2.9e-13 / 4.0e-11)
    for name in ("body_velocity", "joint_force"):
        mag = np.abs(getattr(ref, name)).max()
        e_off = np.abs(getattr(off, name) - getattr(ref, name)).max()
        e_on = np.abs(getattr(on, name) - getattr(ref, name)).max()
        assert e_on <= 1e-10 * mag + 3.0 * e_off, name
