"""Sparse LU backends (flexmb.dynamics.solve.linsolve) and the Newton options (flexmb.dynamics.solve.newton)."""
import numpy as np
import pytest
import scipy.sparse as sp

from flexmb.dynamics.solve.linsolve import (LINEAR_SOLVERS, SingularMatrixError, SuperLU, available_backends, linear_solver,
                             superlu)
from flexmb.dynamics.solve.newton import NewtonOptions, newton_solve


def random_unsymmetric(n=400, density=0.01, seed=0):
    """Random sparse unsymmetric matrix: a strong permuted 'diagonal' (rows need pivoting), random
    couplings, and a structurally zero main diagonal in a third of the rows, like constraint rows."""
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=density, random_state=rng, format="coo")
    perm = rng.permutation(n)
    strong = rng.standard_normal(n)
    rows = np.concatenate([R.row, np.arange(n)])
    cols = np.concatenate([R.col, perm])
    vals = np.concatenate([R.data - 0.5, 10.0 * np.sign(strong) + strong])
    weak = np.arange(rows.size) < R.nnz
    keep = ~((rows == cols) & (rows % 3 == 0) & weak)
    M = sp.csc_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n, n))
    M.sum_duplicates()
    return M


def same_pattern_new_values(A, seed):
    B = A.copy()
    B.data = np.random.default_rng(seed).standard_normal(B.data.size) + 10.0 * np.sign(A.data)
    return B


BACKENDS = sorted(available_backends())


@pytest.mark.parametrize("name", BACKENDS)
def test_backend_solves_random_unsymmetric_system(name):
    factor = linear_solver(name)
    A = random_unsymmetric()
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    for k, M in enumerate([A, same_pattern_new_values(A, 2), same_pattern_new_values(A, 3),
                           random_unsymmetric(300, seed=5)]):
        # first call: ordering; second and third: same pattern (cached ordering/symbolic analysis);
        # fourth: a different pattern (ordering recomputed)
        bb = b[: M.shape[0]]
        x = factor(M)(bb)
        assert np.linalg.norm(M @ x - bb) <= 1e-10 * np.linalg.norm(bb), f"call {k}"


def test_superlu_reuses_the_ordering_of_a_pattern():
    factor = SuperLU()
    A = random_unsymmetric()
    for seed in range(3):
        factor(same_pattern_new_values(A, seed))
    assert factor.n_orderings == 1
    factor(random_unsymmetric(300, seed=7))
    assert factor.n_orderings == 2
    assert factor.last_nnz > 0


def test_legacy_superlu_function_records_nnz():
    A = random_unsymmetric(200)
    superlu.last_nnz = 0
    assert superlu.last_nnz == 0
    superlu(A)
    assert superlu.last_nnz >= A.shape[0]


@pytest.mark.parametrize("name", BACKENDS)
def test_singular_matrix_raises(name):
    factor = linear_solver(name)
    A = random_unsymmetric(200)
    factor(A)
    B = A.copy().tolil()
    B[:, 17] = 0.0  # an empty column: structurally singular
    with pytest.raises(SingularMatrixError):
        factor(B.tocsc())
    # numerically singular with the cached pattern: a column of explicit zeros
    C = A.copy()
    C.data[C.indptr[17]:C.indptr[18]] = 0.0
    with pytest.raises(SingularMatrixError):
        factor(C)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="superlu"):
        linear_solver("nope")
    assert set(LINEAR_SOLVERS) >= {"superlu", "superlu-colamd", "umfpack"}


# ----------------------------------------------------------------------------------------------
# Newton

def nonlinear_problem(n=50, c=0.3):
    """F_i(U) = U_i + c U_i^3 + 0.2 (U_{i+1} - U_{i-1}) - b_i: sparse, unsymmetric, smooth."""
    b = np.linspace(0.5, 2.0, n)
    D = sp.diags([-0.2 * np.ones(n - 1), 0.2 * np.ones(n - 1)], [-1, 1], format="csc")
    calls = []

    def evaluate(U):
        calls.append(1)
        F = U + c * U ** 3 + D @ U - b
        J = (sp.diags(1.0 + 3 * c * U ** 2) + D).tocsc()
        return F, J

    return evaluate, b, calls


@pytest.mark.parametrize("reuse", ["none", "element", "steps"])
def test_newton_converges_on_a_small_nonlinear_system(reuse):
    evaluate, b, calls = nonlinear_problem()
    scale = np.ones(b.size)
    r = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(reuse=reuse))
    assert r.converged and r.message.startswith("converged")
    F, _ = evaluate(r.U)
    assert np.abs(F).max() < 1e-9
    # the error left (the last increment, or with the predicted stop theta/(1-theta) x it) is below tol:
    # checked against the root refined by two more Newton steps
    root = r.U.copy()
    for _ in range(2):
        Fr, Jr = evaluate(root)
        root = root - sp.linalg.spsolve(Jr, Fr)
    assert np.max(np.abs(r.U - root) / (scale + np.abs(root))) <= 1e-10
    if reuse == "none":
        # quadratic convergence from this start: 5 iterations (the fifth increment, 7e-10, leaves ~1e-14:
        # the predicted stop), one factorization each
        assert r.iterations == 5
        assert r.n_factor == r.iterations
        h = r.history
        assert h[3] < h[2] ** 1.5  # quadratic phase
    else:
        # simplified Newton: more iterations, far fewer factorizations (8 and 2 from this start; 9 without
        # the predicted stop: the eighth increment 3.5e-9 contracts by 1.1e-2, leaving ~4e-11)
        assert r.iterations == 8 and r.n_factor == 2


