"""X8: the X1 spin-up of a flexible blade with the blade meshed with shells instead of solids.

The X1 beam (L = 10 m, E = 7e10 Pa, nu = 0, rho = 3000 kg/m^3, section 0.0775 m in the plane of
rotation by 5.16 mm, A = 4e-4 m^2, I = 2e-7 m^4) as a flat blade of MITC4 shells in the plane of
rotation (:func:`flexmb.fe.mesh.structured_plate`, 40 x 2 quadrilaterals, thickness 5.16 mm): the
in-plane bending is the shells' membrane action (incompatible modes), the spin stretches the
membrane. A Craig-Bampton body through the public API with the root edge ``xmin`` as the rigid
reference interface (a line of shell nodes: the RBE2 ties their rotations, which defines the frame),
30 fixed-interface modes reduced to the first 4 in-plane bending modes, as X1 (a).

Stiffening: ``"preload"`` (the unit inertial preloads: membrane forces of the static centrifugal
and acceleration responses, on the DOF map) and ``"full"`` (cubic G and the quartic H of the shells'
membrane Green strain relaxed over the complement, issue 20 stage 3). Manoeuvre, hub, time step and
output: X1's.

Reference: the same spin-up with X1's hexahedron20 beam (20 x 1 x 1) and the same basis and
stiffening, computed here (X1 measured -0.57393 m "preload", -0.57338 m "full"), within 0.5 %; and
the published nonlinear result -0.5739 m near t = 6.8 s (Meijaard, see X1) within 1 %. Measured: the
shell blade -0.57359 m ("preload") and -0.57335 m ("full", geometric coupling weight 0.04) at
6.76 s; first in-plane frequency 3.8004 rad/s (Euler-Bernoulli 3.798).
"""
from __future__ import annotations

import math

import numpy as np

CASE = dict(
    id="X8",
    title="Spin-up of a shell-meshed blade (X1): extreme tip deflection against the solid blade",
    source=(
        "T. R. Kane, R. R. Ryan, A. K. Banerjee, J. Guidance 10 (1987) 139-151 (manoeuvre); extreme tip deflection "
        "-0.5739 m (J. P. Meijaard, nonlinear beam elements, see X1); reference: the same case with the hexahedron20 "
        "beam of X1, computed here"
    ),
    slow=True,
)


def shell_blade_data(nx: int = 40, ny: int = 2, n_modes: int = 30):
    """The X1 blade as ``nx`` x ``ny`` MITC4 shells in the plane of rotation (x-y), root edge ``xmin``
    the reference interface of a Craig-Bampton body."""
    from flexmb.fe.mesh import Material, structured_plate
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.validation.cases import case_x1 as x1

    hy = math.sqrt(12 * x1.INERTIA / x1.AREA)
    mesh = structured_plate((x1.L, hy), (nx, ny), thickness=x1.AREA / hy, origin=(0.0, -hy / 2, 0.0),
                            material=Material(E=x1.E, nu=0.0, rho=x1.RHO))
    return build_flexible_body(mesh, interfaces=["xmin"], n_modes=n_modes, stresses=False, name="x8_shell_blade")


def run(ctx):
    from flexmb.validation.cases import case_x1 as x1

    found = {}
    for label, data in (("shell", shell_blade_data()), ("solid", x1.spinup_beam_data(n_modes=30, tip=False))):
        bend = x1.dominant_modes(data, 1)[:4]
        for stiffening in ("preload", "full"):
            sol = x1.spinup(data, bend, stiffening)
            u = x1.tip_from_modes(sol, data, bend)
            k = int(np.argmin(u[:, 1]))
            found[label, stiffening] = (float(u[k, 1]), float(sol.t[k]), float(np.sqrt(data.omega2[bend[0]])))
            ctx.logger.info("X8 %s blade, %s: extreme %.5f m at %.3f s; first in-plane frequency %.5f rad/s",
                            label, stiffening, *found[label, stiffening])
        found[label] = found[label, "preload"]
    return [
        dict(name="extreme tip deflection [m], shell blade vs solid blade ('full')", value=found["shell", "full"][0],
             reference=found["solid", "full"][0], tolerance=0.005, kind="rel"),
        dict(name="extreme tip deflection [m], shell blade ('full') vs published", value=found["shell", "full"][0],
             reference=-0.5739, tolerance=0.01, kind="rel"),
        dict(name="extreme tip deflection [m], shell blade vs solid blade ('preload')", value=found["shell"][0],
             reference=found["solid"][0], tolerance=0.005, kind="rel"),
        dict(name="extreme tip deflection [m], shell blade vs published", value=found["shell"][0], reference=-0.5739,
             tolerance=0.01, kind="rel"),
        dict(name="time of the extreme [s], shell blade", value=found["shell"][1], reference=6.8, tolerance=0.1,
             kind="abs"),
        dict(name="first in-plane frequency [rad/s], shell vs solid blade", value=found["shell"][2],
             reference=found["solid"][2], tolerance=0.005, kind="rel"),
    ]
