"""Borri et al. fifteen-link chain (Example 2.1): a chain of bars released from three arches.

Physics
-------
Fifteen equal bars linked by spherical joints hang in the vertical y-z plane from points 1, 6, 11
and 16 (three arches of five links) and are released at t = 0, the chain staying attached at
point 1 only (Borri, Franchi, Mantegazza, "More than redundant coordinates formulation in rigid
multibody dynamics", Example 2.1; bar data lost, here steel rods 1 ft long, 1 in in diameter,
g = 32.174 ft/s^2).  Each arch starts in static equilibrium (tan of the outer slope = 2 x tan of
the inner slope, outer bars at 60 degrees), so at release the joint forces drop to nearly zero:
the links fall freely on the same parabola z0 - g t^2/2 until their neighbours towards the
support recall them in an almost impulsive way, which shows as sharp peaks of the reaction force
in the joints (joint 8, between bars 7 and 8, in the paper's Fig. 8).  The run is 3-D; the motion
stays in the y-z plane.

Run ``python examples/chain15.py``: writes ``results/examples/chain15_z.png`` (z of bars 2, 8,
13, the paper's Fig. 7) and ``results/examples/chain15_joint8.png`` (Fig. 8).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import flexmb as fm

from flexmb.catalog.rigid import G, LENGTH, MASS, N_BARS, I_A, I_T, RADIUS  # noqa: F401  (data of the model)
from flexmb.catalog.rigid import chain15_model as build_model  # noqa: F401
from flexmb.catalog.rigid import chain15_points as chain_points  # noqa: F401


def main(t_end: float = 1.5, h: float = 0.01, p: int = 3, plot_dir: str | Path | None = None) -> dict:
    """Simulate the falling chain.

    Returns
    -------
    dict
        ``peak_force_joint8`` [lbf] and ``peak_time`` [s] of the joint-8 reaction norm;
        ``z_bar13`` [ft], z of bar 13's centre of mass at ``t_end``; ``energy_error``
        (max |E - E0| over the run [ft lbf]); ``max_out_of_plane`` [ft].
    """
    sol = fm.simulate(build_model(), t_end, h, p=p)
    f8 = np.linalg.norm(sol.joint("P8").force, axis=1)
    k = int(np.argmax(f8))
    E = sol.total_energy
    if plot_dir is not None:
        plot_dir = Path(plot_dir)
        from matplotlib.figure import Figure

        ax = Figure(figsize=(7, 4), layout="constrained").subplots()
        for b in (2, 8, 13):
            ax.plot(sol.t, sol.body_position[:, b - 1, 2], label=f"bar {b}")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("z of the centre of mass [ft]")
        ax.legend()
        plot_dir.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(plot_dir / "chain15_z.png", dpi=120)
        sol.plot("joint_force_norm", joints=["P8"], path=plot_dir / "chain15_joint8.png")
    return dict(peak_force_joint8=float(f8[k]), peak_time=float(sol.t[k]),
                z_bar13=float(sol.body_position[-1, 12, 2]), energy_error=float(np.abs(E - E[0]).max()),
                max_out_of_plane=float(np.abs(sol.body_position[:, :, 0]).max()))


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    results = main(plot_dir=Path(__file__).resolve().parents[1] / "results" / "examples")
    for key, value in results.items():
        print(f"{key:18s} {value:.10g}")
