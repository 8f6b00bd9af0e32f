"""IFToMM A01 simple pendulum: a point mass on a massless rod, released horizontally.

Physics
-------
A mass m = 1 kg on a massless rod L = 1 m hinged at the origin, gravity g = 9.81 m/s^2 along -y,
released from rest at (x, y) = (-1, 0).  The exact motion is given by Jacobi elliptic functions:
with theta the angle from the downward vertical, sin(theta/2) = k sn(K(k) - w0 t, k),
k = sin(pi/4), w0 = sqrt(g/L), and the period is 4 K(k)/w0 = 2.3678419476 s.  IFToMM publishes
P(0.5 s) = (-0.391049, -0.920370), P(1 s) = (0.986292, -0.165011), P(10 s) = (-0.275087,
-0.961419) with the tolerances 1e-1 (low) and 1e-3 (high accuracy).

Model
-----
The point mass is a rigid body with a tiny isotropic inertia J = 1e-9 m L^2 on a revolute joint
about z; J lengthens the period by sqrt(1 + J/(m L^2)) - 1 = 5e-10.  The default time element
p = 3 (nodal order 6) with h = 1/16 s lands exactly on the IFToMM times.

Run ``python examples/pendulum.py``: prints the results and writes ``results/examples/pendulum.png``
(``results/`` at the repository root is git-ignored).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import flexmb as fm

G, MASS, LENGTH = 9.81, 1.0, 1.0
IFTOMM = {0.5: (-0.391049, -0.920370), 1.0: (0.986292, -0.165011), 10.0: (-0.275087, -0.961419)}


def build_model(inertia: float = 1e-9) -> fm.Model:
    """The A01 pendulum: body ``"bob"``, revolute ``"pin"`` about z at the origin."""
    bob = fm.RigidBody("bob", mass=MASS, inertia=np.full(3, inertia * MASS * LENGTH ** 2), position=(-LENGTH, 0, 0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    return fm.Model([bob], [pin], [fm.Gravity((0, -G, 0))])


def main(t_end: float = 10.0, h: float = 1.0 / 16.0, p: int = 3, plot: str | Path | None = None) -> dict:
    """Simulate the pendulum.

    Parameters
    ----------
    t_end : float
        Final time [s].
    h : float
        Time-element length [s] (a power of two lands exactly on the IFToMM times).
    p : int
        Time-element order (1, 2, 3).
    plot : str or Path, optional
        Where to save a PNG of x(t), y(t).

    Returns
    -------
    dict
        ``x_end``, ``y_end`` [m]: the bob position at ``t_end``; ``period`` [s] from the zero
        crossings of x (nan if fewer than two); ``energy_error``: max |E - E0| / (m g L);
        ``max_iftomm_error`` [m]: largest coordinate error at the IFToMM times within the run.
    """
    sol = fm.simulate(build_model(), t_end, h, p=p)
    bob = sol.body("bob")
    x, y = bob.position[:, 0], bob.position[:, 1]
    E = sol.total_energy
    # zero crossings of x located on the cubic Hermite interpolant of node positions and velocities
    from scipy.interpolate import CubicHermiteSpline

    roots = CubicHermiteSpline(sol.t, x, bob.velocity[:, 0]).roots(extrapolate=False)
    roots = np.sort(roots[roots > 1e-9])
    period = float(2 * np.polyfit(np.arange(roots.size), roots, 1)[0]) if roots.size >= 2 else float("nan")
    errs = [max(abs(x[k] - xr), abs(y[k] - yr)) for tq, (xr, yr) in IFTOMM.items()
            for k in np.nonzero(np.isclose(sol.t, tq, atol=1e-12))[0]]
    if plot is not None:
        sol.plot("position", bodies=["bob"], components="xy", path=plot)
    return dict(x_end=float(x[-1]), y_end=float(y[-1]), period=period,
                energy_error=float(np.abs(E - E[0]).max() / (MASS * G * LENGTH)),
                max_iftomm_error=float(max(errs)) if errs else float("nan"))


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    results = main(plot=Path(__file__).resolve().parents[1] / "results" / "examples" / "pendulum.png")
    for key, value in results.items():
        print(f"{key:18s} {value:.10g}")
