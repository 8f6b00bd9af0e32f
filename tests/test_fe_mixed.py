"""Mixed FE models: the DOF map (3 DOFs at solid nodes, 6 at shell and beam nodes), how a shell or
beam meets a solid (a hinge along one row of shared nodes, a moment joint along two), point masses
and rotary inertias, springs, loads and stresses over the whole model, mesh operations, and the
refusal to reduce what stage 1 does not reduce yet."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import scipy.linalg as sla

from flexmb.errors import ModelError
from flexmb.fe import reduction as red
from flexmb.fe.elements.assembly import (
    assemble_geometric_stiffness,
    assemble_mass,
    assemble_scalar_mass,
    assemble_stiffness,
    body_force_vector,
    element_stresses,
    nodal_stresses,
)
from flexmb.fe.elements.dofs import DofMap
from flexmb.fe.mesh import (
    BeamSection,
    FEMesh,
    Material,
    PointMasses,
    ShellSection,
    Springs,
    structured_box,
    structured_line,
)
from flexmb.fe.mesh.unassembled import require_assembled

STEEL = Material(210e9, 0.3, 7850.0, "steel")


def block_with_flange(rows: int) -> FEMesh:
    """A 0.2 x 0.2 x 0.2 hex8 block (2 x 2 x 2) and a 0.2 x 0.2 shell flange in the plane z = 0.1
    sticking out at x = 0.2; ``rows`` = 1: the flange shares the block's nodes on one line (x = 0.2),
    2: it reaches one element into the block (two rows of shared nodes)."""
    block = structured_box((0.2, 0.2, 0.2), (2, 2, 2), "hexahedron")
    pts = [block.points]
    x0 = 0.2 - 0.1 * (rows - 1)
    gx = np.linspace(x0, 0.4, 2 + rows + 1 - 1) if rows == 2 else np.linspace(0.2, 0.4, 3)
    grid = np.array([[x, y, 0.1] for x in gx for y in (0.0, 0.1, 0.2)])
    ids = []
    new = []
    for p in grid:
        hit = np.flatnonzero(np.all(np.isclose(block.points, p), axis=1))
        if hit.size:
            ids.append(int(hit[0]))
        else:
            ids.append(len(block.points) + len(new))
            new.append(p)
    pts = np.vstack([block.points, np.array(new)])
    ids = np.array(ids).reshape(len(gx), 3)
    quads = np.array([[ids[i, j], ids[i + 1, j], ids[i + 1, j + 1], ids[i, j + 1]]
                      for i in range(len(gx) - 1) for j in range(2)])
    return FEMesh(points=pts, cells=block.cells, shells={"quad": quads},
                  element_sets={"flange": {"quad": np.arange(len(quads))}},
                  sections={"flange": ShellSection(0.01)}, materials={"*": STEEL})


def zero_modes(mesh: FEMesh) -> int:
    ev = np.linalg.eigvalsh(assemble_stiffness(mesh).toarray())
    return int(np.sum(ev < 1e-9 * ev.max()))


def test_dof_map_of_a_mixed_model():
    mesh = block_with_flange(1)
    dm = mesh.dof_map
    shell_nodes = np.unique(mesh.shells["quad"])
    assert set(dm.rotational_nodes) == set(shell_nodes)
    assert dm.n_dofs == 3 * mesh.n_nodes + 3 * shell_nodes.size == mesh.n_dofs
    # node-major: each node's translations first, then its rotations
    a = int(shell_nodes[0])
    assert dm.translations([a])[0].tolist() == [dm.offset[a], dm.offset[a] + 1, dm.offset[a] + 2]
    assert dm.rotations([a])[0].tolist() == [dm.offset[a] + 3, dm.offset[a] + 4, dm.offset[a] + 5]
    with pytest.raises(ModelError, match="no rotational DOFs"):
        dm.rotations([0])
    # solid-only meshes keep the classic 3 a + i layout
    solid = structured_box((1, 1, 1), (1, 1, 1), "hexahedron")
    assert solid.dof_map.translations().ravel().tolist() == list(range(24)) and solid.n_dofs == 24


def test_a_flange_on_one_row_of_solid_nodes_is_a_hinge_on_two_rows_a_moment_joint():
    """The solid node carries no rotation: a shell sharing one line of nodes with a solid turns
    freely about it (7 zero modes); sharing two rows it is clamped (6)."""
    assert zero_modes(block_with_flange(1)) == 7
    mesh = block_with_flange(2)
    assert zero_modes(mesh) == 6
    # the exact rigid motions are in the null space, M carries the total mass
    r = mesh.dof_map.rigid_body_modes(mesh.points, origin=(0.1, 0.2, 0.3))
    k = assemble_stiffness(mesh)
    assert np.abs(k @ r).max() < 1e-9 * abs(k).max()
    mass = STEEL.rho * (0.2**3 + 0.01 * 0.3 * 0.2)  # block + flange (one strip inside the block too)
    m = assemble_mass(mesh)
    assert r[:, 0] @ (m @ r[:, 0]) == pytest.approx(mass, rel=1e-12)
    f = body_force_vector(mesh, (0.0, 0.0, -9.81))
    assert f[mesh.dof_map.translations()[:, 2]].sum() == pytest.approx(-9.81 * mass, rel=1e-12)


def test_stresses_and_geometric_stiffness_of_a_mixed_model():
    mesh = block_with_flange(2)
    rng = np.random.default_rng(0)
    u = rng.normal(size=mesh.n_dofs) * 1e-6
    s = element_stresses(mesh, u)
    assert set(s) == {"hexahedron", "quad"} and s["quad"].shape == (6, 4, 6)
    kg = assemble_geometric_stiffness(mesh, s)
    kg2 = assemble_geometric_stiffness(mesh, element_stresses(mesh, 2 * u))
    assert kg.shape == (mesh.n_dofs,) * 2
    assert abs(kg2 - 2 * kg).max() < 1e-9 * abs(kg).max()  # linear in the stresses
    assert abs(kg - kg.T).max() < 1e-9 * abs(kg).max()
    # nodal stresses of a mixed model: the solid cells' average from the translations, zero at shell-only nodes
    sn = nodal_stresses(mesh, u)
    solid = mesh.solid_only()
    assert np.allclose(sn[: solid.n_nodes], nodal_stresses(solid, u[mesh.dof_map.translations()[: solid.n_nodes].ravel()]))
    assert not sn[solid.n_nodes:].any()
    with pytest.raises(ModelError, match="assemble_mass"):
        assemble_scalar_mass(mesh)


def test_point_mass_with_offset_and_inertia_has_its_rigid_body_mass():
    """A 5 kg mass with inertia J, 0.3 m from the tip node of a beam: the 6 x 6 rigid-body mass of
    the point mass alone is that of a rigid body at node + r."""
    sec = BeamSection.circle(0.01)
    beam = structured_line((0, 0, 0), (1, 0, 0), 2, sec, material=STEEL)
    r = np.array([0.0, 0.3, 0.1])
    j = np.diag([0.2, 0.3, 0.4])
    pm = PointMasses.from_values([2], 5.0, inertia=j[None], offset=r[None])
    mesh = FEMesh(points=beam.points, cells={}, beams=beam.beams, sections=beam.sections,
                  materials=beam.materials, point_masses=pm)
    rig = mesh.dof_map.rigid_body_modes(mesh.points)
    mr = rig.T @ ((assemble_mass(mesh) - assemble_mass(beam)) @ rig)
    c = mesh.points[2] + r
    sk = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    expected = np.block([[5.0 * np.eye(3), -5.0 * sk], [5.0 * sk, j - 5.0 * sk @ sk]])
    assert np.abs(mr - expected).max() < 1e-12 * np.abs(expected).max()


def test_rotary_inertia_at_a_solid_node_is_dropped_loudly(caplog):
    box = structured_box((1, 1, 1), (1, 1, 1), "hexahedron", material=STEEL)
    pm = PointMasses.from_values([0, 7], [2.0, 3.0], inertia=np.eye(3)[None].repeat(2, 0) * [[[1.0]], [[0.0]]])
    mesh = FEMesh(points=box.points, cells=box.cells, materials=box.materials, point_masses=pm)
    assert mesh.n_dofs == 24  # no rotations anywhere
    with caplog.at_level(logging.WARNING, logger="flexmb.fe.elements.mixed"):
        m = assemble_mass(mesh)
    assert "rotary inertia and offset are dropped" in caplog.text and "[1]" in caplog.text
    assert m.sum() == pytest.approx(3 * (STEEL.rho + 5.0))  # kron(Ms, I3) sums 3 x the mass
    assert assemble_scalar_mass(mesh).sum() == pytest.approx(STEEL.rho + 5.0)


def test_spring_mass_oscillator_and_spring_forms():
    """A point mass on a grounded spring: omega^2 = k / m; a SPRING2-like spring between x of one
    node and y of another; a rotational spring needs rotational DOFs."""
    pts = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    pm = PointMasses.from_values([0, 1], [2.0, 3.0])
    coef = np.zeros((2, 2, 6))
    coef[0, 0, 0] = 1.0  # node 0, x, to ground
    coef[1, 0, 0], coef[1, 1, 1] = 1.0, -1.0  # u_x(0) - u_y(1)
    springs = Springs([[0, -1], [0, 1]], coef, [800.0, 50.0], [1, 2])
    mesh = FEMesh(points=pts, cells={}, point_masses=pm, springs=springs)
    k = assemble_stiffness(mesh).toarray()
    assert k[0, 0] == 850.0 and k[0, 4] == -50.0 and k[4, 4] == 50.0
    m = assemble_mass(mesh).toarray()
    w2 = sla.eigh(k[np.ix_([0, 4], [0, 4])], m[np.ix_([0, 4], [0, 4])], eigvals_only=True)
    s = np.diag(np.array([2.0, 3.0]) ** -0.5)
    ref = np.linalg.eigvalsh(s @ np.array([[850.0, -50.0], [-50.0, 50.0]]) @ s)
    assert np.allclose(w2, ref)
    rot = np.zeros((1, 2, 6))
    rot[0, 0, 3] = 1.0
    bad = FEMesh(points=pts, cells={}, springs=Springs([[0, -1]], rot, [1.0], [7]))
    with pytest.raises(ModelError, match="spring 7 acts on a rotation"):
        assemble_stiffness(bad)


def test_cantilever_with_tip_mass_first_frequency():
    """Euler-Bernoulli cantilever with a tip mass M = 0.5 m_beam: 1 + cos(bL) cosh(bL) + (M/m_b) bL
    (cos bL sinh bL - sin bL cosh bL) = 0 (Blevins 1979, table 8-8): bL = 1.4200."""
    L = 1.0
    sec = BeamSection.circle(0.005, shear=(math.inf, math.inf))
    beam = structured_line((0, 0, 0), (L, 0, 0), 20, sec, material=STEEL)
    mb = STEEL.rho * sec.area * L
    mesh = FEMesh(points=beam.points, cells={}, beams=beam.beams, sections=beam.sections, materials=beam.materials,
                  point_masses=PointMasses.from_values([20], 0.5 * mb))
    k, m = assemble_stiffness(mesh).toarray(), assemble_mass(mesh).toarray()
    free = np.arange(6, mesh.n_dofs)
    w2 = sla.eigh(k[np.ix_(free, free)], m[np.ix_(free, free)], eigvals_only=True, subset_by_index=[0, 0])[0]
    from scipy.optimize import brentq

    ratio = 0.5
    bl = brentq(lambda b: 1 + math.cos(b) * math.cosh(b) + ratio * b * (math.cos(b) * math.sinh(b)
                                                                       - math.sin(b) * math.cosh(b)), 1.0, 1.8)
    exact = bl**2 * math.sqrt(STEEL.E * sec.iy / (STEEL.rho * sec.area * L**4))
    assert math.sqrt(w2) == pytest.approx(exact, rel=1e-5)
    assert bl == pytest.approx(1.4200, abs=1e-4)


def test_mesh_operations_keep_the_structural_parts():
    mesh = block_with_flange(2)
    pts = np.vstack([mesh.points, [[9.0, 9, 9]]])  # an unused node
    with_unused = FEMesh(points=pts, cells=mesh.cells, shells=mesh.shells, element_sets=mesh.element_sets,
                         sections=mesh.sections, materials=mesh.materials)
    compact = with_unused.compacted()
    assert compact.n_nodes == mesh.n_nodes
    assert abs(assemble_stiffness(compact) - assemble_stiffness(mesh)).max() < 1e-6
    solid = mesh.solid_only()
    assert not solid.shells and solid.n_dofs == 3 * solid.n_nodes
    assert [(e.type, e.kind, e.count) for e in solid.unassembled] == [("quad", "shell", 6)]
    summary = mesh.summary()
    assert summary["shells"] == {"quad": 6} and summary["mass"] == pytest.approx(
        STEEL.rho * (0.2**3 + 0.01 * 0.3 * 0.2), rel=1e-12)


def test_paths_on_three_dofs_per_node_refuse_a_mixed_model_by_name():
    """`flexmb modes` (scalar mass, 3 DOFs per node) still refuses shells, beams, point masses and
    springs by kind and count and points at build_flexible_body; the solid part builds with
    allow_unassembled. Before stage 2 every reduction refused them."""
    mesh = block_with_flange(2)
    with pytest.raises(ModelError, match=r"6 quad shell element\(s\).*not support them yet.*build_flexible_body.*"
                                         r"solid_only"):
        require_assembled(mesh, "flexmb modes", True)
    require_assembled(mesh, "build_flexible_body", False, rotational=True)  # reduces them: no refusal
    from flexmb.fe.reduction.body_data import build_flexible_body

    body = build_flexible_body(mesh.solid_only(), n_modes=2, geometric=False, preloads=False, stresses=False,
                               allow_unassembled=True)
    assert body.mass == pytest.approx(STEEL.rho * 0.2**3)
    # full-FE free-free modes of the mixed model work through the generic solver
    basis = red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 4)
    assert basis.rigid_modes.shape[1] == 6 and basis.frequencies[0] > 0
    # points without the DOF map: the count of rows is named with the fix
    with pytest.raises(ModelError, match=r"dof_map=mesh.dof_map"):
        red.free_free_modes(assemble_stiffness(mesh), assemble_mass(mesh), 2, points=mesh.points)
