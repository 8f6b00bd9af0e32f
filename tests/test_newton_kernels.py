"""Newton's compiled helpers equal the NumPy expressions they replace (bit for bit, NaN included)."""
import numpy as np
import pytest

from flexmb.dynamics.solve.newton import contraction_rate, scaled_increment


@pytest.mark.parametrize("case", ["plain", "ties", "nan", "empty"])
def test_scaled_increment_equals_numpy(case):
    rng = np.random.default_rng(1)
    n = {"empty": 0}.get(case, 200)
    dU, U, scale = rng.standard_normal(n), rng.standard_normal(n), rng.random(n) + 0.1
    if case == "ties":
        dU[[5, 50]] = 1e3
        U[[5, 50]] = 0.0
        scale[[5, 50]] = 1.0
    if case == "nan":
        dU[[7, 90]] = np.nan
    w, e, worst = scaled_increment(dU, U, scale)
    ref = np.abs(dU) / (scale + np.abs(U + dU))
    assert np.array_equal(w, ref, equal_nan=True)
    if n:
        assert (e == ref.max()) or (np.isnan(e) and np.isnan(ref.max()))
        assert worst == np.argmax(ref)
    else:
        assert e == 0.0 and worst == -1


def test_contraction_equals_numpy():
    rng = np.random.default_rng(2)
    w, w_prev = rng.random(300) * 1e-6, rng.random(300) * 1e-3
    w_prev[:10] = 0.0
    err = w.max()
    big = w >= 1e-2 * err
    ref = np.max(w[big] / np.maximum(w_prev[big], 1e-300))
    assert contraction_rate(w, w_prev, err) == ref
    w_prev[w.argmax()] = np.nan
    assert np.isnan(contraction_rate(w, w_prev, err))
