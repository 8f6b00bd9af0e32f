"""Redundant joint equations on flexible attachments: the rank decision in the scaled metric.

The flexible slider-crank of X3 (flexmb/validation/cases/case_x3.py) with the classic joint set,
revolutes at both rod ends, has 3 dependent equations in 3-D (the slider's s_y, phi_x, phi_z are
implied by the in-plane loop).  The in-plane Craig-Bampton modes' out-of-plane interface entries
are zero in exact arithmetic but round-off in the data (1e-10 .. 4e-9 rad against 33 .. 1065 rad of
in-plane rotation per unit modal coordinate on the rod regenerated with 48 hex20 elements).  Before
the rank was decided in the scaled metric (rows and columns at their natural magnitudes, modal
columns by their interface shapes), such round-off made two of the three equations look
independent: they stayed in the system, held the rod's modal coordinates through lever arms of
round-off size and the linear rod's first maximum came out 0.00795 instead of 0.01106, with no
warning.  Reference: the same mechanism with a non-redundant joint set (universal + spherical),
which the round-off cannot touch.
"""
from __future__ import annotations

import dataclasses
import logging
from types import SimpleNamespace

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.node.redundancy import detect_redundant, loop_joints, scaled_loop_matrix
from flexmb.dynamics.system import compile_model, initial_configuration
from flexmb.validation.cases import case_x3 as x3

#: round-off of the in-plane modes' out-of-plane entries at the small end, as measured on the rod
#: regenerated with 48 hex20 elements (rows: s_z, phi_x, phi_y of the interface; 4 modes)
ROUNDOFF_48 = {2: [5.5e-13, 6.0e-13, -2.1e-12, 1.2e-11], 3: [7.0e-11, 9.2e-11, -8.7e-11, 1.5e-10],
               4: [-1.0e-10, -1.6e-10, 5.8e-10, -3.9e-9]}


def classic(data, stiffening="none"):
    """X3 with revolutes at both rod ends (3 redundant equations in 3-D)."""
    m = x3.slider_crank(x3.OMEGA_X3, 0.0, stiffening, data)
    j = list(m.joints)
    j[1] = fm.Revolute("pin", "crank", ("rod", "big_end"), point=(x3.R, 0, 0), axis=(0, 0, 1))
    j[2] = fm.Revolute("wrist", "slider", ("rod", "small_end"), point=(x3.R + x3.L, 0, 0), axis=(0, 0, 1))
    return fm.Model(list(m.bodies), j)


def with_roundoff(data, factor=1.0):
    """``data`` with the small end's out-of-plane entries set to ``factor`` x the measured round-off."""
    frames = []
    for f in data.interfaces:
        if f.name == "small_end":
            mm = np.array(f.modal_map, dtype=float)
            for row, vals in ROUNDOFF_48.items():
                mm[row] = factor * np.asarray(vals)
            f = dataclasses.replace(f, modal_map=mm)
        frames.append(f)
    return dataclasses.replace(data, interfaces=tuple(frames))


def _start(model):
    cm = compile_model(model)
    x, R, _ = initial_configuration(cm)
    return cm, SimpleNamespace(x=x, R=R)


def test_roundoff_on_a_flexible_interface_is_dependence():
    """The three slider equations are dependent with 10 x the round-off of the 48-element rod in the
    data: in the scaled metric the three smallest singular values are < 1e-10 of the largest, the others
    > 0.1 (a clean gap), and three dependent equations are reported (which three is the pivoting's
    choice)."""
    data = with_roundoff(x3.rod_data(basis="bending"), 10.0)
    cm, st = _start(classic(data))
    Gs, labels, _, _ = scaled_loop_matrix(cm, st, loop_joints(cm))
    sv = np.linalg.svd(Gs, compute_uv=False)
    sv = sv / sv[0]
    assert np.all(sv[-3:] < 1e-10) and np.all(sv[:-3] > 0.1)
    dep, inconsistent = detect_redundant(cm, st)
    assert len(dep) == 3 and inconsistent == []


def test_roundoff_does_not_distort_the_flexible_slider_crank():
    """1 rad of crank with the linear rod: the classic (redundant) joint set with 10 x the 48-element
    round-off on the shipped rod gives the first maximum of the non-redundant set (0.01106, published
    linear 0.0110) to 1e-6.  Before the scaled rank decision: 2 equations dropped, 0.00753 (and
    0.00795 on the regenerated 48-element rod itself, :func:`test_regenerated_48_element_rod_keeps_the_linear_first_maximum`)."""
    data = with_roundoff(x3.rod_data(basis="bending"), 10.0)
    t_end = 1.0 / x3.OMEGA_X3
    sol = fm.simulate(classic(data), t_end, x3.H, p=x3.P)
    ref = fm.simulate(x3.slider_crank(x3.OMEGA_X3, 0.0, "none", data), t_end, x3.H, p=x3.P)
    assert len(sol.meta["redundant_constraints"]) == 3
    _, d1 = x3.first_maximum(sol.t, x3.midpoint_deflection(sol, data))
    _, d_ref = x3.first_maximum(ref.t, x3.midpoint_deflection(ref, data))
    assert d1 == pytest.approx(d_ref, rel=1e-6)
    assert d1 == pytest.approx(x3.LINEAR_X3, rel=0.03)


