"""Modal reduction of mixed FE models (issue 20, stage 2): free-free and clamped modes, Craig-Bampton
with rigid (RBE2, rotations tied) and averaging (RBE3, translations only) interfaces, inertia
invariants from the full mass, and flexible bodies of solids, shells, beams and point masses built
and simulated through the public API."""
from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.optimize as so

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe import reduction as red
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
from flexmb.fe.mesh import BeamSection, Material, PointMasses, Springs, structured_line
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.reduction.modes import _estimate_first_eigenvalue
from test_fe_mixed import STEEL, block_with_flange

#: a round steel bar, 1 m long, 20 mm diameter, Euler-Bernoulli (no shear deformation)
RADIUS, LENGTH = 0.01, 1.0
BAR = BeamSection.circle(RADIUS, shear=(math.inf, math.inf))


def bar(divisions: int = 40, tip_mass: float = 0.0, **pm) -> object:
    mesh = structured_line((0, 0, 0), (LENGTH, 0, 0), divisions, BAR, material=STEEL)
    if tip_mass:
        mesh = dataclasses.replace(mesh, point_masses=PointMasses.from_values([divisions], tip_mass, **pm))
    return mesh


def flange_with_mass():
    """The block with a shell flange of test_fe_mixed and a point mass (offset, rotary inertia) at a
    flange corner."""
    mesh = block_with_flange(2)
    corner = int(np.argmax(mesh.points @ [1.0, 1e-3, 0.0]))
    pm = PointMasses.from_values([corner], 0.5, inertia=np.diag([1e-3, 2e-3, 3e-3])[None], offset=[[0.0, 0.0, 0.05]])
    root = np.flatnonzero(np.isclose(mesh.points[:, 0], 0.0))
    edge = np.flatnonzero(mesh.points[:, 0] > 0.25)  # two rows of flange nodes
    return dataclasses.replace(mesh, point_masses=pm, node_sets={"root": root, "edge": edge})


def tip_mass_frequency(mu: float) -> float:
    """First root lambda of 1 + cos l cosh l + mu l (cos l sinh l - sin l cosh l) = 0 (cantilever with
    a tip mass mu rho A L, no rotary inertia; Blevins, Formulas for natural frequency, table 8-8)."""
    f = lambda x: 1 + math.cos(x) * math.cosh(x) + mu * x * (math.cos(x) * math.sinh(x) - math.sin(x) * math.cosh(x))
    return so.brentq(f, 0.3, 1.9)


def test_free_free_modes_of_a_mixed_model_are_those_of_the_dense_eigenproblem():
    """Solid block, shell flange and an offset point mass with rotary inertia: the rigid-body modes
    come from the DOF map (rotations turn the rotational DOFs), the elastic modes are the dense
    generalized eigenpairs, M-orthogonal to the six exact rigid motions."""
    mesh = flange_with_mass()
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    basis = red.free_free_modes(K, M, 6, points=mesh.points, dof_map=mesh.dof_map)
    dense = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True)
    assert np.allclose(basis.omega2, dense[6:12], rtol=1e-9)
    R = mesh.dof_map.rigid_body_modes(mesh.points)
    assert np.abs(basis.shapes.T @ (M @ R)).max() < 1e-10 * np.sqrt(np.abs(R.T @ (M @ R)).max())
    assert basis.nodal_shapes().shape == (mesh.n_nodes, 3, 6)
    rot = basis.nodal_rotations()
    assert rot.shape == (mesh.n_nodes, 3, 6) and not np.any(rot[0]) and np.any(rot[mesh.dof_map.rotational_nodes])
    clamped = red.clamped_modes(K, M, mesh.node_sets["root"], 3, dof_map=mesh.dof_map)
    free = np.setdiff1d(np.arange(mesh.n_dofs), mesh.dof_map.dofs(mesh.node_sets["root"]))
    dense_c = sla.eigh(K.toarray()[np.ix_(free, free)], M.toarray()[np.ix_(free, free)], eigvals_only=True)
    assert np.allclose(clamped.omega2, dense_c[:3], rtol=1e-9)


