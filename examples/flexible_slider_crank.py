"""Flexible slider-crank (validation case X3): an elastic connecting rod at 124.8 rad/s.

Physics
-------
A rigid crank R = 0.1524 m driven at a constant Omega = 124.8 rad/s from angle 0 drives, through
an elastic steel connecting rod (L = 0.3048 m, round section d = 6.35 mm, E = 2.06843e11 Pa,
rho = 7834.56 kg/m^3), a massless slider on the x axis.  The rod's inertia bends it: the lateral
deflection of its mid-point from the chord between its ends grows in the first half turn and then
oscillates at the rod's first bending frequency (pinned-pinned, about 870 rad/s, 7 x Omega).
Meijaard's nonlinear beam elements give a first maximum of 0.00976 L; a linear modal rod gives
0.0110 L (the axial force in the rod, mostly from the crank pin's centripetal acceleration
Omega^2 R = 2374 m/s^2, stiffens it).

Model
-----
The model of :mod:`flexmb.validation.cases.case_x3`: a Craig-Bampton rod from the shipped hex20
mesh (:func:`flexmb.catalog.flexible.slider_crank_rod_data`, 4 in-plane bending shapes and the axial
shape, floating frame at the big end), the slider a rigid body of 1e-6 of the rod mass on a prismatic joint, a universal
joint at the big end and a spherical one at the small end (no redundant equations), p = 2 time
elements of 2e-4 s.  The output is the mid-point deflection
over L (case_x3.midpoint_deflection).  Measured first maxima (8 rad): 0.00972 with
``stiffening="full"`` (Meijaard's nonlinear beams 0.00976), 0.01004 ``"preload"`` (bending shapes
only), 0.01106 ``"none"`` (see case_x3's docstring).

The solution knows its model, which gives the mesh-level outputs: the
mid-point deflection from the chord between the rod's interfaces
(``BodyView.chord_deflection``), the rod's elastic energy, and a ParaView time series of the
deformed rod (``Solution.to_paraview``: displacement [m] and von Mises stress [Pa] on the hex20
mesh, the crank and the slider as axis triads).

Run ``python examples/flexible_slider_crank.py``: prints the first maximum and writes
``results/examples/flexible_slider_crank.png`` and ``results/examples/flexible_slider_crank/``
(open ``slider_crank.pvd`` in ParaView).
"""
from __future__ import annotations

from pathlib import Path

import flexmb as fm
from flexmb.validation.cases import case_x3 as x3


def main(stiffening: str = "full", angle: float = 8.0, omega: float = x3.OMEGA_X3, slider_mass: float = 0.0,
         h: float = x3.H, p: int = x3.P, plot: str | Path | None = None,
         paraview: str | Path | None = None) -> dict:
    """Simulate ``angle`` rad of crank rotation.

    Parameters
    ----------
    stiffening : {"full", "preload", "none"}
        The rod's stiffening model (:class:`flexmb.FlexibleBody`).
    angle : float
        Crank rotation [rad] (the first maximum is at about 0.6-0.7 rad).
    omega : float
        Crank rate [rad/s].
    slider_mass : float
        [kg]; 0 = massless.
    h, p
        Time-element length [s] and order.
    plot : str or Path, optional
        Where to save a PNG of the mid-point deflection / L against the crank angle.
    paraview : str or Path, optional
        Folder for the ParaView files (every 4th time, displacements x 10).

    Returns
    -------
    dict
        ``first_max``: first maximum of the mid-point deflection / L; ``first_max_angle`` [rad]: the
        crank angle there; ``max_abs``: largest |deflection| / L over the run; ``slider_end`` [m];
        ``max_elastic_energy`` [J] of the rod; ``pvd``: the ParaView collection (None if not written).
    """
    data = x3.rod_data()  # Craig-Bampton rod from the shipped hex20 mesh (cached)
    model = x3.slider_crank(omega, slider_mass, stiffening, data)
    sol = fm.simulate(model, angle / omega, h, p=p)
    rod = sol.body("rod")
    # mid-point (L/2, 0, 0) from the deformed chord big end -> small end, signed along z x chord
    d = rod.chord_deflection((x3.L / 2, 0.0, 0.0), ("big_end", "small_end"), axis=(0, 0, 1)) / x3.L
    t1, d1 = x3.first_maximum(sol.t, d)
    pvd = None if paraview is None else sol.to_paraview(paraview, every=4, scale=10.0, stem="slider_crank")
    if plot is not None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4))
        ax.plot(omega * sol.t, d, label=f"flexmb, stiffening={stiffening!r}")
        ax.axhline(x3.REF_X3, color="k", lw=0.8, ls="--", label=f"Meijaard first maximum {x3.REF_X3}")
        ax.set_xlabel("crank angle [rad]")
        ax.set_ylabel("rod mid-point deflection / L")
        ax.set_title(f"flexible slider-crank, {omega} rad/s")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(plot, dpi=120)
        plt.close(fig)
    return dict(first_max=d1, first_max_angle=omega * t1, max_abs=float(abs(d).max()),
                slider_end=float(sol.body("slider").position[-1, 0]),
                max_elastic_energy=float(rod.elastic_energy.max()), pvd=pvd)


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    folder = Path(__file__).resolve().parents[1] / "results" / "examples"
    results = main(plot=folder / "flexible_slider_crank.png", paraview=folder / "flexible_slider_crank")
    for key, value in results.items():
        print(f"{key:18s} {value}" if key == "pvd" else f"{key:18s} {value:.6g}")
