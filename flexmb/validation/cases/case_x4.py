"""X4: flexible slider-crank at 150 rad/s with a slider of 0.0378126 kg (half the rod's nominal mass).

The X3 model (:mod:`flexmb.validation.cases.case_x3`: the mechanism, the rod's Craig-Bampton body,
the slider joints, the initial state, the step and the output are described there) with the crank
at 150 rad/s and the slider mass of the reference.  The slider's inertia loads the rod axially
through the ``wrist`` joint, which only ``stiffening="full"`` turns into geometric stiffness.
Measured first maxima of the mid-point deflection / L are in the docstring of case_x3.
"""
from __future__ import annotations

from flexmb.validation.cases.case_x3 import LINEAR_X4, OMEGA_X4, REF_X4, SLIDER_X4, case_metrics

CASE = dict(
    id="X4",
    title="Flexible slider-crank, 0.0378126 kg slider, 150 rad/s: first maximum of the rod mid-point deflection",
    source=(
        "J. P. Meijaard, Validation of flexible beam elements in dynamics programs, Nonlinear Dynamics 9 (1996) "
        "51-72 (0.01394 with 4 elements, 0.01391 with 2); linear modal body 0.0238 (issue 7: Exudyn "
        "ObjectFFRFreducedOrder)"
    ),
    slow=True,
)


def run(ctx):
    return case_metrics(ctx, "X4", OMEGA_X4, SLIDER_X4, REF_X4, LINEAR_X4, "x4_midpoint.png")
