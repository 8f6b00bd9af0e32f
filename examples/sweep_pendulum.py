"""Parameter study: the IFToMM A01 pendulum swept over its rod length, against the exact period.

Physics
-------
A point mass on a massless rod of length L, released from rest with the rod horizontal, swings
with amplitude 90 degrees; its exact period is T(L) = 4 K(k) sqrt(L / g) with k = sin(pi/4) (K the
complete elliptic integral of the first kind, parameter m = k^2 = 1/2): 2.3678419 s for L = 1 m,
growing as sqrt(L).  The tiny inertia J = 1e-9 m L^2 of the "point" mass lengthens it by 5e-10.

Study
-----
``build(length)`` returns the model and its simulate settings: 0.8 T(L) of motion (two zero
crossings of x, at T/4 and 3T/4) in time elements of T/32, p = 3.  ``outputs`` measures the period
from the zero crossings of x (on the cubic Hermite interpolant of node positions and velocities)
and compares it with T(L).  The model is built on the worker; only these functions travel.

This file is also a study file for the command line::

    flexmb sweep examples/sweep_pendulum.py --grid "length=0.25:4:5:log" --out results/pendulum.parquet

Run ``python examples/sweep_pendulum.py`` (a 2-process LocalCluster): prints the table.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm

G, MASS = 9.81, 1.0
#: complete elliptic integral of the first kind K(m = 1/2) (scipy.special.ellipk(0.5))
K_HALF = 1.8540746773013719

#: the default grid of ``flexmb sweep`` for this file
parameters = {"length": [0.25, 0.5, 1.0, 2.0, 4.0]}


def exact_period(length: float) -> float:
    """Period [s] of the pendulum of rod length ``length`` [m] released horizontally."""
    return 4.0 * K_HALF * math.sqrt(length / G)


def build(length: float, steps_per_period: int = 32):
    """The A01 pendulum with rod ``length`` [m] (body ``"bob"``, revolute ``"pin"`` about z) and
    its simulate settings."""
    bob = fm.RigidBody("bob", mass=MASS, inertia=np.full(3, 1e-9 * MASS * length ** 2), position=(-length, 0, 0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    model = fm.Model([bob], [pin], [fm.Gravity((0, -G, 0))])
    T = exact_period(length)
    return model, {"t_end": 0.8 * T, "h": T / steps_per_period, "p": 3}


def outputs(sol, length: float, **_) -> dict:
    """``period`` [s] from the zero crossings of x, ``period_exact`` [s], ``period_error`` (relative),
    ``energy_error`` (max |E - E0| / (m g L))."""
    from scipy.interpolate import CubicHermiteSpline

    bob = sol.body("bob")
    x = bob.position[:, 0]
    roots = CubicHermiteSpline(sol.t, x, bob.velocity[:, 0]).roots(extrapolate=False)
    roots = np.sort(roots[roots > 1e-9])
    period = 2.0 * float(roots[1] - roots[0]) if roots.size >= 2 else float("nan")
    exact = exact_period(length)
    E = sol.total_energy
    return {"period": period, "period_exact": exact, "period_error": abs(period - exact) / exact,
            "energy_error": float(np.abs(E - E[0]).max() / (MASS * G * length))}


def main(lengths=(0.25, 0.5, 1.0, 2.0, 4.0), scheduler="local", workers: int | None = None, store=None) -> dict:
    """Sweep the rod length.

    Parameters
    ----------
    lengths : sequence of float
        Rod lengths [m].
    scheduler : str, Client or None
        ``"local"`` (a LocalCluster), None / ``"sync"`` (serial), or a scheduler address.
    workers : int, optional
        Worker processes of the local cluster (default: one per core).
    store : path, optional
        Parquet results directory (resumable).

    Returns
    -------
    dict
        ``table``: the DataFrame; ``max_period_error``: largest relative period error;
        ``n_ok``: runs that succeeded.
    """
    df = fm.sweep(build, {"length": list(lengths)}, outputs, scheduler=scheduler, workers=workers, store=store)
    return {"table": df, "max_period_error": float(df["period_error"].max()), "n_ok": int((df["status"] == "ok").sum())}


if __name__ == "__main__":  # needed: worker processes re-import this file
    results = main(workers=2)
    cols = ["length", "period", "period_exact", "period_error", "energy_error", "status", "wall_time", "newton_iterations"]
    print(results["table"][cols].to_string(index=False))
    print(f"max relative period error {results['max_period_error']:.2e}")
