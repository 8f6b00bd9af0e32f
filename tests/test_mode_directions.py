"""Modes by direction (flexmb.fe.reduction.mode_directions, FlexibleBody(modes={...})): shares of the
motion along the axes (exact for the consistent mass), changes of modal coordinates that keep every
modal quantity consistent, degenerate pairs aligned, and the in-plane selection of a square-section
rod that keeps the full in-plane static deflection (cantilever: P L^3 / 3 EI)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.elements.assembly import assemble_scalar_mass
from flexmb.fe.reduction import align_modes, direction_fractions, modes_along, rotate_modes
from flexmb.fe.reduction.data_checks import check_data
from flexmb.fe.reduction.mode_directions import mode_clusters
from flexmb.fe.reduction.stiffening import modal_strain_energy

STEEL = fm.Material(210e9, 0.3, 7850.0, "steel")
L, B = 0.3, 0.008  # the X3 rod: 0.3 m, 8 x 8 mm


@lru_cache(maxsize=None)
def rod():
    """Square-section steel rod along x, hex20 24 x 2 x 2, Craig-Bampton: root face the reference
    (clamped), tip face a second interface; pairs of y/z bending modes of equal frequency."""
    mesh = fm.structured_box((L, B, B), (24, 2, 2), "hexahedron20", origin=(0, -B / 2, -B / 2), material=STEEL)
    return mesh, fm.build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=6, stresses=True)


def mixed(data):
    """The data with every degenerate pair aligned with y and z, then turned by 40 degrees (59 / 41 %):
    what an eigensolver may return."""
    data = align_modes(data, along="y")
    Q = np.eye(data.n_modes)
    c, s = np.cos(np.radians(40)), np.sin(np.radians(40))
    for pair in mode_clusters(data.omega2):
        if pair.size == 2:
            Q[np.ix_(pair, pair)] = [[c, -s], [s, c]]
    return rotate_modes(data, Q)


def tip_deflection(data, force):
    """Static deflection of the tip interface's point under a tip force (3,) [N], clamped root: q = F / omega2."""
    T = data.interface("xmax").modal_map[:3]
    return T @ ((T.T @ force) / data.omega2)


def test_direction_shares_are_the_consistent_mass_kinetic_energy():
    mesh, data = rod()
    Ms = assemble_scalar_mass(mesh)
    phi = data.mode_shapes  # (n, 3, nm)
    direct = np.stack([np.einsum("nk,nm,mk->k", phi[:, a], Ms.toarray(), phi[:, a]) for a in range(3)], axis=1)
    shares = direction_fractions(data)
    np.testing.assert_allclose(shares, direct, atol=1e-10)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, atol=1e-10)
    np.testing.assert_allclose(direction_fractions(data, plane="xy"), shares[:, 0] + shares[:, 1], atol=1e-12)
    np.testing.assert_allclose(direction_fractions(data, along=(0, 3, 0)), shares[:, 1], atol=1e-12)


def test_a_rotation_of_modal_coordinates_changes_no_physics():
    """Shapes, interface maps, invariants, G, H, preloads, stresses move together: the displacement
    field, the strain energy (cubic and quartic terms) and the residual preload energy at q are those
    of the original data at Q q'."""
    _, data = rod()
    rng = np.random.default_rng(1)
    Q = np.eye(data.n_modes)
    for pair in mode_clusters(data.omega2):
        if pair.size > 1:
            Q[np.ix_(pair, pair)] = np.linalg.qr(rng.normal(size=(pair.size, pair.size)))[0]
    rot = rotate_modes(data, Q)
    check_data(rot, "rotated")
    q = 1e-4 * rng.normal(size=data.n_modes)
    qr = Q.T @ q
    np.testing.assert_allclose(rot.displacement(qr), data.displacement(q), atol=1e-15)
    e0 = modal_strain_energy(q, np.diag(data.omega2), data.geometric_stiffness, data.quartic_stiffness)
    e1 = modal_strain_energy(qr, np.diag(rot.omega2), rot.geometric_stiffness, rot.quartic_stiffness)
    assert e1 == pytest.approx(e0, rel=1e-9)
    np.testing.assert_allclose(rot.invariants.modal_mass, np.eye(data.n_modes), atol=1e-12)
    for c in range(12):
        assert qr @ rot.preload_stiffness_residual[c] @ qr == pytest.approx(q @ data.preload_stiffness_residual[c] @ q,
                                                                          rel=1e-9, abs=1e-30)
    np.testing.assert_allclose(rot.interface("xmax").modal_map @ qr, data.interface("xmax").modal_map @ q, atol=1e-15)
    np.testing.assert_allclose(rot.stress(qr), data.stress(q), rtol=1e-9, atol=1e-6)
    with pytest.raises(ModelError, match="orthogonal"):
        rotate_modes(data, 2 * np.eye(data.n_modes))


