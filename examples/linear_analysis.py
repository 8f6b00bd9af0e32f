"""Frequencies of a flexible mechanism at rest, and the Campbell diagram of a spinning flexible body.

1. A 1 m aluminium bar (2 cm x 2 cm, hex20, Craig-Bampton with the root face as reference and the
   tip face as a second interface, 4 fixed-interface modes) hangs from a hinge about z at its root,
   with a torsional spring of 5 N m/rad whose neutral angle is the horizontal position the bar is
   built in; a 0.5 kg rigid tip mass is welded to its tip face; gravity -y.  ``fm.equilibrium``
   finds where the spring and gravity balance (the bar droops by 59.4 deg and bends a little),
   ``fm.linearize`` gives the constrained linear equations there and ``fm.eigen`` the frequencies:
   the first is the swing of the whole bar (close to the rigid compound pendulum
   sqrt((k - m_eff g l sin phi) / I), 0.637 Hz both), the others the bar's bending.
   ``lin.state_space`` turns it into a control model: a motor torque at the hinge in, the tip's
   vertical displacement and the hinge's horizontal reaction out; its static gain against the rigid
   compound pendulum's ``L cos(phi) / (k - m_eff g l sin(phi))``.
2. The X1 strip of validation case X5 (10 m, 4 flapwise clamped modes) on a hub driven about z:
   ``fm.campbell`` sweeps the spin from 0 to 1 rad/s (gamma = Omega T up to 13.9) and gives the
   flapwise frequencies of the steady states in the turning frame, with the critical speeds where a
   frequency meets 1, 2 or 3 times the speed; at gamma = 6 the first is Wright et al.'s 7.3604 / T
   within 0.2 %.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.fe.mesh.structured import structured_box
from flexmb.fe.reduction.body_data import build_flexible_body

OUT = Path(__file__).resolve().parents[1] / "results" / "examples"
K_HINGE, TIP_MASS, G = 5.0, 0.5, 9.81


def mechanism() -> fm.Model:
    mesh = structured_box((1.0, 0.02, 0.02), (10, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4)
    bar = fm.FlexibleBody("bar", data)
    tip = fm.RigidBody("tip", mass=TIP_MASS, inertia=np.full(3, 1e-4), position=(1.0, 0.0, 0.0))
    return fm.Model([bar, tip], [fm.Revolute("hinge", "ground", ("bar", "xmin"), axis=(0, 0, 1), stiffness=K_HINGE),
                                 fm.Fixed("weld", ("bar", "xmax"), "tip")], [fm.Gravity((0, -G, 0))])


def main(speeds: int = 21, plot: bool = True) -> dict:
    # 1. a flexible mechanism at rest
    eq = fm.equilibrium(mechanism())
    res = fm.eigen(fm.linearize(eq), 4)
    phi = math.atan2(*eq.model.bodies[0].orientation[[1, 0], 0])
    m_bar = 2700.0 * 1.0 * 0.02 * 0.02
    I = m_bar / 3 + TIP_MASS  # about the hinge (bar and tip mass, rigid)
    f_rigid = math.sqrt((K_HINGE - (m_bar / 2 + TIP_MASS) * G * math.sin(phi)) / I) / (2 * math.pi)
    print(f"equilibrium: the bar droops {math.degrees(-phi):.2f} deg, hinge moment {eq.joint_moment('hinge')[2]:.4f} N m")
    print(res.table()[["frequency_Hz", "damping_ratio", "kind", "dominant"]].to_string())
    print(f"first frequency {res.frequency[0]:.5f} Hz; rigid compound pendulum {f_rigid:.5f} Hz")
    A, B, C, D = fm.linearize(eq).state_space(["hinge:mz"], [("tip", (0.0, 0.0, 0.0), "y"), "hinge:fx"])
    dc = (D - C @ np.linalg.solve(A, B))[:, 0]  # static gain of the motor torque
    dc_rigid = math.cos(phi) / (K_HINGE - (m_bar / 2 + TIP_MASS) * G * math.sin(phi))  # tip y per N m (L = 1 m)
    print(f"motor torque -> tip displacement {dc[0]:.5f} m/(N m) (rigid bar {dc_rigid:.5f}); "
          f"-> hinge reaction fx {dc[1]:.3e} N/(N m)")
    # 2. Campbell diagram of a spinning flexible strip
    from flexmb.validation.cases.case_l3 import strip_model
    from flexmb.validation.cases.case_x5 import strip_time_scale

    T = strip_time_scale()
    camp = fm.campbell(strip_model(4, 0.0), np.linspace(0.0, 1.0, speeds), n=3)
    print(camp.table().iloc[::max(1, speeds // 5)].to_string())
    print(camp.critical_speeds().to_string())
    eq6 = fm.equilibrium(strip_model(4, 6.0), steady=True)
    lam6 = fm.eigen(fm.linearize(eq6)).frequency[0] * 2 * math.pi * T
    print(f"strip at gamma = 6: lambda_1 = {lam6:.5f} (Wright et al. 7.3604)")
    if plot:
        OUT.mkdir(parents=True, exist_ok=True)
        camp.plot(OUT / "campbell_strip.png")
        res.plot(OUT / "mechanism_eigenvalues.png")
    return dict(droop_deg=math.degrees(-phi), f1=float(res.frequency[0]), f_rigid=f_rigid, dc_tip=float(dc[0]),
                dc_rigid=dc_rigid,
                f2=float(res.frequency[1]), lambda6=float(lam6), critical=len(camp.critical_speeds()))


if __name__ == "__main__":
    main()
