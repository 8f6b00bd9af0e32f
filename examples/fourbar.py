"""Planar four-bar linkage built with four revolute joints in 3-D (redundant constraints).

Physics
-------
A Grashof crank-rocker in the vertical x-y plane: ground pivots A = (0, 0) and D = (0.6, 0) m,
crank AB 0.2 m, coupler BC 0.6 m, rocker DC 0.5 m, steel flat bars 20 mm x 10 mm (1.57 kg/m),
gravity 9.81 m/s^2 along -y.  Released from rest with the crank at 60 degrees, it swings under
its weight; the crank, being the shortest link, can turn fully.

The mechanism has one degree of freedom, but four revolutes in space impose 4 x 5 = 20
equations on 3 x 6 = 18 coordinates: the loop closure repeats three out-of-plane conditions
(one translation along z and two rotations about x and y).  flexmb detects the dependent
equations at set-up; with ``SimulationOptions(redundant="resolve")`` (the default) it drops them
and names them in a log warning and in ``sol.meta["redundant_constraints"]`` (the motion is
unaffected, the out-of-plane reactions are one particular solution of an indeterminate
problem); with ``redundant="error"`` it refuses the model with a ``ModelError`` naming them.

Run ``python examples/fourbar.py``: writes ``results/examples/fourbar.png`` (bar angles).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import flexmb as fm

G = 9.81
A, D = np.array([0.0, 0.0]), np.array([0.6, 0.0])
CRANK, COUPLER, ROCKER = 0.2, 0.6, 0.5
KG_PER_M = 7850.0 * 0.02 * 0.01


def joint_points(theta_deg: float = 60.0):
    """A, B, C, D for a crank angle (C on the upper branch)."""
    th = math.radians(theta_deg)
    B = A + CRANK * np.array([math.cos(th), math.sin(th)])
    d = D - B
    dist = float(np.linalg.norm(d))
    a = (COUPLER ** 2 - ROCKER ** 2 + dist ** 2) / (2 * dist)
    h = math.sqrt(COUPLER ** 2 - a * a)
    C = B + a * d / dist + h * np.array([-d[1], d[0]]) / dist
    if C[1] < 0:
        C = B + a * d / dist - h * np.array([-d[1], d[0]]) / dist
    return A, B, C, D


def _bar(name: str, start, end) -> fm.RigidBody:
    """Flat bar from ``start`` to ``end`` (2-D), body x along the bar."""
    L = float(np.linalg.norm(end - start))
    m = KG_PER_M * L
    inertia = (m * (0.02 ** 2 + 0.01 ** 2) / 12, m * (L * L + 0.01 ** 2) / 12, m * (L * L + 0.02 ** 2) / 12)
    c = 0.5 * (start + end)
    R = fm.orientation(axis=(0, 0, 1), angle=math.atan2(end[1] - start[1], end[0] - start[0]))
    return fm.RigidBody(name, mass=m, inertia=inertia, position=(c[0], c[1], 0.0), orientation=R)


def build_model(theta_deg: float = 60.0) -> fm.Model:
    """Bodies crank, coupler, rocker; revolutes RA, RB, RC, RD about z."""
    A_, B, C, D_ = joint_points(theta_deg)
    bodies = [_bar("crank", A_, B), _bar("coupler", B, C), _bar("rocker", D_, C)]
    z = (0, 0, 1)
    joints = [fm.Revolute("RA", "ground", "crank", point=(*A_, 0), axis=z),
              fm.Revolute("RB", "crank", "coupler", point=(*B, 0), axis=z),
              fm.Revolute("RC", "coupler", "rocker", point=(*C, 0), axis=z),
              fm.Revolute("RD", "ground", "rocker", point=(*D_, 0), axis=z)]
    return fm.Model(bodies, joints, [fm.Gravity((0, -G, 0))])


def main(t_end: float = 2.0, h: float = 1.0 / 64.0, p: int = 3, plot: str | Path | None = None) -> dict:
    """Simulate the swinging four-bar.

    Returns
    -------
    dict
        ``n_redundant``: number of dependent constraint equations dropped; ``crank_angle_deg``:
        crank angle at ``t_end`` [deg] (continuous, from +x); ``energy_error``: max |E - E0| [J];
        ``refused``: whether ``redundant="error"`` refuses the model.
    """
    model = build_model()
    sol = fm.simulate(model, t_end, h, p=p)
    R = sol.body_rotation
    phi = np.degrees(np.unwrap(np.arctan2(R[:, :, 1, 0], R[:, :, 0, 0]), axis=0))
    try:
        fm.simulate(model, h, h, p=1, options=fm.SimulationOptions(redundant="error"))
        refused = False
    except fm.ModelError:
        refused = True
    if plot is not None:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(7, 4), layout="constrained").subplots()
        for i, name in enumerate(sol.body_names):
            ax.plot(sol.t, phi[:, i], label=name)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("bar angle from +x [deg]")
        ax.legend()
        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(plot, dpi=120)
    E = sol.total_energy
    return dict(n_redundant=len(sol.meta["redundant_constraints"]), crank_angle_deg=float(phi[-1, 0]),
                energy_error=float(np.abs(E - E[0]).max()), refused=refused)


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    results = main(plot=Path(__file__).resolve().parents[1] / "results" / "examples" / "fourbar.png")
    for key, value in results.items():
        print(f"{key:18s} {value}")
