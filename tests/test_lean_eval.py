"""The lean evaluation (issue 6 C): residual-only evaluations equal the full ones bit for bit, the
values-only Jacobian (written straight into the CSC data by the fixed pattern) equals the first
one, and Newton with residual-only reuse iterations gives the same solution as without them."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.solve.newton import NewtonOptions
from flexmb.dynamics.march.marching import predict as _predict
from flexmb.dynamics.simulate import ElementSystem, SimulationOptions
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import time_element
from test_jacobian import JOINTS, _bodies


def _models():
    a, b = _bodies()
    out = {}
    for kind in ("spherical", "revolute_damped_spring", "revolute_driven", "universal", "prismatic"):
        out[kind] = fm.Model([a, b], [fm.Spherical("pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                             [fm.Gravity((0, 0, -9.81))])
    out["forces"] = fm.Model([a, b], [], [
        fm.Gravity((0.5, -9.81, 0.2)),
        fm.PointForce("B", (0.3, 0.2, -1.0), point=(0.0, 0.1, 0.2), frame="body"),
        fm.PointForce("A", lambda t, s: -3.0 * s.position - 0.5 * s.velocity, point=(0.05, 0.0, 0.0)),
        fm.SpringDamper("s1", "A", "B", point_a=(0.1, 0.0, 0.0), point_b=(-0.1, 0.05, 0.0), stiffness=50.0,
                        damping=2.0, free_length=0.3)])
    return out


MODELS = _models()


def _system(model, p, h=0.02, seed=1):
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    te = time_element(p)
    system = ElementSystem(cm, te)
    rng = np.random.default_rng(seed)
    U = _predict(cm, system.lay, te, st, h, w0, None) + 0.05 * rng.standard_normal(system.lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    return system, U, st


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_residual_only_is_bit_identical(name, p):
    """The residual-only path computes exactly the residual of the full evaluation (before and after
    the pattern exists, and interleaved with full evaluations in any order)."""
    system, U, st = _system(MODELS[name], p)
    h = 0.02
    r_first = system.residual(U, st, h)  # the first call builds the pattern anyway
    F1, J1 = system.evaluate(U, st, h)
    for _ in range(2):
        r = system.residual(U, st, h)
        F, J = system.evaluate(U, st, h)
        assert np.array_equal(r, F1) and np.array_equal(F, F1) and np.array_equal(r_first, F1)
        # values-only Jacobian == the Jacobian of the pattern-building evaluation, same storage
        assert np.array_equal(J.indptr, J1.indptr) and np.array_equal(J.indices, J1.indices)
        assert np.array_equal(J.data, J1.data)
    assert system.evaluate(U, st, h, jacobian=False)[1] is None
    # another state: residual-only and full still agree
    U2 = U * (1 + 1e-3)
    assert np.array_equal(system.residual(U2, st, h), system.evaluate(U2, st, h)[0])


def test_pattern_matrix_is_canonical_csc():
    """The CSC matrix is assembled without a COO conversion: sorted indices, no duplicates, and equal
    to the sum of the collected triplets."""
    system, U, st = _system(MODELS["spherical"], 2)
    res, trip = system.triplets(U, st, 0.02)
    pat = system.pattern
    assert pat is None
    import scipy.sparse as sp
    from flexmb.dynamics.layout import Pattern
    rows, cols, vals = np.concatenate(trip.rows), np.concatenate(trip.cols), trip.values()
    pat = Pattern(trip, system.lay.size)
    J = pat.matrix(vals)
    ref = sp.coo_matrix((vals, (rows, cols)), shape=J.shape).tocsc()
    ref.sum_duplicates()
    assert J.has_canonical_format
    # duplicates summed in another order: round-off only
    assert abs(J - ref).max() <= 1e-15 * abs(ref).max()
    assert J.nnz == ref.nnz


@pytest.mark.parametrize("reuse", ["element", "steps"])
def test_newton_with_residual_only_reuse_matches(reuse):
    """Simplified Newton with residual-only iterations follows the same iterates as with full
    evaluations (the residual is the same bit for bit, so every decision is the same).  The reference run
    replaces the Newton stage (:class:`flexmb.dynamics.step.advance.Stages`) by the general Newton without
    residual-only evaluations; the element system counts them."""
    from flexmb.dynamics.simulate import Run
    from flexmb.dynamics.solve.newton import newton_solve
    from flexmb.dynamics.step.advance import Stages

    model = MODELS["revolute_damped_spring"]
    opts = SimulationOptions(newton=NewtonOptions(reuse=reuse))
    run = Run.start(model, 0.1, 0.01, 2, 0.0, opts)
    sol = run.go(show_progress=False)
    calls = []

    def without_residual(system, st, h, U0, scale, factor, options):
        calls.append(st.t)
        return newton_solve(lambda U: system.evaluate(U, st, h), U0, scale, factor, options)

    plain = Run.start(model, 0.1, 0.01, 2, 0.0, opts, Stages(newton=without_residual))
    ref = plain.go(show_progress=False)
    assert run.system.n_residual_only > 0 and plain.system.n_residual_only == 0
    assert len(calls) == len(ref.stats["iterations"])  # every element went through the replaced stage
    assert np.array_equal(sol.body_position, ref.body_position)
    assert np.array_equal(sol.joint("j").force, ref.joint("j").force)


def test_structural_zeros_are_dropped_and_taken_back():
    """The pattern drops the positions found zero at random states (the matrix is unchanged), and a
    dropped position that becomes nonzero is taken back instead of being lost."""
    from flexmb.dynamics.layout import Pattern
    system, U, st = _system(MODELS["spherical"], 2)
    h = 0.02
    _, J = system.evaluate(U, st, h)
    pat = system.pattern
    assert pat.nnz < pat.n_unique  # structural zeros dropped
    res, trip = system.triplets(U, st, h)
    full = Pattern.__new__(Pattern)
    full.__dict__.update(pat.__dict__)
    full._build(np.ones(pat.n_unique, dtype=bool))
    # (the same values on both patterns: a later evaluation of a rigid-only model is the compiled one,
    # dynamics/rigid/element.py, whose Jacobian values equal the first evaluation's to round-off)
    assert np.array_equal(pat.matrix(trip.values()).toarray(), full.matrix(trip.values()).toarray())
    assert np.abs(J.toarray() - full.matrix(trip.values()).toarray()).max() <= 1e-15 * np.abs(J.toarray()).max()
    # a dropped position that is not zero at a later evaluation is taken back
    vals = trip.values().copy()
    dropped = pat._dropped[0]
    entry = np.flatnonzero(pat.map == dropped)[0]
    vals[entry] = 1.5
    nnz0 = pat.nnz
    J2 = pat.matrix(vals)
    assert pat.nnz == nnz0 + 1
    row, col = pat._rows_u[dropped], pat._cols_u[dropped]
    assert J2[row, col] == 1.5
    assert np.array_equal(J2.toarray(), full.matrix(vals).toarray())


def test_models_with_user_functions_keep_the_full_pattern():
    """No made-up states for user functions: drives and force callbacks keep every position."""
    system, U, st = _system(MODELS["revolute_driven"], 1)
    system.evaluate(U, st, 0.02)
    assert system.pattern.nnz == system.pattern.n_unique
