"""X5 through the dynamics, in short: the frequency fit, and one spin of the rotating strip whose
free vibration must give the linearized frequency of the same data and Wright's value."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flexmb.validation.cases import case_x5 as x5


def test_fitted_frequency_resolves_the_first_mode_of_a_two_mode_signal():
    """A first mode with 5 % of a mode 5.5 times faster, sampled 40 times per period over 6 periods:
    the fit returns the first frequency to round-off; the zero-crossing period is biased."""
    w1, w2 = 0.3, 1.65
    t = np.linspace(0.0, 6 * 2 * math.pi / w1, 241)
    w = np.cos(w1 * t + 0.1) + 0.05 * np.cos(w2 * t + 1.0)
    assert x5.fitted_frequency(t, w) == pytest.approx(w1, rel=1e-9)
    assert abs(x5.zero_crossing_frequency(t, w) / w1 - 1) > 1e-5


@pytest.fixture(scope="module")
def strip():
    return x5.flapwise_data()


def _linearized_lambda(data, gamma):
    """lambda_1 of diag(omega2) + Omega^2 (Kg[wz*wz] - M_perp) for the same data (X5's FE part)."""
    T = x5.strip_time_scale()
    W = gamma / T
    S = data.invariants.modal_second_moment
    k = np.diag(data.omega2) + W ** 2 * (data.preload_stiffness[2] - S[:, :, 0, 0] - S[:, :, 1, 1])
    return math.sqrt(np.linalg.eigvalsh(0.5 * (k + k.T))[0]) * T


def test_spinning_strip_vibrates_at_the_linearized_and_published_frequency(strip):
    """gamma = 6, "full" stiffening, 4 periods: the free vibration's frequency is the linearization
    of the same modal data to 2e-5 (measured 7.37016 against 7.37015: p = 2 with 40 steps per period
    has a phase error of order (w h)^4 / 720 = 1e-6) and Wright et al.'s 7.3604 within 1 %
    (measured +0.13 %)."""
    t, w = x5.free_vibration(strip, 6.0, "full", 7.3604, periods=4)
    lam = x5.fitted_frequency(t, w) * x5.strip_time_scale()
    assert lam == pytest.approx(_linearized_lambda(strip, 6.0), rel=2e-5)
    assert lam == pytest.approx(7.3604, rel=0.01)
    assert np.abs(w).max() == pytest.approx(x5.DYN_AMPLITUDE * 10.0, rel=0.05)  # small: 1e-3 L


def test_without_stiffening_the_spin_does_not_raise_the_flapwise_frequency(strip):
    """The linear modal body at gamma = 10 vibrates at the non-rotating frequency (3.524, not 11.20):
    the rise in the table is the centrifugal stiffening alone (flapwise motion has no spin softening)."""
    t, w = x5.free_vibration(strip, 10.0, "none", 3.5, periods=3)
    lam = x5.fitted_frequency(t, w) * x5.strip_time_scale()
    lam0 = 2 * math.pi * float(strip.frequencies[0]) * x5.strip_time_scale()
    assert lam == pytest.approx(lam0, rel=1e-4)
    assert lam < 0.35 * 11.2023
