"""C1: a rod falling at an angle onto a frictionless floor (e = 0 and e = 1).

A uniform rod (length L, mass m, central inertia J = m L^2 / 12) whose lower end touches the floor,
at the angle theta to it, with the velocity (u, -v) of its centre and the angular velocity omega
(about z).  The end's lever from the centre is r = (-L/2 cos theta, -L/2 sin theta); Newton's law
on the end's normal velocity v_n = -v + omega r_x gives the impulse

    P = -(1 + e) v_n / (1/m + r_x^2 / J),     v+ = -v + P / m,   omega+ = omega + r_x P / J,   u+ = u

(Wittenburg, Dynamics of Systems of Rigid Bodies, chapter 6; any text on planar impact).  Checked:
the jumps to 1e-12, the end's normal velocity after (0 for e = 0, -v_n for e = 1), the horizontal
momentum (no friction) and the energy balance T- = T+ + loss (loss 0 for e = 1) to round-off.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C1",
    title="Rod falling at an angle onto a frictionless floor: velocity jumps for e = 0 and e = 1",
    source="Closed form of the planar impact of a rigid rod (J. Wittenburg, Dynamics of Systems of Rigid Bodies, "
           "Teubner 1977, chapter 6: Newton's law with the impulse-momentum balance)",
    slow=False,
)

L, M, THETA, U, V, OMEGA = 1.2, 2.0, np.radians(35.0), 0.4, 3.0, 1.5


def model(e: float) -> fm.Model:
    J = M * L ** 2 / 12.0
    centre = (0.0, 0.5 * L * np.sin(THETA), 0.0)
    rod = fm.RigidBody("rod", mass=M, inertia=(1e-4, J, J), position=centre,
                       orientation={"axis": (0, 0, 1), "angle": THETA}, velocity=(U, -V, 0.0),
                       angular_velocity=(0.0, 0.0, OMEGA))
    floor = fm.Contact("floor", "ground", "rod", kind="point-plane", normal=(0, 1, 0), point_b=(-0.5 * L, 0, 0),
                       restitution=e)
    return fm.Model([rod], contacts=[floor])


def closed_form(e: float):
    J = M * L ** 2 / 12.0
    rx = -0.5 * L * np.cos(THETA)
    vn = -V + OMEGA * rx
    P = -(1.0 + e) * vn / (1.0 / M + rx ** 2 / J)
    return P, -V + P / M, OMEGA + rx * P / J, vn


def run(ctx):
    metrics = []
    for e in (0.0, 1.0):
        r = fm.impact(model(e))
        P, vy, om, vn = closed_form(e)
        tag = f"e = {e:g}"
        vel, w = r.velocity_after["rod"], r.angular_velocity_after["rod"]
        metrics += [
            dict(name=f"{tag}: normal impulse [N s]", value=r.contact_impulse["floor"], reference=P, tolerance=1e-12),
            dict(name=f"{tag}: centre velocity y after [m/s]", value=vel[1], reference=vy, tolerance=1e-12),
            dict(name=f"{tag}: angular velocity after [rad/s]", value=w[2], reference=om, tolerance=1e-12),
            dict(name=f"{tag}: centre velocity x after (no friction) [m/s]", value=vel[0], reference=U, tolerance=1e-12,
                 kind="abs"),
            dict(name=f"{tag}: end's normal velocity after [m/s]", value=float(r.outcome.v_plus[0]), reference=-e * vn,
                 tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: |T- - T+ - loss| / T-", value=abs(r.outcome.energy_residual) / r.kinetic_energy_before,
                 reference=0.0, tolerance=1e-13, kind="max"),
        ]
        if e == 1.0:
            metrics.append(dict(name=f"{tag}: energy lost / T-", value=abs(r.energy_lost) / r.kinetic_energy_before,
                                reference=0.0, tolerance=1e-13, kind="max"))
        ctx.logger.info("C1 %s: P = %.12g (closed form %.12g), omega+ = %.12g (%.12g)", tag, r.contact_impulse["floor"],
                        P, w[2], om)
    return metrics
