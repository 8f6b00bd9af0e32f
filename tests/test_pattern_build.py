"""Pattern construction (layout.py): the compiled counting sorts give exactly np.unique's positions."""
import numpy as np
import pytest

from flexmb.dynamics.layout import Pattern, Triplets, _kept_structure, _unique_positions


@pytest.mark.parametrize("n, E", [(1, 5), (7, 60), (50, 3000), (400, 1000)])
def test_unique_positions_equal_numpy_unique(n, E):
    rng = np.random.default_rng(n + E)
    rows = rng.integers(0, n, E)
    cols = rng.integers(0, n, E)
    inv, ru, cu = _unique_positions(rows, cols, n)
    uniq, ref_inv = np.unique(cols * n + rows, return_inverse=True)
    assert np.array_equal(inv, ref_inv.reshape(-1))
    assert np.array_equal(ru, uniq % n) and np.array_equal(cu, uniq // n)
    assert ru.dtype == np.int32


def test_kept_structure_matches_numpy():
    rng = np.random.default_rng(3)
    n, E = 40, 900
    rows, cols = rng.integers(0, n, E), rng.integers(0, n, E)
    inv, ru, cu = _unique_positions(rows, cols, n)
    keep = rng.random(ru.size) < 0.6
    kept, dropped, indices, indptr, dest = _kept_structure(keep, ru, cu, inv, n)
    assert np.array_equal(kept, np.flatnonzero(keep)) and np.array_equal(dropped, np.flatnonzero(~keep))
    assert np.array_equal(indices, ru[kept])
    assert np.array_equal(indptr[1:], np.cumsum(np.bincount(cu[kept], minlength=n)))
    slot = np.empty(ru.size, dtype=np.int64)
    slot[kept] = np.arange(kept.size)
    slot[dropped] = -1 - np.arange(dropped.size)
    assert np.array_equal(dest, slot[inv])


def test_pattern_matrix_equals_scipy_coo_sum():
    """The CSC matrix of collected blocks (with duplicate positions) equals scipy's COO -> CSC sum."""
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    n = 30
    trip = Triplets()
    for _ in range(6):
        r = rng.integers(0, n, (4, 3))
        c = rng.integers(0, n, (4, 2))
        trip.add(r, c, rng.standard_normal((4, 3, 2)))
    trip.add_diag(np.arange(n), np.arange(n), 1.0)
    pat = Pattern(trip, n)
    vals = trip.values()
    J = pat.matrix(vals)
    R = np.concatenate(trip.rows)
    C = np.concatenate(trip.cols)
    ref = sp.coo_matrix((vals, (R, C)), shape=(n, n)).toarray()
    assert np.allclose(J.toarray(), ref, rtol=0, atol=1e-14)
    assert J.has_canonical_format and np.all(np.diff(J.indptr) >= 0)


def test_pattern_rejects_entry_outside_unknowns():
    trip = Triplets()
    trip.add(np.array([0, 5]), np.array([1]), np.ones((2, 1)))
    with pytest.raises(AssertionError):
        Pattern(trip, 5)


def test_unique_values_bit_identical_to_bincount():
    rng = np.random.default_rng(7)
    n = 25
    trip = Triplets()
    for _ in range(8):
        trip.add(rng.integers(0, n, (3, 4)), rng.integers(0, n, (3, 3)), rng.standard_normal((3, 4, 3)))
    pat = Pattern(trip, n)
    assert pat._take_u is None  # duplicates present
    vals = trip.values()
    assert np.array_equal(pat.unique_values(vals), np.bincount(pat.map, weights=vals, minlength=pat.n_unique))