def test_reuse_gives_the_same_answer_to_tolerance():
    evaluate, b, _ = nonlinear_problem()
    scale = np.ones(b.size)
    ref = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(reuse="none", tol=1e-12))
    for reuse in ("element", "steps"):
        r = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(reuse=reuse, tol=1e-10))
        assert r.converged
        assert np.abs(r.U - ref.U).max() <= 1e-10 * (1 + np.abs(ref.U).max())


def test_reused_matrix_is_refreshed_when_contraction_is_slow():
    """A strongly nonlinear start: the first matrix alone contracts slower than reuse_rate, so the
    solver must take fresh Jacobians along the way and still converge to the same root."""
    evaluate, b, _ = nonlinear_problem(c=3.0)
    U0 = 3.0 * np.ones(b.size)
    scale = np.ones(b.size)
    full = newton_solve(evaluate, U0, scale, linear_solver("superlu"), NewtonOptions(reuse="none"))
    r = newton_solve(evaluate, U0, scale, linear_solver("superlu"), NewtonOptions(reuse="element"))
    assert full.converged and r.converged
    assert 1 < r.n_factor < r.iterations
    assert np.abs(r.U - full.U).max() < 1e-9


def test_steps_carries_the_factorization_to_the_next_solve_and_drops_it_on_failure():
    evaluate, b, _ = nonlinear_problem()
    scale = np.ones(b.size)
    factor = linear_solver("superlu")
    opts = NewtonOptions(reuse="steps")
    first = newton_solve(evaluate, b.copy(), scale, factor, opts)
    second = newton_solve(evaluate, first.U * (1 + 1e-6), scale, factor, opts)  # a nearby start
    assert second.converged and second.n_factor == 0
    r = newton_solve(diverging, np.full(b.size, 1e-3), np.full(b.size, 1e6), factor, opts)
    assert not r.converged and r.message == "diverging"
    third = newton_solve(evaluate, b.copy(), scale, factor, opts)
    assert third.converged and third.n_factor >= 1


def diverging(U):
    """F = sign(U) |U|^(1/4): each Newton step maps U to -3 U (increments grow by 3)."""
    return np.sign(U) * np.abs(U) ** 0.25, sp.diags(0.25 * np.abs(U) ** -0.75).tocsc()


@pytest.mark.parametrize("reuse", ["none", "element", "steps"])
def test_divergence_is_reported(reuse):
    r = newton_solve(diverging, np.full(5, 1e-3), np.full(5, 1e6), linear_solver("superlu"), NewtonOptions(reuse=reuse))
    assert not r.converged and r.message == "diverging"
    assert r.iterations == 3 and r.n_factor == 3  # a reused matrix that diverges is refreshed at once


def test_singular_jacobian_is_reported():
    ev = lambda U: (U - 1.0, sp.csc_matrix((U.size, U.size)))
    r = newton_solve(ev, np.zeros(4), np.ones(4), linear_solver("superlu"), NewtonOptions())
    assert not r.converged and "singular" in r.message


def test_newton_options_validate():
    with pytest.raises(ValueError, match="reuse"):
        NewtonOptions(reuse="always")
    with pytest.raises(ValueError, match="reuse_rate"):
        NewtonOptions(reuse_rate=1.5)


def test_auto_reuse_switches_on_system_size():
    evaluate, b, _ = nonlinear_problem()
    scale = np.ones(b.size)
    small = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions())  # 50 < 2000
    assert NewtonOptions().reuse == "auto"
    assert small.converged and small.n_factor == small.iterations == 5  # as in the test above
    large = newton_solve(evaluate, b.copy(), scale, linear_solver("superlu"), NewtonOptions(reuse_min_unknowns=50))
    assert large.converged and (large.iterations, large.n_factor) == (8, 2)


