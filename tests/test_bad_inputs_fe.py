"""The bad-input corpus of the FE side and the flexible-body model: options that contradict each
other, wrong types and values of every public argument of build_flexible_body and FlexibleBody,
and damaged FlexibleBodyData files. Each gives a flexmb error naming the input, the value and the
fix (never a numpy/scipy traceback, never an option dropped without a word)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.mesh import Material, structured_box
from flexmb.fe.reduction.body_data import build_flexible_body

STEEL = Material(210e9, 0.3, 7850.0, "steel")
#: words of a message that tells the user what to do
FIX = re.compile(r"\b(give|use|must|pass|drop|remove|write|rebuild|re-run|fix|check)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def bar():
    return structured_box((1.0, 0.1, 0.1), (4, 1, 1), "hexahedron", material=STEEL)


@pytest.fixture(scope="module")
def bar_data(bar):
    return build_flexible_body(bar, interfaces=["xmin", "xmax"], n_modes=2, preloads=False, stresses=False)


# --------------------------------------------------------------------------------------------------
# conflicting options: an option that cannot take effect is an error

CONFLICTS = [
    (dict(geometric=False, quartic="relaxed"), ("quartic='relaxed'", "geometric=False", "quartic=False")),
    (dict(geometric=False, quartic=True), ("quartic=True", "geometric=True")),
    (dict(geometric=False, quartic="raw"), ("quartic='raw'", "geometric=False")),
    (dict(interfaces=["xmin", "xmax"], method="free-free", reference="xmax"), ("reference='xmax'", "method='free-free'", "mean-axis")),
    (dict(reference="xmin"), ("reference='xmin'", "no `interfaces`")),
    (dict(interfaces=["xmin"], method="free-free", static_modes="xmax"), ("static_modes", "Craig-Bampton")),
    (dict(static_modes="xmax"), ("static_modes",)),
    (dict(interface_kind="average"), ("interface_kind='average'", "without `interfaces`")),
    (dict(method="craig-bampton"), ("method='craig-bampton'", "interfaces")),
]


@pytest.mark.parametrize("kwargs, parts", CONFLICTS, ids=[",".join(k) for k, _ in CONFLICTS])
def test_conflicting_build_options_are_errors(bar, kwargs, parts):
    with pytest.raises(ModelError) as info:
        build_flexible_body(bar, n_modes=2, preloads=False, stresses=False, **kwargs)
    msg = str(info.value)
    assert "build_flexible_body" in msg and FIX.search(msg), msg
    for part in parts:
        assert part in msg, msg


def test_geometric_false_alone_skips_the_quartic_term(bar):
    data = build_flexible_body(bar, n_modes=2, geometric=False, preloads=False, stresses=False)
    assert data.settings["quartic"] is None and data.geometric_stiffness is None and data.quartic_stiffness is None
    assert build_flexible_body(bar, n_modes=2, preloads=False, stresses=False).settings["quartic"] == "relaxed"


def test_damping_of_a_body_without_modes_is_an_error(bar_data):
    with pytest.raises(ModelError, match=r"FlexibleBody 'b': damping=0.02 for a body without modes.*drop damping"):
        fm.FlexibleBody("b", bar_data, modes=[], damping=0.02)
    assert fm.FlexibleBody("b", bar_data, modes=[]).n_modes == 0
