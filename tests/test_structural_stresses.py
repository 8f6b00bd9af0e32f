"""Modal stresses of shells and beams (issue 20, stage 3): beam section forces and extreme-fibre
stresses, shell top and bottom surface stresses, stored per unit modal coordinate in the flexible-body
data and carried to the von Mises output (FlexibleBodyData.von_mises, Solution.body().nodes(),
to_paraview), checked against the closed forms of a cantilever beam and a plate strip under a tip
load (the Craig-Bampton basis holds the static tip-load shape, so the reduced static solution is
the FE one)."""
from __future__ import annotations

import math
from functools import lru_cache

import meshio
import numpy as np
import pytest

import flexmb as fm
from flexmb.fe.mesh import BeamSection, Material, structured_line, structured_plate
from flexmb.fe.reduction.body_data import FlexibleBodyData, build_flexible_body

STEEL0 = Material(2.1e11, 0.0, 7850.0, "steel, nu = 0")
R, L, P = 0.01, 1.0, 100.0
B, T = 0.1, 0.01


@lru_cache(maxsize=None)
def beam_data():
    mesh = structured_line((0, 0, 0), (L, 0, 0), 20, BeamSection.circle(R), material=STEEL0)
    return mesh, build_flexible_body(mesh, interfaces=["start", "end"], n_modes=4, preloads=False, geometric=False)


@lru_cache(maxsize=None)
def plate_data():
    mesh = structured_plate((L, B), (20, 2), thickness=T, material=STEEL0)
    return mesh, build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4, preloads=False, geometric=False)


def test_cantilever_beam_root_section_forces_and_fibre_stress_under_a_tip_load():
    """Tip load P along y on a clamped round bar (20 Timoshenko beams): the reduced static solution
    gives the root section forces N = 0, Vy = P, Mz = P L and the extreme-fibre stress
    P (L - x) r / I at every node (exact for end loads: 1e-12), the tip deflection P L^3 / (3 E I)
    within the shear deformation; the von Mises stress at a beam node is its worst fibre's."""
    mesh, data = beam_data()
    assert data.settings["stresses"] == "nodal and points" and data.modal_stresses is None
    q = P * data.mode_shapes[20, 1, :] / data.omega2  # modal static response, K = diag(omega2)
    inertia = math.pi * R ** 4 / 4
    assert data.displacement(q)[20, 1] == pytest.approx(P * L ** 3 / (3 * STEEL0.E * inertia), rel=2e-3)
    F = data.beam_forces(q)
    assert F.shape == (20, 2, 6)
    assert F[0, 0, [1, 5]] == pytest.approx([P, P * L], rel=1e-10)
    assert np.abs(F[0, 0, [0, 2, 3, 4]]).max() < 1e-9 * P * L
    assert F[9, 1, 5] == pytest.approx(P * L / 2, rel=1e-10)  # mid-span, end b of element 9
    x = mesh.points[:, 0]
    assert data.von_mises(q) == pytest.approx(P * (L - x) * R / inertia, rel=1e-9, abs=1e-12 * P * L * R / inertia)
    fib = data.point_stresses(q)[data.stress_point_kinds == 2]
    assert np.abs(fib[:, 0]).max() == pytest.approx(P * L * R / inertia, rel=1e-10)  # uniaxial along x
    assert np.abs(fib[:, 1:]).max() < 1e-9 * np.abs(fib).max()


def test_plate_strip_surface_stresses_under_a_tip_load():
    """Cantilever strip of 20 x 2 MITC4 shells (nu = 0) with a tip line load P: the bottom and top
    surface stresses at an interior node are -+ 6 M / (b t^2), M = P (L - x), the bending stress of
    beam theory (1e-11: the nodal average of two elements' constant curvatures is exact for a linear
    moment); at the clamped root node only one element contributes its mean, P (L - h/2)."""
    mesh, data = plate_data()
    tip = mesh.node_sets["xmax"]
    w = np.where(np.isclose(mesh.points[tip, 1], B / 2), 0.5, 0.25)
    q = P * (w @ data.mode_shapes[tip, 2, :]) / data.omega2
    x, y = mesh.points[:, 0], mesh.points[:, 1]
    vm = data.von_mises(q)
    inner = np.flatnonzero((x > 1e-9) & (x < L - 1e-9))
    assert vm[inner] == pytest.approx(6 * P * (L - x[inner]) / (B * T * T), rel=1e-9)
    root = np.flatnonzero(x < 1e-9)
    h = L / 20
    assert vm[root] == pytest.approx(6 * P * (L - h / 2) / (B * T * T), rel=1e-9)
    mid = int(np.flatnonzero(np.isclose(x, 0.5) & np.isclose(y, B / 2))[0])
    sp = data.point_stresses(q)[data.stress_point_nodes == mid]
    kinds = data.stress_point_kinds[data.stress_point_nodes == mid]
    assert sorted(kinds.tolist()) == [0, 1]
    sxx = sp[np.argsort(kinds), 0]
    assert sxx == pytest.approx([3e7, -3e7], rel=1e-9)  # bottom stretched by the upward tip load


