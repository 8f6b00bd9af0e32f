"""Parameter study: the flexible slider-crank (X3) swept over the crank speed.

Physics
-------
The rod of the slider-crank (examples/flexible_slider_crank.py, validation case X3) bends under
its own inertia, whose transverse part scales with Omega^2 (crank pin acceleration Omega^2 R, rod
angular acceleration ~ Omega^2 R / L): the quasi-static deflection grows as Omega^2.  The first
maximum also carries the rod's vibration, started from rest at the dead centre, whose period
(about 2 pi / 870 s, 0.43 rad of crank at 60 rad/s, 1.1 rad at 150 rad/s) sets where it falls, so
the dynamic amplification grows with Omega / omega_1 and the first maximum grows a little faster
than Omega^2; the axial force (also ~ Omega^2) stiffens the rod and slows that growth with
``stiffening="full"``.  Measured (serial, 2 rad of crank, 0.025 rad steps; wall times of 2 s per
run on a loaded 2-core machine)::

    omega [rad/s]      60        90        124.8     150
    "full"  first_max  0.001357  0.004161  0.009718  0.015179   first_max/omega^2 3.8e-7 5.1e-7 6.2e-7 6.7e-7
    "none"  first_max  0.001404  0.004472  0.011055  0.018065   first_max/omega^2 3.9e-7 5.5e-7 7.1e-7 8.0e-7

(rod with 4 in-plane bending shapes and the axial shape, the validated X3 model), i.e. first_max ~
omega^2.6 ("full") and omega^2.8 ("none", the linear modal rod, whose first maximum keeps growing
with the amplification): the gap between the two is the stiffening.

Study
-----
``build(omega, stiffening="full", slider_mass=0.0)`` returns the model of case_x3 and its simulate
settings: 2 rad of crank rotation (the first maximum is at 0.6-0.8 rad), p = 2, steps of 0.025 rad
of crank (h = 0.025 / Omega).  The rod's reduction is cached on disk by
:func:`flexmb.catalog.flexible.slider_crank_rod_data` (a crank speed does not change it; a Young's
modulus would).  ``outputs`` returns the first maximum, its crank angle and ``first_max`` / Omega^2.

This file is also a study file for the command line::

    flexmb sweep examples/sweep_slider_crank.py --grid "omega=60:150:4" --out results/crank.parquet

Run ``python examples/sweep_slider_crank.py`` (a 2-process LocalCluster): prints the table.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation.cases import case_x3 as x3

#: the default grid of ``flexmb sweep`` for this file [rad/s]
parameters = {"omega": [60.0, 90.0, 124.8, 150.0]}
#: crank rotation simulated [rad] and step [rad of crank]
ANGLE, STEP = 2.0, 0.025


def build(omega: float, stiffening: str = "full", slider_mass: float = 0.0):
    """The flexible slider-crank at crank rate ``omega`` [rad/s] and its simulate settings."""
    model = x3.slider_crank(float(omega), float(slider_mass), stiffening)
    return model, {"t_end": ANGLE / omega, "h": STEP / omega, "p": x3.P}


def outputs(sol, omega: float, **_) -> dict:
    """``first_max``: first maximum of the rod mid-point deflection / L; ``first_max_angle`` [rad];
    ``per_omega2`` = first_max / omega^2 [s^2/rad^2]."""
    d = x3.midpoint_deflection(sol, x3.rod_data())
    t1, d1 = x3.first_maximum(sol.t, d)
    return {"first_max": d1, "first_max_angle": float(omega) * t1, "per_omega2": d1 / float(omega) ** 2}


def main(omegas=(60.0, 90.0, 124.8, 150.0), stiffening: str = "full", scheduler="local", workers: int | None = None,
         store=None) -> dict:
    """Sweep the crank rate.

    Parameters
    ----------
    omegas : sequence of float
        Crank rates [rad/s].
    stiffening : {"full", "preload", "none"}
    scheduler, workers, store
        As for :func:`flexmb.sweep` (``None`` / ``"sync"``: serial).

    Returns
    -------
    dict
        ``table``: the DataFrame; ``n_ok``: runs that succeeded; ``growth``: the exponent of a
        power-law fit first_max ~ omega^growth.
    """
    df = fm.sweep(build, {"omega": list(omegas), "stiffening": [stiffening]}, outputs, scheduler=scheduler,
                  workers=workers, store=store)
    ok = df[df["status"] == "ok"]
    growth = float(np.polyfit(np.log(ok["omega"]), np.log(ok["first_max"]), 1)[0]) if len(ok) >= 2 else float("nan")
    return {"table": df, "n_ok": int(len(ok)), "growth": growth}


if __name__ == "__main__":  # needed: worker processes re-import this file
    results = main(workers=2)
    cols = ["omega", "first_max", "first_max_angle", "per_omega2", "status", "wall_time"]
    print(results["table"][cols].to_string(index=False))
    print(f"first maximum ~ omega^{results['growth']:.2f}")
