"""Benchmark: equilibrium + linearization + eigenvalues (issue 19 targets).

* ``chain``: an N-link pendulum chain (slender bars on revolute joints about y, hanging along -z
  under gravity, built 0.05 rad off the vertical so that the equilibrium takes Newton iterations):
  wall time of ``fm.equilibrium``, ``fm.linearize`` and ``fm.eigen(lin, 20)`` (dense state matrix,
  and sparse shift-invert on the descriptor pencil), target < 1 s for N = 100;
* ``x5``: the X5 cantilever strip (X1 data, ``n_modes`` flapwise Craig-Bampton modes, the root
  driven about z at gamma = 6): ``fm.equilibrium(steady=True)`` + ``fm.linearize`` + 20 eigenvalues,
  target < 1 s with 50 modes (the modal reduction, done once, is not timed);
* ``campbell``: ``fm.campbell`` of the same strip (hub drive swept over 50 speeds, 0 .. 1 rad/s,
  6 modes followed), target "in seconds".

Each step is timed after one untimed warm-up of the whole sequence (numba compilation); the best of
``--repeat`` runs is kept.  OpenBLAS runs single-threaded (``OPENBLAS_NUM_THREADS=1`` unless set):
on the shared 2-core machine its threads spin against the other jobs and made the 600 x 500 QR of
the null space 15-60x slower (0.7-3 s instead of 0.05 s; ``--blas-threads 0`` keeps the default).

    python benchmarks/linear.py                 # chain N = 100, x5 with 50 modes
    python benchmarks/linear.py --n 100 300 --modes 20 50 --repeat 3
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # before numpy is imported (docstring; numpy was imported first until
    # 2026-11-29, so the setting never reached OpenBLAS: the chain's dense eigen took 2.4 s, not 0.06 s)
    _n = sys.argv[sys.argv.index("--blas-threads") + 1] if "--blas-threads" in sys.argv[:-1] else "1"
    if _n != "0":
        os.environ["OPENBLAS_NUM_THREADS"] = _n

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import flexmb as fm  # noqa: E402

LINK_LENGTH, LINK_MASS, LINK_RADIUS = 0.1, 0.05, 0.002


def pendulum_chain(n: int, tilt: float = 0.05) -> fm.Model:
    """``n`` bars on revolute joints about y, hanging along -z, each turned by ``tilt`` [rad]."""
    L, m, r = LINK_LENGTH, LINK_MASS, LINK_RADIUS
    inertia = (m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12, 0.5 * m * r * r)
    c, s = np.cos(tilt), np.sin(tilt)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    d = R @ (0, 0, -L)
    bodies = [fm.RigidBody(f"bar{i}", mass=m, inertia=inertia, position=(i + 0.5) * d, orientation=R) for i in range(n)]
    joints = [fm.Revolute(f"r{i}", "ground" if i == 0 else f"bar{i - 1}", f"bar{i}", point=i * d, axis=(0, 1, 0))
              for i in range(n)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, 0.0, -9.81))])


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def run_chain(n: int, repeat: int) -> dict:
    model = pendulum_chain(n)
    best = None
    for _ in range(repeat + 1):  # the first run compiles
        eq, t_eq = timed(fm.equilibrium, model)
        lin, t_lin = timed(fm.linearize, eq)
        sparse, t_sparse = timed(fm.eigen, lin, 20, method="sparse")
        if n <= 200:  # the dense route forms the null space of G (a dense QR): small models only
            dense, t_dense = timed(fm.eigen, lin, 20, method="dense")
            agree = float(np.max(np.abs(dense.frequency - sparse.frequency) / dense.frequency))
        else:
            t_dense, agree = np.inf, np.nan
        row = dict(equilibrium=t_eq, linearize=t_lin, eigen_dense=t_dense, eigen_sparse=t_sparse,
                   iterations=eq.iterations, ndof=6 * n - 5 * n, agree=agree, f1=float(sparse.frequency[0]))
        row["total"] = t_eq + t_lin + min(t_dense, t_sparse)
        if best is None or row["total"] < best["total"]:
            best = row
    return best


def run_x5(n_modes: int, repeat: int, gamma: float = 6.0) -> dict:
    from flexmb.validation.cases.case_l3 import strip_model

    model = strip_model(n_modes, gamma)
    best = None
    for _ in range(repeat + 1):
        eq, t_eq = timed(fm.equilibrium, model, steady=True)
        lin, t_lin = timed(fm.linearize, eq)
        res, t_eig = timed(fm.eigen, lin, 20)
        row = dict(equilibrium=t_eq, linearize=t_lin, eigen=t_eig, ndof=lin.ndof, total=t_eq + t_lin + t_eig)
        if best is None or row["total"] < best["total"]:
            best = row
    return best


def run_campbell(n_modes: int, repeat: int, speeds: int = 50) -> dict:
    from flexmb.validation.cases.case_l3 import strip_model

    model = strip_model(n_modes, 0.0)
    fm.campbell(model, np.linspace(0.0, 1.0, 3), n=6)  # warm-up
    best = np.inf
    for _ in range(repeat):
        c, t = timed(fm.campbell, model, np.linspace(0.0, 1.0, speeds), n=6)
        best = min(best, t)
    return dict(total=best, speeds=speeds, critical=len(c.critical_speeds()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[100])
    ap.add_argument("--modes", type=int, nargs="*", default=[50])
    ap.add_argument("--campbell", type=int, nargs="*", default=[4, 50], help="strip modes of the Campbell runs")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--blas-threads", type=int, default=1, help="0: OpenBLAS default (set before the run)")
    args = ap.parse_args(argv)
    for n in args.n:
        r = run_chain(n, args.repeat)
        print(f"chain N = {n:5d} ({r['ndof']} dof, {r['iterations']} Newton iterations): equilibrium {r['equilibrium']:.3f} s, "
              f"linearize {r['linearize']:.3f} s, 20 eigenvalues dense {r['eigen_dense']:.3f} s / sparse "
              f"{r['eigen_sparse']:.3f} s (agree to {r['agree']:.1e}; f1 {r['f1']:.6f} Hz); total {r['total']:.3f} s")
    for nm in args.modes:
        r = run_x5(nm, args.repeat)
        print(f"X5 strip, {nm} modes, gamma = 6 ({r['ndof']} dof): equilibrium(steady) {r['equilibrium']:.3f} s, "
              f"linearize {r['linearize']:.3f} s, 20 eigenvalues {r['eigen']:.3f} s; total {r['total']:.3f} s")
    for nm in args.campbell:
        r = run_campbell(nm, args.repeat)
        print(f"Campbell of the X5 strip, {nm} modes, {r['speeds']} speeds, 6 modes followed: {r['total']:.2f} s "
              f"({r['total'] / r['speeds'] * 1e3:.0f} ms per speed; {r['critical']} critical speeds)")


if __name__ == "__main__":
    main()