def test_stresses_survive_save_load_mode_subsets_and_reach_nodes_and_paraview(tmp_path):
    """The stress arrays are saved and read back, follow a subset of the modes, and the dynamics'
    outputs carry them: Solution.body().nodes().von_mises equals data.von_mises at each output
    time, and to_paraview writes it (nodes of beams: the worst fibre)."""
    _, data = beam_data()
    back = FlexibleBodyData.load(data.save(tmp_path / "beam.npz"))
    q = np.linspace(1.0, 2.0, data.n_modes) * 1e-4
    assert np.array_equal(back.von_mises(q), data.von_mises(q))
    assert np.array_equal(back.beam_forces(q), data.beam_forces(q))
    body = fm.FlexibleBody("F", data, modes=[0, 1], q0=[1e-4, 0.0], stiffening="none", damping=0.0)
    assert body.data.modal_point_stresses.shape[0] == 2
    model = fm.Model([body], [fm.Fixed("clamp", "ground", ("F", "start"))])
    sol = fm.simulate(model, 0.01, 0.002, p=2)
    view = sol.body("F").nodes()
    qt = sol.extra["modal/F"]
    assert view.von_mises.shape == (sol.nt, data.n_nodes)
    assert np.allclose(view.von_mises[-1], body.data.von_mises(qt[-1]), rtol=1e-12, atol=0.0)
    assert view.von_mises[-1].max() > 0
    pvd = sol.to_paraview(tmp_path / "pv", every=5)
    vtu = sorted(pvd.parent.glob("F_*.vtu"))[-1]
    i = int(vtu.stem.split("_")[1])
    assert np.allclose(meshio.read(vtu).point_data["von_mises"], body.data.von_mises(qt[i]), rtol=1e-6)


def test_section_fibres_span_the_section_about_its_centroid():
    """Extreme fibres: RECT and BOX corners span width x height, the I's flange corners span h with
    the flange widths, all about the centroid (so the axial stress N / A is the same at every fibre
    and a bending moment's fibre stresses are M c / I)."""
    rect = BeamSection.rectangle(0.02, 0.05).fibres()
    assert np.ptp(rect, axis=0) == pytest.approx([0.02, 0.05]) and np.allclose(rect.mean(axis=0), 0.0)
    box = BeamSection.box(0.1, 0.2, 0.01, 0.02, 0.01, 0.005)
    fb = box.fibres()
    assert np.ptp(fb, axis=0) == pytest.approx([0.1, 0.2])
    assert fb[:, 1].max() == pytest.approx(0.1 - box.centroid[1])  # top face from the centroid
    i = BeamSection.i_section(0.05, 0.2, 0.1, 0.08, 0.01, 0.012, 0.006)
    fi = i.fibres()
    assert np.ptp(fi[:, 1]) == pytest.approx(0.2)
    assert sorted(set(np.round(np.abs(fi[:, 0]), 12))) == pytest.approx([0.04, 0.05])
    # the centroid: first moment of the flanges and the web about it vanishes
    zb = -fi[:, 1].min()  # bottom face below the centroid
    hw = 0.2 - 0.01 - 0.012
    first = 0.1 * 0.01 * (0.005 - zb) + 0.08 * 0.012 * (0.2 - 0.006 - zb) + 0.006 * hw * (0.01 + hw / 2 - zb)
    assert abs(first) < 1e-15
    circ = BeamSection.circle(0.01).fibres()
    assert np.allclose(np.linalg.norm(circ, axis=1), 0.01) and circ.shape == (16, 2)