def test_barely_independent_constraints_are_named_in_a_warning(caplog):
    """Out-of-plane interface entries 1e5 x the round-off (up to 3.9e-4 rad per unit modal coordinate
    against 1065 in plane) are above the dependence threshold (singular values 1.4e-7 and 3.6e-8 of the
    largest in the scaled metric, the third 7e-11 is dropped), but they hold the rod through lever
    arms of ~1e-7 of the natural ones: kept, with a WARNING that names the joints involved."""
    data = with_roundoff(x3.rod_data(basis="bending"), 1e5)
    cm, st = _start(classic(data))
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        dep, _ = detect_redundant(cm, st)
    msg = " ".join(r.getMessage() for r in caplog.records if "barely independent" in r.getMessage())
    assert msg and "wrist" in msg
    # the clean data: no such warning
    caplog.clear()
    cm, st = _start(classic(x3.rod_data(basis="bending")))
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        detect_redundant(cm, st)
    assert not any("barely independent" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_regenerated_48_element_rod_keeps_the_linear_first_maximum():
    """The rod regenerated with 48 hex20 elements along the length (flexmb/data/meshes/generate.py
    ``x_rod_mesh``), Craig-Bampton, in-plane bending basis of 4 shapes: the classic joint set finds
    3 redundant equations and reproduces the non-redundant set's first maximum (0.01106) to 1e-6
    over 1.5 rad of crank (before: 2 found, 0.00795)."""
    from flexmb.catalog.flexible import _IN_PLANE
    from flexmb.data.meshes.generate import ROD, x_rod_mesh
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.fe.reduction.symmetry import symmetric_sub_basis

    mesh = x_rod_mesh({**ROD, "divisions": 48})
    data = build_flexible_body(
        mesh, interfaces=["big_end", "small_end"], n_modes=40, reference="big_end", name="x3_rod",
        basis_transform=lambda b, K, M, m: symmetric_sub_basis(b, M, m.points, _IN_PLANE[1], 4, label=_IN_PLANE[0]))
    t_end = 1.5 / x3.OMEGA_X3
    sol = fm.simulate(classic(data), t_end, x3.H, p=x3.P)
    ref = fm.simulate(x3.slider_crank(x3.OMEGA_X3, 0.0, "none", data), t_end, x3.H, p=x3.P)
    assert len(sol.meta["redundant_constraints"]) == 3
    _, d1 = x3.first_maximum(sol.t, x3.midpoint_deflection(sol, data))
    _, d_ref = x3.first_maximum(ref.t, x3.midpoint_deflection(ref, data))
    assert d1 == pytest.approx(d_ref, rel=1e-6)
    assert d1 == pytest.approx(0.01106, rel=2e-3)


def test_dropped_equation_on_a_flexible_interface_is_monitored_through_its_deformation():
    """The violation of a dropped equation is measured on the attachment frames at the node too, so a
    flexible body's interface motion counts: with the wrist's lateral equation (s_y, frame of the
    slider) marked as dropped, a deformation of the rod that moves its small end 1e-4 m sideways
    (modal coordinates, joint state untouched) stops the run with an error naming the wrist."""
    from flexmb.dynamics.bodies.modal import QKEY
    from flexmb.dynamics.node.redundancy import dropped_violation
    from flexmb.dynamics.simulate import Run, SimulationOptions
    from flexmb.errors import ConstraintViolationError

    data = x3.rod_data(basis="bending")
    model = classic(data)
    run = Run.start(model, 1e-3, 1e-4, 2, 0.0, SimulationOptions())
    cm, st = run.cm, run.st
    wrist = [j.name for j in model.joints].index("wrist")
    run.select(run.selection.changed(drop=[(wrist, 1)]))  # the documented way to switch a row off
    assert dropped_violation(cm, st, run.selection)[0] < 1.0  # assembled: nothing violated
    # modal coordinates moving the small end by 1e-4 m along y (least squares on its interface map)
    mm = np.asarray(data.interface("small_end").modal_map)
    q = np.linalg.lstsq(mm[:3], [0.0, 1e-4, 0.0], rcond=None)[0]
    st.extra[QKEY] = st.extra[QKEY] + q[None, :]
    v, j, c = dropped_violation(cm, st, run.selection)
    assert (j, c) == (wrist, 1) and v == pytest.approx(1e-4 / (model.assembly_tol * cm.length_scale), rel=1e-3)
    with pytest.raises(ConstraintViolationError, match=r"joint 'wrist' component s_y, dropped"):
        run._check_dropped()
