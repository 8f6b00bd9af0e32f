"""The small-system paths of the default "superlu" backend (flexmb.dynamics.solve.dense_solve): the dense LU
and the direct SuperLU call give the solution of the plain SuperLU backend to round-off (bit for bit
for the direct call: the same factorization), and singular matrices raise the library's error."""
import numpy as np
import pytest

from flexmb.dynamics.solve.dense_solve import DENSE_MAX, DenseLU, SmallFirst, small_first
from flexmb.dynamics.solve.linsolve import SingularMatrixError, SuperLU, linear_solver

from test_linsolve import random_unsymmetric, same_pattern_new_values


def LeanSuperLU():
    return small_first(SuperLU())


def test_default_backend_has_the_small_system_paths():
    f = linear_solver("superlu")
    assert isinstance(f, SmallFirst)
    assert not isinstance(linear_solver("superlu-colamd"), SmallFirst)  # the reference stays plain
    A = random_unsymmetric(200, seed=9)
    f(A)
    assert f.n_orderings == 1 and f.last_nnz > 0 and f._q is not None  # the wrapped backend's attributes


@pytest.mark.parametrize("n", [12, DENSE_MAX])
def test_dense_lu_equals_sparse_lu_to_roundoff(n):
    A = random_unsymmetric(n, density=0.2, seed=n)
    b = np.random.default_rng(1).standard_normal(n)
    lean, ref = LeanSuperLU(), SuperLU()
    for seed in range(3):  # same pattern, new values: the scatter positions are reused
        M = A if seed == 0 else same_pattern_new_values(A, seed)
        x, x_ref = lean(M)(b), ref(M)(b)
        cond = np.linalg.cond(M.toarray())
        assert np.linalg.norm(x - x_ref) <= 1e-15 * cond * np.linalg.norm(x_ref)
        assert np.linalg.norm(M @ x - b) <= 1e-12 * np.linalg.norm(b)
    assert lean.n_orderings == 0  # the dense path does not order anything


def test_direct_superlu_call_is_bit_identical():
    A = random_unsymmetric(300, seed=4)
    b = np.random.default_rng(2).standard_normal(300)
    lean, ref = LeanSuperLU(), SuperLU()
    for seed in range(4):
        M = A if seed == 0 else same_pattern_new_values(A, seed)
        assert np.array_equal(lean(M)(b), ref(M)(b))
    assert lean.n_orderings == ref.n_orderings == 1
    assert lean.last_nnz == ref.last_nnz > 0


def test_dense_singular_matrix_raises():
    A = random_unsymmetric(40, density=0.2, seed=3).tolil()
    A[:, 7] = 0.0
    with pytest.raises(SingularMatrixError, match="dense LU"):
        DenseLU()(A.tocsc())
    with pytest.raises(SingularMatrixError):
        LeanSuperLU()(A.tocsc())
