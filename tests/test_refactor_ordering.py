"""The refactorization's column ordering (linsolve.Refactor._ordered): COLAMD, and the minimum degree
ordering of A^T A as well when COLAMD's refactorization costs more than 20 multiply-adds per nonzero
of A; the cheaper structure is kept.

Measured (benchmarks/README.md, "Large models after BIGN"): 15-link chain p = 3 (2,160 unknowns)
COLAMD 2.34 M multiply-adds, 95,414 entries of L + U, MMD(A^T A) 0.56 M, 59,264; p = 2 0.68 M ->
0.14 M; 200-link chain p = 3 60.8 M -> 8.0 M; p = 1 chains keep COLAMD (6 multiply-adds per nonzero).
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import flexmb as fm
from flexmb.dynamics.solve.linsolve import Refactor
from flexmb.dynamics.solve.refactor_lu import Structure

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_exudyn import flexmb_chain  # noqa: E402


def newton_matrix(n_links, p, h):
    mats = []

    def capture(A):
        mats.append(A.copy())
        lu = spla.splu(A.tocsc())
        return lu.solve

    fm.simulate(flexmb_chain(n_links), 3 * h, h, p=p, show_progress=False,
                options=fm.SimulationOptions(linear_solver=capture))
    A = mats[-1].tocsc()
    A.sort_indices()
    return A


def colamd_flops(A):
    lu = spla.splu(A, permc_spec="COLAMD", diag_pivot_thresh=1.0, options={"SymmetricMode": False})
    return Structure(A.indptr, A.indices, np.argsort(lu.perm_c), lu.perm_r).flops


@pytest.mark.parametrize("n_links, p, ordering", [(15, 3, "MMD_ATA"), (15, 2, "MMD_ATA"), (40, 1, "COLAMD")])
def test_ordering_kept_is_the_cheaper_and_solves_accurately(n_links, p, ordering):
    A = newton_matrix(n_links, p, 5e-3)
    f = Refactor()
    solve = f(A)
    assert f.ordering == ordering and f.n_orderings == 1
    ref = colamd_flops(A)
    assert f._s.flops <= ref
    if ordering == "MMD_ATA":
        assert f._s.flops < 0.5 * ref  # measured 0.24 (p = 3), 0.21 (p = 2)
    else:
        assert ref <= 20 * A.nnz
    rng = np.random.default_rng(0)
    b = rng.standard_normal(A.shape[0])
    x = solve(b)
    backward = np.abs(A @ x - b).max() / (abs(A).max() * np.abs(x).max() + np.abs(b).max())
    assert backward <= 1e-15
    # a second matrix of the pattern: refactored along the kept structure
    A2 = A.copy()
    A2.data = A.data * (1.0 + 1e-3 * rng.standard_normal(A.nnz))
    x2 = f(A2)(b)
    assert np.abs(A2 @ x2 - b).max() / (abs(A2).max() * np.abs(x2).max() + np.abs(b).max()) <= 1e-15
    assert f.ordering == ordering and f.n_orderings == 1
