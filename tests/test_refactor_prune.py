"""Symmetric pruning in the symbolic LU (refactor_lu._symbolic): the same structure of L and U as the
unpruned depth-first searches, column by column, with U's rows in an order the numeric phase can use
(the factorization along it has backward error at round-off)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.dynamics.solve.refactor_lu import Structure, _symbolic


def _cases():
    rng = np.random.default_rng(11)
    out = []
    for n, dens in [(60, 0.05), (300, 0.01), (500, 0.004)]:
        A = sp.random(n, n, density=dens, random_state=rng, format="csc") + sp.eye(n, format="csc") * 0.1
        A = sp.csc_matrix(A)
        A.sort_indices()
        out.append(A)
    # a block tridiagonal matrix with dense blocks (like a chain's Newton matrix at p = 3)
    nb, b = 30, 8
    blocks = [[sp.csr_matrix(rng.standard_normal((b, b))) if abs(i - j) <= 1 else None for j in range(nb)]
              for i in range(nb)]
    A = sp.csc_matrix(sp.bmat(blocks))
    A.sort_indices()
    out.append(A)
    return out


@pytest.mark.parametrize("A", _cases())
def test_pruned_symbolic_has_the_same_structure(A):
    n = A.shape[0]
    lu = spla.splu(A, permc_spec="COLAMD", diag_pivot_thresh=1.0, options={"SymmetricMode": False})
    s = Structure(A.indptr, A.indices, np.argsort(lu.perm_c), lu.perm_r)
    Lp0, Li0, Up0, Ui0, ok0 = _symbolic(n, s.Bp, s.Brow, False)
    Lp1, Li1, Up1, Ui1, ok1 = _symbolic(n, s.Bp, s.Brow, True)
    assert ok0 and ok1
    assert np.array_equal(Lp0, Lp1) and np.array_equal(Up0, Up1)
    for j in range(n):
        assert set(Li0[Lp0[j]:Lp0[j + 1]]) == set(Li1[Lp1[j]:Lp1[j + 1]])
        assert set(Ui0[Up0[j]:Up0[j + 1]]) == set(Ui1[Up1[j]:Up1[j + 1]])
    f = s.factor(A.data, 1e-3)  # Structure uses the pruned search
    assert f is not None
    b = np.random.default_rng(0).standard_normal(n)
    x = f(b)
    assert np.abs(A @ x - b).max() <= 1e-13 * (abs(A).max() * np.abs(x).max() + np.abs(b).max())
    assert np.allclose(x, lu.solve(b), rtol=1e-8, atol=1e-10 * np.abs(x).max())
