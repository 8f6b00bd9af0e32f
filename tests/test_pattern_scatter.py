"""Pattern.matrix (flexmb/dynamics/layout.py): the compiled scatter-add of the collected Jacobian
values into the CSC data equals ``np.bincount`` (duplicates summed in entry order) bit for bit,
shares the index arrays between matrices, and takes back a dropped position that turns nonzero
(also NaN)."""
import numpy as np

from flexmb.dynamics.layout import Pattern
from test_lean_eval import MODELS, _system


def _pattern_with_duplicates():
    system, U, st = _system(MODELS["spherical"], 2)
    h = 0.02
    system.evaluate(U, st, h)
    pat = system.pattern
    _, trip = system.triplets(U, st, h)
    return pat, trip.values().copy()


def test_matrix_data_equal_bincount_bit_for_bit():
    pat, vals = _pattern_with_duplicates()
    assert pat.n_unique < pat.n_entries  # several blocks add to one entry: the summing path
    rng = np.random.default_rng(5)
    vals = vals * (1.0 + rng.standard_normal(vals.size))  # generic values (round-off visible)
    vals[pat.keep[pat.map] == 0] = 0.0  # dropped positions stay zero
    J = pat.matrix(vals)
    ref = np.bincount(pat.map, weights=vals, minlength=pat.n_unique)[pat._kept]
    assert np.array_equal(J.data, ref)
    J2 = pat.matrix(2.0 * vals)
    assert J2.indices is J.indices and J2.indptr is J.indptr  # shared structure, no copies
    assert J2 is not J and np.array_equal(J2.data, 2.0 * ref) and np.array_equal(J.data, ref)


def test_nan_in_a_dropped_position_is_taken_back():
    pat, vals = _pattern_with_duplicates()
    assert pat._dropped.size
    dropped = pat._dropped[-1]
    vals[np.flatnonzero(pat.map == dropped)] = 0.0
    vals[np.flatnonzero(pat.map == dropped)[0]] = np.nan
    nnz0 = pat.nnz
    J = pat.matrix(vals)
    assert pat.nnz == nnz0 + 1 and pat.keep[dropped]
    assert np.isnan(J[pat._rows_u[dropped], pat._cols_u[dropped]])


def test_dropped_duplicates_that_cancel_stay_dropped():
    """A dropped position is checked on the sum of its entries (as assembled), not entry by entry."""
    pat, vals = _pattern_with_duplicates()
    counts = np.bincount(pat.map, minlength=pat.n_unique)
    shared = [u for u in pat._dropped if counts[u] >= 2]
    assert shared  # (30 such positions in this model)
    u = shared[0]
    e = np.flatnonzero(pat.map == u)
    vals[e] = 0.0
    vals[e[0]], vals[e[1]] = 0.75, -0.75
    nnz0 = pat.nnz
    pat.matrix(vals)
    assert pat.nnz == nnz0
