"""The relaxed quartic energy at rigid interfaces (issue 7, section 3 a).

A rigid (RBE2) interface ties its node set to a *linearized* rigid motion, whose Green-Lagrange
strain is not zero; the exact finite rotation of the face is a second-order field that only the
relaxation can supply.  The relaxation fields therefore carry the faces' exact turning
(flexmb.fe.reduction.stiffening.rigid_face_pair_displacements).  Held rigid, the element layer
next to the face kept a spurious membrane energy proportional to its thickness: the X1 spin-up with
the tip interface's stretch shape came out 34 % too stiff and the X3 rod 14 %.

Checked here on a cantilever with a rigid tip interface: once the stretch coordinate takes its
static value (the foreshortening), the remaining quartic stiffening of the first bending mode at a
tip deflection of 10 % of the length is negligible and the same on two meshes; the same holds for
the subset without the stretch shape (select_modes condenses H over the dropped modes); data built
before the fix is flagged when used with stiffening="full".
"""
from __future__ import annotations

import logging
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh.structured import structured_box
from flexmb.model.flexible import select_modes

L = 1.0


@lru_cache(maxsize=None)
def _data(nx, interfaces=("xmin", "xmax")):
    mesh = structured_box((L, 0.02, 0.02), (nx, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return build_flexible_body(mesh, interfaces=list(interfaces), n_modes=10)


def _dominant(data, axis):
    P = data.mode_shapes
    return np.flatnonzero((P[:, axis, :] ** 2).sum(axis=0) / (P ** 2).sum(axis=(0, 1)) > 0.5)


def _tangent_ratio(data, i, a):
    """Relative quartic stiffening 6 c4 q^2 / omega2 of bending mode i at a tip deflection of 0.1 L,
    after the stretch coordinate a (or, a None, nothing) takes its static value."""
    G, H, w2 = data.geometric_stiffness, data.quartic_stiffness, data.omega2
    c4 = H[i, i, i, i] / 8
    if a is not None:
        c3 = 0.5 * (G[a, i, i] + G[i, a, i] + G[i, i, a])
        c4 -= c3 ** 2 / (2 * w2[a])
    tip = np.flatnonzero(np.abs(data.points[:, 0] - L) < 1e-9)
    q = 0.1 * L / abs(data.mode_shapes[tip, 1, i].mean())
    return 6 * c4 * q ** 2 / w2[i]


def test_rigid_tip_interface_does_not_lock_the_membrane_relaxation():
    """Measured: 0.0139 / 0.0115 / 0.0114 for 8 / 16 / 32 elements (about 1 % of large-deflection
    stiffening at 10 % of L, converged); held rigid it was 4.8 / 2.5 / 1.5 (locking, falling with
    the thickness of the element layer at the face)."""
    ratios = []
    for nx in (8, 16):
        data = _data(nx)
        i, a = _dominant(data, 1)[0], _dominant(data, 0)[0]
        ratios.append(_tangent_ratio(data, i, a))
    assert all(0.0 <= r < 0.03 for r in ratios), ratios
    assert abs(ratios[0] - ratios[1]) < 0.25 * max(ratios), ratios


def test_subset_without_the_stretch_shape_keeps_the_relaxation():
    data = _data(8)
    i, a = _dominant(data, 1)[0], _dominant(data, 0)[0]
    bending = _dominant(data, 1)[:3]
    sub = select_modes(data, bending)
    relaxed = _tangent_ratio(data, i, a)
    assert abs(_tangent_ratio(sub, 0, None) - relaxed) < 0.05 * relaxed
    # merely sliced, the subset would hold the stretch energy in: hundreds of times stiffer
    sliced = replace(sub, quartic_stiffness=data.quartic_stiffness[np.ix_(bending, bending, bending, bending)])
    assert _tangent_ratio(sliced, 0, None) > 100 * relaxed


def test_data_built_before_the_fix_is_flagged(caplog):
    data = _data(8)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.FlexibleBody("bar", data, stiffening="full")
    assert not [r for r in caplog.records if "older flexmb" in r.getMessage()]
    old = replace(data, settings={k: v for k, v in data.settings.items() if k != "relaxation_interfaces"})
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.FlexibleBody("bar", old, stiffening="full")
    assert [r for r in caplog.records if "older flexmb" in r.getMessage() and "xmax" in r.getMessage()]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.FlexibleBody("bar", old, stiffening="preload")
    assert not [r for r in caplog.records if "older flexmb" in r.getMessage()]


def test_hex8_data_built_before_the_enhanced_stiffening_is_flagged(caplog):
    """hex8/wedge6 stiffening data built before G, H and the preloads came from the enhanced field's
    energy (its relaxed quartic term 0.79-0.93 of the elastica on one-layer meshes) carry no
    `incompatible_stiffening` setting: a stiffened body made from it warns; hex20 data never does."""
    mesh = structured_box((L, 0.02, 0.02), (8, 1, 1), "hexahedron", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4)
    assert data.settings["incompatible_stiffening"] == "enhanced"
    old = replace(data, settings={k: v for k, v in data.settings.items() if k != "incompatible_stiffening"})

    def flagged(d, stiffening):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="flexmb"):
            fm.FlexibleBody("bar", d, stiffening=stiffening)
        return [r for r in caplog.records if "hexahedron cells" in r.getMessage()]

    assert not flagged(data, "full")
    assert flagged(old, "full") and flagged(old, "preload")
    assert not flagged(old, "none")
    hex20 = _data(8)
    assert not flagged(replace(hex20, settings={k: v for k, v in hex20.settings.items()
                                                if k != "incompatible_stiffening"}), "full")