def test_the_automatic_shift_estimate_turns_the_sections_of_beams():
    """The Rayleigh-Ritz bound of the first elastic eigenvalue (quadratic fields) turns the sections of
    beam nodes with the field (theta = curl u / 2): for a free-free bar it is within a factor 2 of
    lambda_1 (uniform bending against the first bending mode); with unturned sections (the fields
    of stage 1) the bending fields bend the beam against its own rotations and the bound is useless."""
    mesh = bar(20)
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    lam1 = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True)[6]
    R = mesh.dof_map.rigid_body_modes(mesh.points)
    est = _estimate_first_eigenvalue(K, M, mesh.points, R, mesh.dof_map)
    assert lam1 <= est < 2.0 * lam1
    T = np.zeros((mesh.n_dofs, 0))
    flat = mesh.dof_map  # the same fields with zero rotations
    x = mesh.points[:, 0] - 0.5
    T = flat.embed_translations(np.stack([np.zeros_like(x), x ** 2, np.zeros_like(x)], axis=1).reshape(-1, 1))
    rq = float(T[:, 0] @ (K @ T[:, 0]) / (T[:, 0] @ (M @ T[:, 0])))
    assert rq > 100 * lam1


def test_invariants_of_a_bar_with_a_tip_mass_are_its_rigid_mass_properties():
    """Mass, centre of mass and inertia tensor from the full M and the rigid fields: the bar's rotary
    inertia (rho I per length) and the point mass's offset and inertia about its centre are in;
    free-free modes have zero linear and angular participation (mean axes) and unit modal mass."""
    m, J, r = 0.7, np.diag([2e-4, 3e-4, 5e-4]), np.array([0.02, 0.01, -0.03])
    mesh = bar(30, m, inertia=J[None], offset=r[None])
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    basis = red.free_free_modes(K, M, 4, points=mesh.points, dof_map=mesh.dof_map)
    inv = red.inertia_invariants_of_dofs(M, mesh.dof_map, mesh.points, basis.shapes, K)
    rho, A, I = STEEL.rho, math.pi * RADIUS**2, math.pi * RADIUS**4 / 4
    mb = rho * A * LENGTH
    p = np.array([LENGTH, 0, 0]) + r
    assert inv.mass == pytest.approx(mb + m, rel=1e-12)
    com = (mb * np.array([LENGTH / 2, 0, 0]) + m * p) / (mb + m)
    assert np.allclose(inv.center_of_mass, com, rtol=1e-12, atol=1e-15)
    J_bar = np.diag([rho * 2 * I * LENGTH, mb * LENGTH**2 / 3 + rho * I * LENGTH, mb * LENGTH**2 / 3 + rho * I * LENGTH])
    J_ref = J_bar + J + m * (p @ p * np.eye(3) - np.outer(p, p))
    assert np.allclose(inv.inertia_tensor, J_ref, rtol=1e-10, atol=1e-14)
    assert np.abs(inv.modal_first_moment).max() < 1e-10 * math.sqrt(mb)
    assert np.abs(inv.modal_angular_participation).max() < 1e-10 * math.sqrt(mb)
    assert np.allclose(inv.modal_mass, np.eye(4), atol=1e-10)
    assert np.allclose(inv.modal_stiffness, np.diag(basis.omega2), rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("mu", [0.0, 0.5, 2.0])
def test_craig_bampton_cantilever_with_tip_mass_meets_the_frequency_equation(mu):
    """A beam clamped through a rigid interface on ONE node (its rotations tied to the frame) with a
    tip mass: the first frequency of the body matches the classic mass-loaded cantilever equation
    (Euler-Bernoulli, 40 elements: within 1e-4)."""
    mb = STEEL.rho * math.pi * RADIUS**2 * LENGTH
    mesh = bar(40, mu * mb)
    data = build_flexible_body(mesh, interfaces=["start"], n_modes=3, stresses=False, preloads=False)
    lam = tip_mass_frequency(mu)
    EI = STEEL.E * math.pi * RADIUS**4 / 4
    w1 = lam**2 * math.sqrt(EI / (STEEL.rho * math.pi * RADIUS**2 * LENGTH**4))
    assert math.sqrt(data.omega2[0]) / w1 == pytest.approx(1.0, abs=1e-4)
    assert data.mass == pytest.approx(mb * (1 + mu), rel=1e-12)
    assert data.kind == "craig-bampton" and data.settings["quartic"] == "relaxed"


def test_rigid_interfaces_tie_rotations_and_averaging_ones_use_translations():
    """RBE2: every shape turns the interface's shell nodes by the frame's rotation and moves them
    rigidly with it; RBE3: the frame motion is the least-squares fit of the translations, the nodes'
    rotations stay free (the fixed-interface modes turn them)."""
    mesh = flange_with_mass()
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    dm = mesh.dof_map
    cb = red.craig_bampton(K, M, mesh, ["root", "edge"], 4)
    f = cb.interface("edge")
    th, t = f.modal_map[3:], f.modal_map[:3]
    assert np.abs(cb.shapes[dm.rotations(f.nodes)] - th[None]).max() < 1e-12 * np.abs(th).max()
    rel = mesh.points[f.nodes] - f.position
    u = t[None] + np.cross(th.T[:, None, :], rel[None]).transpose(1, 2, 0)
    assert np.abs(cb.shapes[dm.translations(f.nodes)] - u).max() < 1e-12 * np.abs(u).max()
    avg = red.craig_bampton(K, M, mesh, {"root": "root", "edge": {"nodes": "edge", "kind": "average"}}, 4)
    g = avg.interface("edge")
    fit = g.weights.size and red.averaging_operator(mesh.points[g.nodes], g.position, g.weights)
    assert np.allclose(g.modal_map, fit @ avg.shapes[dm.translations(g.nodes).ravel()], atol=1e-12)
    # the nodes' rotations are not the frame's
    turn = avg.shapes[dm.rotations(g.nodes)] - g.modal_map[3:][None]
    assert np.abs(turn).max() > 1e-3 * np.abs(g.modal_map[3:]).max()
    # a line of shell nodes: no frame from translations (named, with the fix), one with rotations
    line = np.flatnonzero(np.isclose(mesh.points[:, 0], 0.4))
    with pytest.raises(ModelError, match="collinear.*kind='rigid'"):
        red.craig_bampton(K, M, mesh, {"root": "root", "e": {"nodes": line, "kind": "average"}}, 2)
    assert red.craig_bampton(K, M, mesh, {"root": "root", "e": line}, 2).interface("e").modal_map.any()


def test_a_mixed_body_is_built_with_its_geometric_stiffness_preloads_and_quartic_term():
    """build_flexible_body of solids + shells + a point mass: G, the relaxed quartic term (shells'
    membrane Green strain, tests/test_structural_quartic.py) and the 12 unit preloads are computed on
    the DOF map (shells' membrane forces); a FlexibleBody of the data accepts stiffening='full'.
    Data written before the quartic term of shells existed (settings['quartic_unsupported']) is
    refused for 'full' with the fix named."""
    mesh = flange_with_mass()
    data = build_flexible_body(mesh, interfaces=["root", "edge"], n_modes=3)
    nm = data.n_modes
    assert data.geometric_stiffness.shape == (nm,) * 3
    assert data.preload_stiffness.shape == (12, nm, nm)
    assert data.quartic_stiffness.shape == (nm,) * 4 and data.settings["quartic"] == "relaxed"
    from flexmb.fe.reduction.condensation import quartic_form_minimum

    assert quartic_form_minimum(data.quartic_stiffness)[0] > -1e-9 * np.abs(data.quartic_stiffness).max()
    assert "quartic_unsupported" not in data.settings
    assert set(data.cells) == {"hexahedron", "quad"} and data.mode_shapes.shape == (mesh.n_nodes, 3, nm)
    fm.FlexibleBody("F", data)
    fm.FlexibleBody("F", data, stiffening="preload")
    old = dataclasses.replace(data, quartic_stiffness=None, settings={**data.settings, "quartic": None,
                                                                      "quartic_unsupported": "shells and beams"})
    with pytest.raises(ModelError, match="stiffening='full' needs the quartic term.*rebuild the data"):
        fm.FlexibleBody("F", old)


def test_spin_preload_of_a_beam_body_gives_the_southwell_coefficient():
    """The unit 'w^2' preloads of a beam body clamped at its root (beam axial force of the static
    centrifugal response, on the DOF map): the first bending mode's stiffness grows by
    1.1934 Omega^2 for a spin about either axis normal to the beam (Southwell coefficient of a
    uniform cantilever without hub, Wright, Smith, Thresher and Wang, J. Appl. Mech. 49 (1982));
    a spin about the beam's own axis does not load it."""
    data = build_flexible_body(bar(40), interfaces=["start"], n_modes=2, stresses=False)
    Kg = data.preload_stiffness
    assert np.abs(Kg[0]).max() < 1e-9
    for c in (1, 2):  # wy^2, wz^2
        assert np.allclose(np.diag(Kg[c]), 1.1934, rtol=5e-4)


def test_springs_to_ground_are_refused_in_a_flexible_body():
    mesh = bar(4)
    springs = Springs(nodes=[[4, -1]], coef=[[np.eye(6)[1], np.zeros(6)]], stiffness=[1e3], ids=[77])
    with pytest.raises(ModelError, match=r"1 spring\(s\) to ground \(ids 77\).*force element"):
        build_flexible_body(dataclasses.replace(mesh, springs=springs), interfaces=["start"], n_modes=2)


@lru_cache(maxsize=None)
def tip_mass_body(mu: float):
    mb = STEEL.rho * math.pi * RADIUS**2 * LENGTH
    return build_flexible_body(bar(40, mu * mb), interfaces=["start"], n_modes=2, stresses=False, preloads=False)


def test_a_beam_body_with_a_tip_mass_oscillates_at_its_frequency_in_the_dynamics():
    """Public API end to end: the beam body welded to the ground vibrates at the root of the mass-
    loaded cantilever equation (time elements p = 2, 40 steps per period: phase error ~1e-5)."""
    data = tip_mass_body(1.0)
    EI = STEEL.E * math.pi * RADIUS**4 / 4
    w1 = tip_mass_frequency(1.0) ** 2 * math.sqrt(EI / (STEEL.rho * math.pi * RADIUS**2 * LENGTH**4))
    b = fm.FlexibleBody("F", data, modes=[0], q0=[1e-4], stiffening="none", damping=0.0)
    T1 = 2 * np.pi / w1
    sol = fm.simulate(fm.Model([b], [fm.Fixed("clamp", "ground", ("F", "start"))]), 3 * T1, T1 / 40, p=2)
    q = sol.extra["modal/F"][:, 0]
    k = np.nonzero(np.sign(q[1:]) != np.sign(q[:-1]))[0]
    tz = sol.t[k] - q[k] * (sol.t[k + 1] - sol.t[k]) / (q[k + 1] - q[k])
    assert 2 * np.mean(np.diff(tz)) / T1 == pytest.approx(1.0, abs=2e-4)


def test_portal_frame_body_has_the_exact_frame_frequencies():
    """The F8 portal frame (60 Euler-Bernoulli beams, steel tube) as a Craig-Bampton body whose
    reference interface is its two feet (one rigid interface, two beam nodes: the feet clamped with
    their rotations): its first four in-plane frequencies match the exact dynamic-stiffness
    frequencies of the clamped frame (Wittrick-Williams, computed in case F8) within 0.1 % (measured
    -0.004 % to -0.055 %: the FE's rotary inertia and discretization lower them)."""
    from flexmb.validation.cases import case_f8 as f8

    mesh, sec = f8.portal_mesh(20)
    base = np.flatnonzero(np.abs(mesh.points[:, 2]) < 1e-12)
    mesh = dataclasses.replace(mesh, node_sets={"base": base})
    data = build_flexible_body(mesh, interfaces=["base"], n_modes=12, preloads=False, stresses=False)
    P = data.mode_shapes
    planar = [k for k in range(data.n_modes) if (P[:, [0, 2], k] ** 2).sum() > 0.99 * (P[:, :, k] ** 2).sum()][:4]
    steel = mesh.materials["*"]
    ea, ei, mu = steel.E * sec.area, steel.E * sec.iy, steel.rho * sec.area
    exact = f8.exact_frame_frequencies([[0, 0], [0, f8.H], [f8.SPAN, f8.H], [f8.SPAN, 0]], [(0, 1), (1, 2), (2, 3)],
                                       [0, 3], [(ea, ei, mu)] * 3, 4)
    assert np.allclose(data.frequencies[planar], exact, rtol=1e-3)
    assert data.mass == pytest.approx(steel.rho * sec.area * (2 * f8.H + f8.SPAN), rel=1e-12)


def test_symmetry_classes_of_a_basis_with_rotations_need_the_dof_map():
    """The mirror operator of shapes with rotations (n_dofs rows, a multiple of 3 too) without the DOF
    map would mirror them silently wrong: refused, naming the fix; with it the free-free modes of a
    bar are mirror eigenvectors (parity +-1; tests/test_structural_rotations.py for the classes)."""
    from flexmb.fe.reduction.symmetry import mirror_operator, mirror_permutation

    mesh = bar(4)
    K, M = assemble_stiffness(mesh), assemble_mass(mesh)
    basis = red.free_free_modes(K, M, 2, points=mesh.points, dof_map=mesh.dof_map)
    with pytest.raises(ModelError, match=r"not 3 per node.*dof_map=mesh.dof_map"):
        mirror_operator(basis.shapes, M, mirror_permutation(mesh.points, 2), 2)
    S = mirror_operator(basis.shapes, M, mirror_permutation(mesh.points, 2), 2, mesh.dof_map)
    assert np.allclose(np.abs(np.linalg.eigvalsh(S)), 1.0, atol=1e-10)


def test_element_wise_reduced_stiffness_covers_shells_beams_and_springs():
    """deformation.reduced_stiffness of a mixed K: the element-wise sum (shells and beams on their
    6-DOF deformations, springs as X^T K_s X) is the mesh's K (products to round-off), so it is used,
    and the rigid motions about a far origin carry no strain energy to 1e-25 of |R|^T |K| |R| (the
    assembled product keeps ~1e-17: before, mixed models fell back to it)."""
    from flexmb.fe.elements.deformation import reduced_stiffness, stiffness_energy, stiffness_product

    for mesh in (flange_with_mass(), bar(40)):
        n = mesh.n_nodes
        spring = Springs(nodes=[[n - 1, 0]], coef=[[np.eye(6)[1], -np.eye(6)[1]]], stiffness=[1e5], ids=[5])
        with_spring = dataclasses.replace(mesh, springs=spring)
        K = assemble_stiffness(with_spring)
        X = np.random.default_rng(0).standard_normal((mesh.n_dofs, 3))
        assert np.abs(stiffness_product(with_spring, X) - K @ X).max() < 1e-13 * np.abs(K @ X).max()
        assert np.allclose(stiffness_energy(with_spring, X), X.T @ (K @ X), rtol=1e-13)
        K = assemble_stiffness(mesh)
        R = mesh.dof_map.rigid_body_modes(mesh.points, origin=(30.0, -20.0, 10.0))
        scale = (np.abs(R).T @ (abs(K) @ np.abs(R))).max()
        assert np.abs(reduced_stiffness(K, mesh, R)).max() < 1e-25 * scale


def test_a_mixed_body_saves_loads_and_writes_its_shells_and_beams_to_paraview(tmp_path):
    """The data of solids + shells (+ a point mass) round-trips through its .npz file, and its VTU modes
    hold the hexahedra and the shell quadrilaterals with the nodal translations of the shapes."""
    import meshio

    from flexmb.fe.reduction.body_data import FlexibleBodyData

    mesh = flange_with_mass()
    data = build_flexible_body(mesh, interfaces=["root", "edge"], n_modes=2, preloads=False)
    back = FlexibleBodyData.load(data.save(tmp_path / "mixed.npz"))
    assert np.array_equal(back.mode_shapes, data.mode_shapes) and back.settings["stresses"] == "nodal and points"
    assert np.array_equal(back.modal_point_stresses, data.modal_point_stresses)
    back.to_vtu(tmp_path / "vtu")
    vtu = meshio.read(tmp_path / "vtu" / "mode_001.vtu")
    assert np.allclose(vtu.point_data["von_mises"], data.von_mises(np.eye(data.n_modes)[0]))
    flange = np.unique(mesh.shells["quad"])
    assert (vtu.point_data["von_mises"][flange] > 0).all()  # the shells' surfaces at the flange nodes
    assert set(vtu.cells_dict) == {"hexahedron", "quad"}
    assert np.array_equal(vtu.cells_dict["quad"], mesh.shells["quad"])
    assert np.allclose(vtu.point_data["displacement"], data.mode_shapes[:, :, 0])
