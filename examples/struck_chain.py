"""A hanging double pendulum struck by a ball: impact located in the march, hinge impulses, rebound.

Physics
-------
Two uniform rods (mass 1 kg, length 0.5 m) hang from a pin at the origin, joined by a second pin;
a ball (0.2 kg, radius 0.03 m) flies horizontally at 4 m/s towards the lower rod and bounces off it
with Newton's coefficient e = 0.7 (frictionless).  At the impact the chain is at rest, so the ball's
rebound follows from the chain's apparent mass at the struck point, ``m_a = 1 / K``,
``K = a^T M_q^-1 a`` (``M_q`` the chain's mass matrix in its two angles at the vertical, ``a`` the
struck point's horizontal velocity row):

    P = (1 + e) v / (1/m_b + K),   v_b+ = v - P / m_b

(Wittenburg, chapter 6).  flexmb locates the impact in the march (the ball's gap to the rod's plane
crossing zero inside a time element), solves the impulse-momentum balance of the whole constrained
system with the pins' impulses as unknowns (the internal hinge impulses, in each pin's frame), and
restarts the march from the velocities after the jump; the kinetic energy lost is a work term of the
energy balance.  (A contact plane is unbounded: run it only while the ball is beside the rod, here
0.3 s; by 1 s the swinging rod's plane meets the falling ball again far below the rod.)

Run ``python examples/struck_chain.py``: prints the results and writes
``results/examples/struck_chain.png`` (the kinetic energy with the impact's jump).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import flexmb as fm

G, M, L, MB, RB, V, E = 9.81, 1.0, 0.5, 0.2, 0.03, 4.0, 0.7
HIT = -0.8  # height of the ball's flight [m] (on the lower rod: -0.5 .. -1.0)


def build_model() -> fm.Model:
    J = M * L ** 2 / 12.0
    rods = [fm.RigidBody(f"rod{k}", mass=M, inertia=(J, 1e-4, J), position=(0, -(k + 0.5) * L, 0)) for k in range(2)]
    pins = [fm.Revolute("pin0", "ground", "rod0", point=(0, 0, 0), axis=(0, 0, 1)),
            fm.Revolute("pin1", "rod0", "rod1", point=(0, -L, 0), axis=(0, 0, 1))]
    ball = fm.RigidBody("ball", mass=MB, inertia=np.full(3, 0.4 * MB * RB ** 2), position=(-0.1, HIT, 0),
                        velocity=(V, 0, 0))
    # the lower rod's face: the plane x = 0 of its frame, free side -x; the ball a sphere
    face = fm.Contact("hit", "rod1", "ball", kind="sphere-plane", normal=(-1, 0, 0), radius=RB, restitution=E)
    return fm.Model(rods + [ball], pins, [fm.Gravity((0, -G, 0))], contacts=[face])


def apparent_compliance(y: float) -> float:
    """``K`` [1/kg] of the hanging chain for a horizontal impulse at height ``y`` on the lower rod."""
    Mq = np.array([[M * L ** 2 / 3 + M * L ** 2, M * L ** 2 / 2], [M * L ** 2 / 2, M * L ** 2 / 3]])
    a = np.array([L, -y - L])  # x-velocity of the point: L th1' + s th2', s its distance below pin1
    return float(a @ np.linalg.solve(Mq, a))


def main(t_end: float = 0.3, h: float = 0.01, plot: str | Path | None = None) -> dict:
    sol = fm.simulate(build_model(), t_end, h, p=2)
    ev = sol.events[0]
    k = int(np.argmin(np.abs(sol.t - ev["t"])))
    y_hit = float(sol.body("ball").position[k, 1])
    K = apparent_compliance(y_hit)
    P = (1 + E) * V / (1 / MB + K)
    if plot is not None:
        from flexmb.results.events import plot_events

        plot_events(sol, path=plot)
    f0, _ = ev["joint_impulse"]["pin0"]
    f1, _ = ev["joint_impulse"]["pin1"]
    return dict(t_impact=ev["t"], impulse=ev["normal_impulse"], impulse_closed_form=P,
                ball_velocity_after=float(sol.body("ball").velocity[k + 1, 0]), ball_velocity_closed_form=V - P / MB,
                pin0_impulse=float(np.linalg.norm(f0)), pin1_impulse=float(np.linalg.norm(f1)),
                energy_lost=ev["energy_lost"], energy_balance=sol.meta["energy_balance"])


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "results" / "examples"
    out.mkdir(parents=True, exist_ok=True)
    for key, value in main(plot=out / "struck_chain.png").items():
        print(f"{key}: {value:.6g}")
