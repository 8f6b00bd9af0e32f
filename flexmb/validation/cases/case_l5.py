"""L5: Laval (Jeffcott) rotor with a gyroscopic disk: forward and backward whirl against the spin speed.

Model: a hub driven about z at the speed ``Omega`` (revolute drive to the ground) carries a rigid disk
(mass m, transverse inertia J_t, polar J_p > J_t) on four springs of stiffness k from hub points to the
disk's axis points at z = +-a (lateral stiffness 2 k, tilt stiffness k_t = 2 k a^2).  In the fixed
frame the lateral whirls are at sqrt(2 k / m), forward and backward, and the tilt whirls at

    omega_F,B = +-g + sqrt(g^2 + k_t / J_t),   g = J_p Omega / (2 J_t)

(the gyroscopic disk stiffens the forward whirl and softens the backward one); critical speeds
(order 1, fixed frame): sqrt(2 k / m) forward and backward, the backward tilt at
sqrt(k_t / (J_t + J_p)), no forward tilt critical speed (J_p > J_t).

``fm.campbell`` over 0 .. 60 rad/s (61 speeds) computes the steady states in the turning frame; each
mode gets its whirl label in the fixed frame (flexmb.linear.campbell.whirl) and its fixed-frame
frequency.  Checked: at every speed > 0 the labels sort the four whirls into two forward and two
backward ones whose fixed-frame frequencies are the closed forms (1e-9; zero modes undecidable), and
the critical speeds from ``critical_speeds(frame="fixed")`` (lateral exact, tilt 1e-3 by linear
interpolation over 1 rad/s).  And through ``simulate``: the same disk on a housing held by the springs,
spun at 40 rad/s by a drive; the frozen-time linearization of the run at t = 0.1 s
(``fm.linearize(sol, t=0.1)``) has the four fixed-frame whirls (1e-8).
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm

CASE = dict(
    id="L5",
    title="Laval rotor with a gyroscopic disk: whirl labels, fixed-frame frequencies and critical speeds (campbell)",
    source="Jeffcott (Laval) rotor with a gyroscopic disk, closed form (e.g. M. Lalanne, G. Ferraris, Rotordynamics "
           "Prediction in Engineering, Wiley 1998, ch. 2); a simulate run linearized along its trajectory",
    slow=False,
)

M_DISK, JT, JP, K2, A, ELL = 2.0, 0.02, 0.035, 500.0, 0.1, 0.3


def springs(body: str, base: str = "ground"):
    """Four springs of stiffness ``K2`` from ``base`` points along x and y (length ``ELL``) to ``body``'s
    axis points at z = +-A: lateral stiffness 2 K2, tilt stiffness 2 K2 A^2 about x and y."""
    out = []
    for zs in (A, -A):
        out.append(fm.SpringDamper(f"x{zs:+}", base, body, (-ELL, 0, zs), (0, 0, zs), stiffness=K2, point_frame="inertial"))
        out.append(fm.SpringDamper(f"y{zs:+}", base, body, (0, -ELL, zs), (0, 0, zs), stiffness=K2, point_frame="inertial"))
    return out


def laval_rotor(speed: float = 0.0) -> fm.Model:
    """The disk on its springs from a hub driven about z at ``speed`` [rad/s] (the turning-frame model)."""
    hub = fm.RigidBody("hub", mass=1.0, inertia=(0.01, 0.01, 0.02))
    disk = fm.RigidBody("disk", mass=M_DISK, inertia=(JT, JT, JP))
    drive = fm.Revolute("drive", "ground", "hub", point=(0, 0, 0), axis=(0, 0, 1), angular_velocity=speed)
    return fm.Model([hub, disk], [drive], springs("disk", "hub"))


def fixed_frame_whirls(W: float, m: float = M_DISK, jt: float = JT) -> dict:
    """Fixed-frame whirl speeds [rad/s], sorted: ``forward`` and ``backward`` (lateral and tilt)."""
    wl = math.sqrt(2 * K2 / m)
    g, kt = JP * W / (2 * jt), 2 * K2 * A**2
    root = math.sqrt(g * g + kt / jt)
    return dict(forward=sorted([wl, g + root]), backward=sorted([wl, -g + root]))


def driven_on_a_housing(W: float = 40.0, t_end: float = 0.2, h: float = 0.002):
    """A simulate run: the disk spun at ``W`` by a revolute drive on a housing (1 kg, 0.01 kg m^2
    transverse) held by the springs; returns ``(solution, whirls)`` (the fixed-frame closed form with the
    housing's mass and transverse inertia added)."""
    housing = fm.RigidBody("housing", mass=1.0, inertia=(0.01, 0.01, 0.015))
    disk = fm.RigidBody("disk", mass=M_DISK, inertia=(JT, JT, JP), angular_velocity=(0, 0, W))
    drive = fm.Revolute("drive", "housing", "disk", point=(0, 0, 0), axis=(0, 0, 1), angular_velocity=W)
    sol = fm.simulate(fm.Model([housing, disk], [drive], springs("housing")), t_end, h, p=2)
    return sol, fixed_frame_whirls(W, m=M_DISK + 1.0, jt=JT + 0.01)


def run(ctx):
    speeds = np.linspace(0.0, 60.0, 61)
    c = fm.campbell(laval_rotor(), speeds, n=8, orders=(1,))
    worst, sorted_ok = 0.0, 0
    for i, W in enumerate(speeds[1:], start=1):
        ref = fixed_frame_whirls(W)
        labels = list(c.whirl[i])
        ok = labels.count("forward") == 2 and labels.count("backward") == 2
        if ok:
            for lab in ("forward", "backward"):
                f = np.sort(c.fixed_frequency[i][[k for k, x in enumerate(labels) if x == lab]]) * 2 * math.pi
                worst = max(worst, float(np.max(np.abs(f / np.array(ref[lab]) - 1))))
        sorted_ok += ok
    metrics = [dict(name="speeds with 2 forward and 2 backward whirls", value=sorted_ok, reference=speeds.size - 1,
                    tolerance=0, kind="abs"),
               dict(name="fixed-frame whirl frequencies: largest rel. error", value=worst, reference=0.0,
                    tolerance=1e-9, kind="abs")]
    crit = c.critical_speeds(frame="fixed")
    wl = math.sqrt(2 * K2 / M_DISK)
    tilt_b = math.sqrt(2 * K2 * A**2 / (JT + JP))
    fwd = crit[crit.whirl == "forward"].speed_rad_s.to_numpy()
    bwd = np.sort(crit[crit.whirl == "backward"].speed_rad_s.to_numpy())
    metrics.append(dict(name="forward critical speeds (order 1)", value=fwd.size, reference=1, tolerance=0, kind="abs"))
    metrics.append(dict(name="backward critical speeds (order 1)", value=bwd.size, reference=2, tolerance=0, kind="abs"))
    if fwd.size == 1 and bwd.size == 2:
        metrics.append(dict(name="lateral critical speed, forward [rad/s]", value=float(fwd[0]), reference=wl,
                            tolerance=1e-9, kind="rel"))
        metrics.append(dict(name="lateral critical speed, backward [rad/s]", value=float(bwd[1]), reference=wl,
                            tolerance=1e-9, kind="rel"))
        metrics.append(dict(name="tilt critical speed, backward [rad/s]", value=float(bwd[0]), reference=tilt_b,
                            tolerance=1e-3, kind="rel"))
    sol, ref = driven_on_a_housing()
    res = fm.eigen(fm.linearize(sol, t=0.1))
    w = np.sort(res.frequency[res.kind == "stable"] * 2 * math.pi)
    exact = np.sort(ref["forward"] + ref["backward"])
    ctx.logger.info("L5 simulate at 40 rad/s, linearized at t = 0.1 s: %s rad/s (closed form %s)", w, exact)
    for k, name in enumerate(("backward tilt", "lateral", "lateral", "forward tilt")):
        metrics.append(dict(name=f"{name} whirl [rad/s], simulate run linearized at t = 0.1 s",
                            value=float(w[k]) if k < w.size else math.nan, reference=float(exact[k]), tolerance=1e-8,
                            kind="rel"))
    return metrics
