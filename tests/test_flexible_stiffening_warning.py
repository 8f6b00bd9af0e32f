"""stiffening="full" with a basis whose own shapes carry the centrifugal stiffening (membrane/axial
shapes) is not validated (X1 spin-up measured 34 % too stiff, flexmb/flexible.py): say so loudly."""
from __future__ import annotations

import logging

import pytest

import flexmb as fm
from flexmb.fe.body_data import build_flexible_body
from flexmb.fe.structured import structured_box


def _data(interfaces):
    mesh = structured_box((1.0, 0.02, 0.02), (10, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return build_flexible_body(mesh, interfaces=interfaces, n_modes=4)


@pytest.mark.parametrize("interfaces, warned", [(["xmin"], False), (["xmin", "xmax"], True)])
def test_full_stiffening_warns_for_bases_with_membrane_shapes(caplog, interfaces, warned):
    data = _data(interfaces)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.FlexibleBody("bar", data, stiffening="full")
    hits = [r for r in caplog.records if "not validated" in r.getMessage()]
    assert bool(hits) == warned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        fm.FlexibleBody("bar", data, stiffening="preload")
    assert not [r for r in caplog.records if "not validated" in r.getMessage()]