def test_mixed_pairs_are_aligned_before_they_are_selected():
    _, data = rod()
    bad = mixed(data)
    pairs = [p for p in mode_clusters(bad.omega2) if p.size == 2]
    assert len(pairs) >= 4  # four bending pairs in y/z below the torsion and axial modes
    raw = direction_fractions(bad)
    for p in pairs:
        assert 0.55 < raw[p, 1].max() < 0.65  # 59 / 41 %: no pure y shape in a mixed pair
    good = align_modes(bad, plane="xy")
    shares = direction_fractions(good)
    for p in pairs:  # one shape moves in the x-y plane, the other has no y motion (to the Poisson section warping)
        assert np.sort(shares[p, 2])[0] < 1e-3 and np.sort(shares[p, 1])[0] < 1e-3, shares[p]  # anticlastic: 4e-9..5e-5
    assert good.settings["aligned"]["dropped_coupling"] < 1e-8  # the pairs are degenerate to round-off
    np.testing.assert_allclose(np.sort(good.omega2), np.sort(data.omega2), rtol=1e-7)  # pairs split by 1e-8


def test_in_plane_selection_keeps_the_in_plane_deflection():
    """Tip load P = 1 N along y on the clamped rod: the in-plane modes alone give the full basis's y
    deflection (and beam theory P L^3 / 3 EI within 1 %) and none along z. Keeping by hand the modes
    whose share along y exceeds one half of the mixed pairs loses part of it."""
    _, data = rod()
    bad = mixed(data)
    P = np.array([0.0, 1.0, 0.0])
    full = tip_deflection(bad, P)
    beam = L**3 / (3 * STEEL.E * B**4 / 12)
    assert full[1] == pytest.approx(beam, rel=0.01)
    body = fm.FlexibleBody("rod", bad, modes={"plane": "xy"})
    sel = tip_deflection(body.data, P)
    assert sel[1] == pytest.approx(full[1], rel=1e-9) and abs(sel[2]) < 1e-9 * abs(sel[1])
    assert body.n_modes == 6 and np.all(direction_fractions(body.data, plane="xy") > 0.99)
    by_hand = np.flatnonzero(direction_fractions(bad)[:, 1] > 0.5)
    wrong = tip_deflection(fm.FlexibleBody("rod", bad, modes=by_hand).data, P)
    assert abs(wrong[1] / full[1] - 1) > 0.2
    along_y = fm.FlexibleBody("rod", bad, modes={"along": "y", "min_fraction": 0.9})
    assert tip_deflection(along_y.data, P)[1] == pytest.approx(full[1], rel=1e-9)  # the axial mode is not needed
    assert np.array_equal(modes_along(align_modes(bad, along="z"), along="z", min_fraction=0.9),
                          np.flatnonzero(direction_fractions(align_modes(bad, along="z"))[:, 2] >= 0.9))


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"plane": "xy", "along": "y"}, "give one of along="),
        ({}, "give one of along="),
        ({"plane": "xw"}, "plane='xw'"),
        ({"along": (0, 0, 0)}, "non-zero vector"),
        ({"along": "y", "min_fraction": 1.5}, "min_fraction=1.5"),
        ({"along": "y", "rtol": -1}, "rtol=-1"),
        ({"plan": "xy"}, r"unknown key\(s\) \['plan'\]"),
        ({"along": "y", "min_fraction": 1.0}, "keeps no mode"),
    ],
)
def test_bad_direction_selections_name_the_fix(spec, message):
    _, data = rod()
    with pytest.raises(ModelError, match=message) as info:
        fm.FlexibleBody("rod", data, modes=spec)
    assert "FlexibleBody 'rod': modes=" in str(info.value)
