"""The warm predictor across a change of the element's length (flexmb.dynamics.march.kernels.length_ratio).

The last element of a run is shortened to land on ``t_end``, a halved step has halves, a step-controlled
run changes the length at every step.  The predictor extrapolates the previous element's polynomials to
the new element's points whatever the ratio of the lengths (up to WARM_RATIO_MAX): the extrapolation
matrices reproduce polynomials of the element's degree exactly at any ratio, and on a run whose last
element is shortened its guess is much closer to the converged element than the constant-velocity guess
that such an element used to start from (X3, p = 2, h = 2e-3, "full": that guess diverged twice and the
last element was halved).
"""
from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.march import marching
from flexmb.dynamics.march.kernels import WARM_RATIO_MAX, extrapolation_matrices, length_ratio
from flexmb.dynamics.march.rotation_predictor import _rotation_matrices  # the matrices under test
from flexmb.dynamics.time_elements import time_element
from step_stages import STAGES, simulate_with

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_exudyn import flexmb_chain  # noqa: E402


def _poly(coef, s):
    return sum(a * np.asarray(s, float) ** k for k, a in enumerate(coef))


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("ratio", [0.2, 0.61, 1.0, 1.7, WARM_RATIO_MAX])
def test_extrapolation_is_exact_for_polynomials_at_any_ratio(p, ratio):
    """Previous element on s in [0, 1] (its length the unit), new one on [1, 1 + ratio]: ``Pe`` is exact
    for degree p through the start value and the internal values, ``Pi`` for degree p - 1 through the
    internal values; the rotation predictor's ``P`` (units of the new element, previous internal points at
    ``(c - 1) / ratio``) for degree p through s = 0."""
    te = time_element(p)
    rng = np.random.default_rng(p)
    c = te.c
    Pe, Pi = extrapolation_matrices(te, ratio)
    a = rng.standard_normal(p + 1)
    nodes = np.concatenate([[0.0], c])
    assert np.allclose(Pe @ _poly(a, nodes), _poly(a, 1.0 + ratio * c), rtol=0, atol=1e-12 * (1 + ratio) ** p)
    b = rng.standard_normal(p)
    assert np.allclose(Pi @ _poly(b, c), _poly(b, 1.0 + ratio * c), rtol=0, atol=1e-12 * (1 + ratio) ** p)
    P, _ = _rotation_matrices(te, ratio)
    s_prev = np.concatenate([[0.0], (c - 1.0) / ratio])
    assert np.allclose(P @ _poly(a, s_prev), _poly(a, c), rtol=0, atol=1e-11 / ratio ** p)


def test_length_ratio():
    assert length_ratio(0.01, 0.01 * (1 + 1e-13)) == 1.0  # the same length: the former matrices, bit for bit
    assert length_ratio(0.01, 0.006) == pytest.approx(0.6)
    assert length_ratio(0.01, 0.025) == pytest.approx(2.5)
    assert length_ratio(0.01, 0.0251) is None  # beyond WARM_RATIO_MAX: the constant-velocity guess
    te = time_element(2)  # ratio 1: the points 1 + c of the same length, bit for bit
    for new, former in zip(extrapolation_matrices(te, 1.0), extrapolation_matrices(te)):
        assert np.array_equal(new, former)


@lru_cache(maxsize=None)
def _shortened_run(p: int, h: float, n_full: int, last: float):
    """The 15-link chain over ``n_full`` elements of ``h`` and a last one of ``last x h``: per element the
    predictor's guess, the constant-velocity guess and the converged unknowns (body positions and rotation
    increments, m and rad), and the run's stats."""
    rows = []

    def predict(cm, lay, te, st, hh, w, prev):
        U0 = STAGES.predict(cm, lay, te, st, hh, w, prev)
        rows.append(dict(h=hh, warm=U0.copy(), cold=marching.predict(cm, lay, te, st, hh, w, None), lay=lay, cm=cm))
        return U0

    def newton(*a, **k):
        r = STAGES.newton(*a, **k)
        rows[-1]["U"] = r.U.copy()
        return r

    sol = simulate_with(flexmb_chain(15), (n_full + last) * h, h, p, predict=predict, newton=newton)
    return rows, sol


def _pose_error(row, which):
    grp = row["cm"].groups[0]
    sl = np.r_[grp.BX:grp.BX + 3, grp.BTH:grp.BTH + 3]

    def pose(U):
        return row["lay"].group_view(U, grp.bodies, grp.slots)[..., sl]

    return float(np.abs(pose(row[which]) - pose(row["U"])).max())


@pytest.mark.parametrize("p", [1, 2, 3])
def test_shortened_last_element_starts_from_the_extrapolation(p):
    """Measured (body poses before the rotation predictor, m and rad; regular elements' median / the
    shortened last element / its constant-velocity guess): p = 2 5e-6 / 7.7e-6 / 1.0e-4, p = 3 1e-6 /
    6.6e-7 / 1.3e-4; p = 1 5e-4 / 2.3e-4 / 8.4e-5: the degree-1 extrapolation is no better than the
    constant-velocity guess from the new node's velocities on the regular elements either (5e-4 against
    2.6e-4), and Newton takes 3 iterations from both."""
    h = 5e-3
    rows, sol = _shortened_run(p, h, 8, 0.6)
    assert rows[-1]["h"] == pytest.approx(0.6 * h)
    assert not any(sol.stats["retries"])
    last = rows[-1]
    warm, cold = _pose_error(last, "warm"), _pose_error(last, "cold")
    regular = np.median([_pose_error(r, "warm") for r in rows[2:-1]])
    # the shortened element's guess is as good as the regular ones' (it extrapolates less far) ...
    assert warm <= 2.0 * regular, (warm, regular)
    if p >= 2:  # ... and for p >= 2 far better than the constant-velocity guess it used to start from
        assert warm <= 0.1 * cold, (warm, cold)
    assert sol.stats["iterations"][-1] <= max(sol.stats["iterations"][2:-1])
