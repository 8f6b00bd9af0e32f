"""Borri et al. bipendulum (Examples 1.1 and 1.2): two bars, spinning start, US units.

Physics
-------
Two equal bars hang from the origin, bar 1 from (0, 0, 0) to (0, -L, 0), bar 2 from (0, -L, 0)
to (0, -2L, 0), gravity g = 32.174 ft/s^2 along -z; at t = 0 both turn rigidly at 4 rad/s about
the vertical z axis (Borri, Franchi, Mantegazza, "More than redundant coordinates formulation in
rigid multibody dynamics", Example 1; the paper's bar data are lost, so the bars here are steel
rods 1 ft long and 1 in in diameter: m = 0.083065 slug, I = 6.958e-3 slug ft^2 transverse and
7.21e-5 slug ft^2 about the axis).

* Example 1.1: spherical joints at the origin and between the bars.  Weight, centrifugal and
  gyroscopic forces give a complex 3-D motion; the energy and the angular momentum about the
  vertical axis through the origin are exact invariants (gravity is parallel to that axis and the
  support reaction acts on it).
* Example 1.2: bar 1 is driven about z at a constant 4 rad/s; bar 2 hangs from bar 1's tip on a
  hinge with axis x at t = 0 (fixed in bar 1) and a torsional damper c.  Bar 2 swings down and
  settles where the effective potential of the rotating frame is stationary,
  V(beta) = m g z_G(beta) - Omega^2 I_z(beta)/2 (I_z: moment of inertia of bar 2 about the spin
  axis), here at a droop angle beta* = 55.62 degrees below the horizontal.

Run ``python examples/bipendulum.py``: runs both examples and writes
``results/examples/bipendulum_xy.png`` (x-y cross plot of the centres of mass, the paper's
Fig. 3) and ``results/examples/bipendulum_droop.png`` (z of bar 2, Fig. 4).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import flexmb as fm

G = 32.174  # ft/s^2
OMEGA = 4.0  # rad/s
LENGTH = 1.0  # ft
RADIUS = 0.5 / 12.0  # ft (1 in diameter)
MASS = 490.0 / G * math.pi * RADIUS ** 2 * LENGTH  # slug (steel, 490 lbf/ft^3)
I_T = MASS * (LENGTH ** 2 / 12 + RADIUS ** 2 / 4)  # slug ft^2, about a transverse axis
I_A = MASS * RADIUS ** 2 / 2  # slug ft^2, about the bar axis


def _bar(name: str, y0: float, y1: float) -> fm.RigidBody:
    """A bar along -y from y0 to y1 (body y axis along the bar), spinning about z at OMEGA."""
    c = np.array([0.0, 0.5 * (y0 + y1), 0.0])
    R = np.diag([-1.0, -1.0, 1.0])  # body y along -y, z up
    om = np.array([0.0, 0.0, OMEGA])
    return fm.RigidBody(name, mass=MASS, inertia=(I_T, I_A, I_T), position=c, orientation=R,
                        velocity=np.cross(om, c), angular_velocity=om)


def build_model(example: str = "1.1", damping: float = 0.1) -> fm.Model:
    """Example ``"1.1"`` (two spherical joints) or ``"1.2"`` (driven bar 1, damped hinge)."""
    bodies = [_bar("bar1", 0.0, -LENGTH), _bar("bar2", -LENGTH, -2 * LENGTH)]
    if example == "1.1":
        joints = [fm.Spherical("O", "ground", "bar1", point=(0, 0, 0)),
                  fm.Spherical("A", "bar1", "bar2", point=(0, -LENGTH, 0))]
    elif example == "1.2":
        joints = [fm.Revolute("drive", "ground", "bar1", point=(0, 0, 0), axis=(0, 0, 1), angular_velocity=OMEGA),
                  fm.Revolute("hinge", "bar1", "bar2", point=(0, -LENGTH, 0), axis=(1, 0, 0), damping=damping)]
    else:
        raise ValueError(f"example={example!r}: use '1.1' or '1.2'")
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -G))], units="ft-slug-s")


def equilibrium_angle() -> float:
    """Droop angle beta* of bar 2 in Example 1.2 (stationary point of the effective potential) [rad]."""
    from scipy.optimize import brentq

    def dV(b):
        dIz = 2 * MASS * (LENGTH + 0.5 * LENGTH * np.cos(b)) * (-0.5 * LENGTH * np.sin(b)) + (I_A - I_T) * np.sin(2 * b)
        return -0.5 * MASS * G * LENGTH * np.cos(b) - 0.5 * OMEGA ** 2 * dIz

    return float(brentq(dV, 0.0, 0.5 * np.pi, xtol=1e-15))


def main(example: str = "1.1", t_end: float = 2.0, h: float = 1.0 / 32.0, p: int = 3, damping: float = 0.1,
         plot: str | Path | None = None) -> dict:
    """Simulate Example 1.1 or 1.2.

    Returns
    -------
    dict
        Example 1.1: ``energy_error`` (max |E - E0| / (m g L)), ``hz_error`` (max |Hz - Hz0| / |Hz0|,
        node velocities), ``max_bar_angle_deg`` (largest angle between the bars).
        Example 1.2: ``droop_angle`` (beta at ``t_end`` [rad]), ``equilibrium_angle`` (beta* [rad]),
        ``z_bar2`` (z of bar 2's centre of mass at ``t_end`` [ft]).
    """
    model = build_model(example, damping)
    sol = fm.simulate(model, t_end, h, p=p)
    X, V, R, W = sol.body_position, sol.body_velocity, sol.body_rotation, sol.body_angular_velocity
    if example == "1.1":
        J0 = np.diag([I_T, I_A, I_T])
        H = np.sum(np.cross(X, MASS * V) + np.einsum("tbij,jk,tblk,tbl->tbi", R, J0, R, W), axis=1)
        E = sol.total_energy
        e1, e2 = R[:, 0, :, 1], R[:, 1, :, 1]
        out = dict(energy_error=float(np.abs(E - E[0]).max() / (MASS * G * LENGTH)),
                   hz_error=float(np.abs(H[:, 2] - H[0, 2]).max() / abs(H[0, 2])),
                   max_bar_angle_deg=float(np.degrees(np.arccos(np.clip(np.sum(e1 * e2, axis=1), -1, 1))).max()))
        if plot is not None:
            from matplotlib.figure import Figure

            ax = Figure(figsize=(5.5, 5.5), layout="constrained").subplots()
            for i in range(2):
                ax.plot(X[:, i, 0], X[:, i, 1], label=f"bar {i + 1} centre of mass")
            ax.set_aspect("equal")
            ax.set_xlabel("x [ft]")
            ax.set_ylabel("y [ft]")
            ax.legend()
            Path(plot).parent.mkdir(parents=True, exist_ok=True)
            ax.figure.savefig(plot, dpi=120)
        return out
    # Example 1.2: droop angle from bar 2's centre of mass relative to bar 1's tip
    tip = X[:, 0] + R[:, 0] @ np.array([0.0, 0.5 * LENGTH, 0.0])
    e1 = tip / np.linalg.norm(tip, axis=1)[:, None]
    d = X[:, 1] - tip
    beta = np.arctan2(-d[:, 2], np.sum(d * e1, axis=1))
    if plot is not None:
        sol.plot("position", bodies=["bar2"], components="z", path=plot)
    return dict(droop_angle=float(beta[-1]), equilibrium_angle=equilibrium_angle(), z_bar2=float(X[-1, 1, 2]))


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    out = Path(__file__).resolve().parents[1] / "results" / "examples"
    r1 = main("1.1", plot=out / "bipendulum_xy.png")
    r2 = main("1.2", t_end=5.0, damping=0.2, plot=out / "bipendulum_droop.png")
    for key, value in {**r1, **r2}.items():
        print(f"{key:18s} {value:.10g}")
