"""Campbell diagram of a rotor modelled in the turning frame (issue 19 C): forward and backward whirl
labels in the fixed frame and the rotor's critical speeds (Jeffcott / Laval rotor with a gyroscopic
disk: closed forms)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError

from flexmb.validation.cases.case_l5 import A, JP, JT, K2, M_DISK, fixed_frame_whirls, laval_rotor


@lru_cache(maxsize=None)
def diagram():
    return fm.campbell(laval_rotor(), np.linspace(0.0, 60.0, 31), n=8, orders=(1,))


def test_laval_rotor_whirl_labels_and_fixed_frequencies():
    """At every speed > 0 the zero modes (axial translation, the disk's spin: two zero eigenvalues each)
    are undecidable (None), the four others are two forward whirls at the fixed-frame frequencies of the lateral and
    the forward tilt mode and two backward ones (lateral, backward tilt), to 1e-9; at rest every
    label is None (degenerate pairs: no whirl sense)."""
    c = diagram()
    assert all(lab is None for lab in c.whirl[0])
    for i, W in enumerate(c.speeds[1:], start=1):
        ref = fixed_frame_whirls(W)
        labels = list(c.whirl[i])
        assert labels.count(None) == 4 and set(c.kind[i][[k for k, lab in enumerate(labels) if lab is None]]) == {"zero"}
        for lab in ("forward", "backward"):
            f = np.sort(c.fixed_frequency[i][[k for k, x in enumerate(labels) if x == lab]]) * 2 * np.pi
            assert np.allclose(f, ref[lab], rtol=1e-9), (W, lab)
        # the turning frame's frequencies are the fixed-frame ones shifted by the speed
        rot = np.sort(c.frequency[i][[k for k, x in enumerate(labels) if x is not None]]) * 2 * np.pi
        shifted = np.sort(np.abs(np.r_[ref["forward"]] - W).tolist() + (np.r_[ref["backward"]] + W).tolist())
        assert np.allclose(rot, shifted, rtol=1e-9)


def test_laval_rotor_critical_speeds_in_the_fixed_frame():
    """Order 1 in the fixed frame: the lateral forward and backward whirls meet the speed at
    sqrt(2 K2 / m) (a constant frequency: exact interpolation), the backward tilt at
    sqrt(k_t / (JT + JP)) (2e-3, linear interpolation over 2 rad/s); the forward tilt never does
    (JP > JT: the disk effect).  In the turning frame the same model's crossings are labelled too."""
    c = diagram()
    crit = c.critical_speeds(frame="fixed")
    wl = np.sqrt(2 * K2 / M_DISK)
    tilt_b = np.sqrt(2 * K2 * A**2 / (JT + JP))
    fwd = crit[crit.whirl == "forward"].speed_rad_s.to_numpy()
    bwd = np.sort(crit[crit.whirl == "backward"].speed_rad_s.to_numpy())
    assert fwd.size == 1 and abs(fwd[0] / wl - 1) < 1e-9
    assert bwd.size == 2 and abs(bwd[0] / tilt_b - 1) < 2e-3 and abs(bwd[1] / wl - 1) < 1e-9
    rot = c.critical_speeds()
    assert list(rot.columns)[-1] == "whirl" and set(rot.whirl) <= {"forward", "backward", None}
    with pytest.raises(ModelError, match="frame='inertial'"):
        c.critical_speeds(frame="inertial")