def test_steps_carries_over_through_a_bound_method():
    """A bound method is a new object at every attribute access (``run.factor``, as simulate passes
    it): the carried factorization is keyed by its instance and function, not by the object."""
    evaluate, b, _ = nonlinear_problem()
    scale = np.ones(b.size)

    class Owner:
        def __init__(self):
            self.solver = linear_solver("superlu")

        def factor(self, A):
            return self.solver(A)

    owner, opts = Owner(), NewtonOptions(reuse="steps")
    assert owner.factor is not owner.factor
    first = newton_solve(evaluate, b.copy(), scale, owner.factor, opts)
    second = newton_solve(evaluate, first.U * (1 + 1e-6), scale, owner.factor, opts)
    assert first.converged and first.n_factor >= 1
    assert second.converged and second.n_factor == 0
    other = newton_solve(evaluate, first.U * (1 + 1e-6), scale, Owner().factor, opts)  # another owner
    assert other.converged and other.n_factor >= 1


def test_steps_carries_over_between_elements_in_simulate():
    """reuse="steps" in simulate: most elements need no factorization (a 5-link chain, 40 smooth
    elements), and the motion agrees with full Newton to the Newton tolerance."""
    import flexmb as fm

    def chain(n=5, L=0.3, m=0.3):
        bodies = [fm.RigidBody(f"b{k}", mass=m, inertia=(1e-6 * m * L * L, m * L * L / 12, m * L * L / 12),
                               position=((k + 0.5) * L, 0.0, 0.0)) for k in range(n)]
        joints = [fm.Spherical(f"j{k}", "ground" if k == 0 else f"b{k - 1}", f"b{k}", point=(k * L, 0.0, 0.0))
                  for k in range(n)]
        return fm.Model(bodies, joints, [fm.Gravity((0.0, 0.0, -9.81))])

    runs = {}
    for reuse in ("none", "steps"):
        opts = fm.SimulationOptions(newton=NewtonOptions(reuse=reuse))
        runs[reuse] = fm.simulate(chain(), 0.04, 1e-3, p=1, options=opts, show_progress=False)
    facts = np.asarray(runs["steps"].stats["factorizations"])
    assert facts.size == 40 and facts.sum() < 0.5 * facts.size  # carried over (was 1 per element)
    full = np.asarray(runs["none"].stats["factorizations"])
    assert full.sum() >= 2 * facts.size
    dx = np.abs(np.asarray(runs["steps"].body_position) - np.asarray(runs["none"].body_position)).max()
    assert dx < 1e-8 * 1.5  # Newton tolerance x chain length [m]


def test_refactor_tries_the_pivots_met_before():
    """A matrix that fails the kept pivots' threshold test takes the pivots of an earlier matrix that pass
    it (a motion back to a configuration met before) instead of SuperLU's fresh pivoting; the solves stay
    exact; a checkpoint's ``_q`` carries those pivots, and a backend resumed from it holds the same ones."""
    from flexmb.dynamics.solve.linsolve import Refactor

    A1 = sp.csc_matrix(np.array([[1.0, 1.0, 0.0], [1e-9, 3.0, 1.0], [0.0, 1.0, 2.0]]))
    A2 = sp.csc_matrix(np.array([[1e-9, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]))  # the same pattern
    b = np.array([1.0, 2.0, 3.0])
    r = Refactor()
    for A, changes, reuses in ((A1, 0, 0), (A2, 1, 0), (A1, 1, 1), (A2, 1, 2)):
        x = r(A)(b)
        assert np.allclose(A @ x, b, rtol=0, atol=1e-12)
        assert (r.n_pivot_changes, r.n_pivot_reuses) == (changes, reuses)
    assert len(r.alternatives()) == 1
    q = r._q
    assert q.size == 4 * 3  # the pivots in use, then the alternative's
    resumed = Refactor()
    resumed.adopt_ordering(q)
    resumed.analyse(A2)
    assert np.array_equal(resumed._q, q)
    resumed(A1)(b)
    assert (resumed.n_pivot_changes, resumed.n_pivot_reuses) == (0, 1)


def test_refactor_keeps_alternatives_within_their_entry_budget(monkeypatch):
    """The kept alternatives hold at most RECENT_ENTRIES entries of L and U together (a large model's
    structures take tens of MB each): beyond it the oldest are let go, and a repeat of the same pivots is
    kept once."""
    import flexmb.dynamics.solve.linsolve as L

    A1 = sp.csc_matrix(np.array([[1.0, 1.0, 0.0], [1e-9, 3.0, 1.0], [0.0, 1.0, 2.0]]))
    A2 = sp.csc_matrix(np.array([[1e-9, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]))
    b = np.array([1.0, 2.0, 3.0])
    r = L.Refactor()
    r(A1)(b)
    monkeypatch.setattr(L, "RECENT_ENTRIES", r._s.nnz - 1)  # not even one alternative fits
    r(A2)(b)
    assert r.alternatives() == [] and r.n_pivot_changes == 1
    monkeypatch.setattr(L, "RECENT_ENTRIES", 10 ** 9)
    r(A1)(b)  # fresh pivots again (none kept), then A2's kept as the alternative
    assert r.n_pivot_changes == 2 and len(r.alternatives()) == 1
    r(A2)(b)
    r(A1)(b)
    assert r.n_pivot_changes == 2 and r.n_pivot_reuses == 2 and len(r._recent) == 2
