"""Rotations of shells and beams in the flexible-body data and in the mirror-symmetry classes (issue 20,
stage 3): the stored nodal rotations are the slopes of an Euler-Bernoulli beam's deflection, and the
mirror classes of a beam body (rotations mirrored as pseudovectors) are its bending planes and its
torsion, with the closed-form torsion frequency."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.mesh import BeamSection, Material, structured_line
from flexmb.fe.reduction.body_data import FlexibleBodyData, build_flexible_body
from flexmb.fe.reduction.symmetry import mirror_operator, mirror_permutation, symmetric_sub_basis

STEEL = Material(2.1e11, 0.3, 7850.0, "steel")
L, N = 1.0, 40
#: 20 mm along local y (= global y), 10 mm along z; Euler-Bernoulli
SECTION = BeamSection.rectangle(0.02, 0.01, shear=(math.inf, math.inf), orientation=(0.0, 1.0, 0.0))


def _mesh():
    return structured_line((0, 0, 0), (L, 0, 0), N, SECTION, material=STEEL)


@lru_cache(maxsize=None)
def cantilever():
    return build_flexible_body(_mesh(), interfaces=["start"], n_modes=6, preloads=False, stresses=False,
                               geometric=False)


def test_stored_rotations_are_the_slopes_of_the_deflection(tmp_path):
    """Euler-Bernoulli beam (no shear): the stored rotation theta_z of every mode is dv/dx and theta_y
    is -dw/dx at every interior node (central differences of the stored translations, whose error
    (k h)^2 / 6 is 1.3 % for the sixth mode, 4e-5 for the first); saved, read back, kept by a subset
    of the modes."""
    data = cantilever()
    x = data.points[:, 0]
    order = np.argsort(x)
    R, U = data.mode_rotations[order], data.mode_shapes[order]
    h = L / N
    dv = (U[2:, 1] - U[:-2, 1]) / (2 * h)
    dw = (U[2:, 2] - U[:-2, 2]) / (2 * h)
    scale = np.maximum(np.abs(dv).max(axis=0), np.abs(dw).max(axis=0))  # per mode
    assert (np.abs(R[1:-1, 2] - dv).max(axis=0) < 0.02 * scale).all()
    assert (np.abs(R[1:-1, 1] + dw).max(axis=0) < 0.02 * scale).all()
    assert np.abs(R[1:-1, 2, 0] - dv[:, 0]).max() < 2e-4 * scale[0]  # first mode: (k h)^2 / 6 = 4e-5
    eta = np.arange(1.0, data.n_modes + 1.0)
    assert np.allclose(data.rotation(eta), data.mode_rotations @ eta)
    back = FlexibleBodyData.load(data.save(tmp_path / "b.npz"))
    assert np.array_equal(back.mode_rotations, data.mode_rotations)
    sub = fm.FlexibleBody("B", data, modes=[1, 3], stiffening="none").data
    assert np.array_equal(sub.mode_rotations, data.mode_rotations[:, :, [1, 3]])


def test_mirror_classes_of_a_beam_body_are_its_bending_planes_and_torsion():
    """Craig-Bampton beam (16 fixed-interface modes) split by the mirrors normal to y and z, the
    rotations mirrored as pseudovectors: (y -1, z +1) is the x-y bending (the full basis' modes that
    move along y, same frequencies), (y -1, z -1) the torsion, whose first frequency is the closed form
    (pi / 2L) sqrt(G J / (rho Ip)) within the 40 elements' discretization (1e-3)."""
    mesh = _mesh()

    def classes(parities, n):
        return lambda basis, K, M, m: symmetric_sub_basis(basis, M, m.points, parities, n)

    full = build_flexible_body(mesh, interfaces=["start"], n_modes=16, preloads=False, stresses=False,
                               geometric=False)
    inplane = build_flexible_body(mesh, interfaces=["start"], n_modes=16, preloads=False, stresses=False,
                                  geometric=False, basis_transform=classes({1: -1, 2: 1}, 3))
    along_y = np.abs(full.mode_shapes[:, 1]).max(axis=0) > 1e3 * np.abs(full.mode_shapes[:, 2]).max(axis=0)
    assert np.allclose(inplane.omega2, full.omega2[along_y][:3], rtol=1e-10)
    assert np.abs(inplane.mode_shapes[:, [0, 2]]).max() < 1e-10 * np.abs(inplane.mode_shapes).max()
    torsion = build_flexible_body(mesh, interfaces=["start"], n_modes=16, preloads=False, stresses=False,
                                  geometric=False, basis_transform=classes({1: -1, 2: -1}, 1))
    assert np.abs(torsion.mode_shapes).max() < 1e-10 * np.abs(torsion.mode_rotations).max()
    G = STEEL.E / (2 * (1 + STEEL.nu))
    ip = SECTION.iy + SECTION.iz
    w1 = math.pi / (2 * L) * math.sqrt(G * SECTION.j / (STEEL.rho * ip))
    assert math.sqrt(torsion.omega2[0]) == pytest.approx(w1, rel=1e-3)


def test_mirror_of_rotations_is_a_pseudovector_and_refused_without_the_dof_map():
    """A uniform rotation about z at every node (theta_z = 1) mirrors about the plane normal to y to
    theta_z = -1 (a pseudovector: the components other than the normal flip); about the plane normal
    to z it is kept. Shapes with rotations and no DOF map: the error names the fix."""
    mesh = _mesh()
    dm = mesh.dof_map
    u = np.zeros((mesh.n_dofs, 1))
    u[dm.rotations(dm.rotational_nodes)[:, 2]] = 1.0
    M = np.eye(mesh.n_dofs)
    perm = mirror_permutation(mesh.points, 1)
    assert mirror_operator(u, M, perm, 1, dm)[0, 0] == pytest.approx(-(N + 1))
    assert mirror_operator(u, M, mirror_permutation(mesh.points, 2), 2, dm)[0, 0] == pytest.approx(N + 1)
    with pytest.raises(ModelError, match="dof_map=mesh.dof_map"):
        mirror_operator(u, M, perm, 1)
