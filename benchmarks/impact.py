"""Benchmark: a ball bouncing to rest with about 1,000 impacts (issue 21 target: "in seconds"), and the
cost of event location.

The ball (radius 0.1 m) is dropped from 1 m onto a floor with the restitution ``e`` that gives
``--impacts`` impacts before the contact rests (a rebound whose apex is below the gap tolerance ``tol``:
``v < v_rest = sqrt(2 g tol)``, whatever h; ``e = (0.999 v_rest / v0)^(1 / n)``), marched with fixed steps
``h`` (p = 1) to the end of the geometric series plus 1 s.  The flights are integrated exactly and the
elements land on the predicted impacts, so h may exceed the flights.  Printed: wall time, impacts, element
solves per impact (committed elements up to the last impact plus the extra location solves), the same
number of elements of the same model without the contact (wall time per element: the overhead of the
events), the first and last impact times against the closed form, the largest penetration at rest (the
resting hold's bound ``g h^2 / 2``).  One untimed warm-up run first (numba compilation); the best of
``--repeat`` runs.

    python benchmarks/impact.py                    # 1,000 impacts, h = 1 and 0.1
    python benchmarks/impact.py --impacts 1000 --h 0.01 --repeat 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import flexmb as fm  # noqa: E402

G, H, R, M = 9.81, 1.0, 0.1, 0.5


def model(e: float, contact: bool = True) -> fm.Model:
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0, H + R, 0))
    floor = fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R, restitution=e)
    return fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[floor] if contact else [])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impacts", type=int, default=1000)
    ap.add_argument("--h", type=float, nargs="+", default=[1.0, 0.1])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    v0 = np.sqrt(2 * G * H)
    t0 = np.sqrt(2 * H / G)
    tol = fm.simulate(model(0.8), 2.0, 0.01).meta["gap_tol"]  # warm-up (compilation)
    v_rest = np.sqrt(2 * G * tol)
    e = (0.999 * v_rest / v0) ** (1.0 / args.impacts)
    print(f"load: {os.getloadavg()[0]:.2f}")
    print("| h [s] | e | t_end [s] | impacts | wall [s] | per impact [ms] | solves / impact | extra solves | elements "
          "| wall without contact [s] | ratio | first impact error [s] | T_inf - last impact [s] | penetration [m] |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for h in args.h:
        T_inf = t0 + 2 * v0 * e / (G * (1 - e))
        t_end = T_inf + 1.0
        best = None
        for _ in range(args.repeat):
            t = time.perf_counter()
            sol = fm.simulate(model(e), t_end, h)
            wall = time.perf_counter() - t
            best = wall if best is None else min(best, wall)
        n_el = len(sol.stats["h"])
        t = time.perf_counter()
        fm.simulate(model(e, contact=False), n_el * h, h)
        free = time.perf_counter() - t
        ev = sol.events
        n = max(len(ev), 1)
        solves = int(np.sum(sol.t[1:] <= ev[-1]["t"] + 1e-9)) + sol.meta["event_solves"]
        pen = float(np.maximum(R - sol.body("ball").position[:, 1], 0.0).max())
        print(f"| {h:g} | {e:.6f} | {t_end:.1f} | {len(ev)} | {best:.2f} | {1e3 * best / n:.2f} | {solves / n:.2f} | "
              f"{sol.meta['event_solves']} | {n_el} | {free:.2f} | {best / free:.2f} | {abs(ev[0]['t'] - t0):.1e} | "
              f"{T_inf - ev[-1]['t']:.2e} | {pen:.2g} |")


if __name__ == "__main__":
    main()
