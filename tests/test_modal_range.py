"""A modal body outside the range its model represents (flexmb.dynamics.modal_range): a WARNING once per
body when its elastic displacement exceeds a quarter of its size or, for a linear modal body
(stiffening="none"), when it spins faster than its lowest natural frequency; an initial q0 that
displaces the body by more than its size is refused before the run, naming q0."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh.structured import structured_box

#: the X1 beam (Kane, Ryan and Banerjee): L = 10 m, A = 4e-4 m^2, I = 2e-7 m^4, E = 7e10 Pa, rho = 3000
L, AREA, INERTIA = 10.0, 4e-4, 2e-7
OMEGA1 = 1.8751040687 ** 2 * math.sqrt(7e10 * INERTIA / (3000.0 * AREA * L ** 4))  # 3.80 rad/s


@pytest.fixture(scope="module")
def beam_data():
    hy = math.sqrt(12 * INERTIA / AREA)
    mesh = structured_box((L, hy, AREA / hy), (10, 1, 1), "hexahedron20", origin=(0.0, -hy / 2, -AREA / hy / 2),
                          material=fm.Material(E=7e10, nu=0.0, rho=3000.0))
    return build_flexible_body(mesh, interfaces=["xmin"], n_modes=12, geometric=False, preloads=False, stresses=False)


def spinning(data, rate, q_first=0.0):
    """The beam clamped to a hub turning at a constant ``rate`` [rad/s] from the start (steady frame motion)."""
    P = data.mode_shapes
    inplane = np.flatnonzero((P[:, 1, :] ** 2).sum(axis=0) / (P ** 2).sum(axis=(0, 1)) > 0.5)[:2]
    beam = fm.FlexibleBody("beam", data, modes=inplane, stiffening="none", angular_velocity=(0, 0, rate),
                           q0=[q_first] + [0.0] * (inplane.size - 1))
    hub = fm.Revolute("hub", "ground", ("beam", "xmin"), axis=(0, 0, 1), angular_velocity=rate)
    return fm.Model([beam], [hub]), beam


def test_the_data_has_the_x1_frequency(beam_data):
    P = beam_data.mode_shapes
    inplane = (P[:, 1, :] ** 2).sum(axis=0) / (P ** 2).sum(axis=(0, 1)) > 0.5
    assert math.sqrt(beam_data.omega2[inplane].min()) == pytest.approx(OMEGA1, rel=2e-3)


def test_a_linear_body_spinning_above_its_frequency_is_named_and_its_growth_too(beam_data, caplog):
    """At 2.1 x omega_1 the linear modal body diverges (growth rate sqrt(Omega^2 - omega_1^2) = 7 / s): the
    spin is named at the first node, the displacement once it passes L / 4 (2.5 m on the 10 m beam), each once."""
    model, beam = spinning(beam_data, 8.0, q_first=0.05)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        sol = fm.simulate(model, 0.9, 0.01, p=2)
    spin = [r.getMessage() for r in caplog.records if "spins at" in r.getMessage()]
    big = [r.getMessage() for r in caplog.records if "elastic displacement reached" in r.getMessage()]
    assert len(spin) == 1 and "'beam'" in spin[0] and "t = 0 s" in spin[0] and "stiffening='full'" in spin[0]
    assert len(big) == 1 and "x its size" in big[0]
    tip = np.linalg.norm(sol.body("beam").nodes().displacement, axis=-1).max()
    assert tip > 0.25 * L  # the warning was right


def test_no_warning_within_range(beam_data, caplog):
    model, _ = spinning(beam_data, 2.0, q_first=0.05)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.simulate(model, 0.5, 0.02, p=2)
    assert not [r for r in caplog.records if "flexmb.dynamics.modal_range" in r.name]


def test_a_huge_q0_is_refused_before_the_run_naming_q0(beam_data, caplog):
    """q0 of 1e3 (a tip displacement of kilometres) used to be reported as a Newton failure at the hub joint
    with "use a smaller step"; now it names q0, the value and the fix; a quarter of the body warns."""
    model, _ = spinning(beam_data, 1.0, q_first=1e3)
    with pytest.raises(fm.ModelError, match=r"FlexibleBody 'beam': q0 \(largest \|q0\| = 1000\) displaces .* Give q0 in"):
        fm.simulate(model, 0.1, 0.01)
    probe = np.abs(beam_data.mode_shapes).max()
    model, _ = spinning(beam_data, 1.0, q_first=0.3 * L * 1.01 / probe)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        try:
            fm.simulate(model, 0.02, 0.01)
        except fm.ConvergenceError:
            pass
    assert any("q0 displaces the body's points" in r.getMessage() for r in caplog.records)
