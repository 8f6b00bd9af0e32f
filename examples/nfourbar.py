"""IFToMM A02: the N-four-bar mechanism, passing its singular (flat) positions, with redundant 3-D joints.

Physics
-------
N four-bar windows of 2N + 1 links (IFToMM benchmark A02; N = 2 in the published problem): N + 1
cranks pivoted on the ground 1 m apart and N couplers joining their tips; every link is a slender
uniform bar of 1 kg and 1 m; gravity 9.81 m/s^2 along -y.  The cranks start vertical and the tip
B0 of the first crank moves at 1 m/s along +x.  Every window is a parallelogram, so all cranks turn
together: one degree of freedom, and the exact motion is a pendulum equation for the crank angle,
theta'' = -g m ((N + 1) L / 2 + N L) cos(theta) / ((N + 1) m L^2 / 3 + N m L^2), solved here by
SciPy to 1e-12 for comparison.  Whenever the cranks are horizontal the windows lie flat on the
ground line and the instantaneous number of DOF jumps from 1 to N + 1 (a singular position: the
windows could fold into anti-parallelograms).

In flexmb every pin is a 3-D ``Revolute`` about z: each closed window repeats three out-of-plane
conditions, which flexmb detects and drops at set-up (``sol.meta["redundant_constraints"]``: 3 N
equations); the sparse Newton solver then passes the flat positions on the parallelogram branch.
The published accuracy measure is the variation of the mechanical energy (zero exactly).

Run ``python examples/nfourbar.py``: prints the energy variation and the B0 error against the exact
motion (N = 2, h = 0.025 s, 10 s: about 5e-8 J and 4e-8 m) and writes
``results/examples/nfourbar.png``.  Validation case I2 runs N = 2 and N = 40.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.validation.cases import case_i2 as i2

L = i2.LEN


def exact_b0(t, n: int = 2):
    """B0 (len(t), 2) of the exact 1-DOF motion (case I2's reduced equation, DOP853 to 1e-12)."""
    theta = i2.exact_theta(t, n)
    return L * np.stack([np.cos(theta), np.sin(theta)], axis=-1)


def main(n: int = 2, t_end: float = 10.0, h: float = 0.025, p: int = 3,
         plot: str | Path | None = "results/examples/nfourbar.png") -> dict:
    # the model of validation case I2: cranks crank0..crank{n}, couplers coupler0..coupler{n-1}
    sol = fm.simulate(i2.nfourbar_model(n), t_end, h, p=p)
    b0 = sol.body("crank0").point((L / 2, 0.0, 0.0)).position[:, :2]
    ref = exact_b0(sol.t, n)
    E = sol.total_energy
    out = {"energy_error": float(np.abs(E - E[0]).max()),
           "b0_error": float(np.linalg.norm(b0 - ref, axis=1).max()),
           "b0_end": b0[-1].tolist(), "dependent_equations": len(sol.meta["redundant_constraints"])}
    if plot is not None:
        from matplotlib.figure import Figure

        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        fig = Figure(figsize=(7, 4), layout="constrained")
        ax = fig.subplots()
        ax.plot(sol.t, b0[:, 0], label="B0 x")
        ax.plot(sol.t, b0[:, 1], label="B0 y")
        ax.plot(sol.t, ref, "k:", lw=1)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("B0 [m]  (dotted: exact)")
        ax.legend()
        fig.savefig(plot, dpi=120)
    return out


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key}: {value}")
