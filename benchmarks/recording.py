"""Benchmark: the share of a run spent in output recording and the node-velocity projection.

The N-link chain of ``benchmarks/chain.py`` (p = 1, h = 1 ms by default) is simulated for a fixed
number of steps; the recorder's entry points are wrapped by timers for the run:

* ``node``: :meth:`Recorder.node` at every output node (the node-velocity projection
  ``node_velocity``, frame outputs, energies, joint relative velocities, the impulse record);
* ``internal``: :meth:`Recorder.internal` and ``Run._gauss_xb`` (internal points, element impulse
  moments, B's origins at the Gauss points);
* ``subnode``: nodes inside halved steps;
* ``solution``: :meth:`Recorder.solution` (arrays, node reactions) at the end of the run.

The share is relative to the time loop (``Solution.meta["wall_time"]``) plus ``solution``.  Also
printed: the set-up time (model building, ``compile_model``, initial state; with ``--setup N``
for a larger chain, where only the set-up is timed).

Usage::

    python benchmarks/recording.py                      # N = 10 100 1000, 30 steps
    python benchmarks/recording.py --n 10 100 --steps 100 --repeat 3
    python benchmarks/recording.py --setup 10000        # set-up of a 10000-link chain only
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from chain import chain_model  # noqa: E402
from flexmb.dynamics.io import recorder as recorder_mod  # noqa: E402
from flexmb.dynamics import simulate as simulate_mod  # noqa: E402

PARTS = ("node", "internal", "subnode", "solution")


class _Timers:
    """Wraps the recorder's entry points with accumulating timers (restored by :meth:`close`)."""

    def __init__(self):
        self.t = dict.fromkeys(PARTS, 0.0)
        self._saved = []
        R, Run = recorder_mod.Recorder, simulate_mod.Run
        for cls, name, part in ((R, "node", "node"), (R, "internal", "internal"), (Run, "_gauss_xb", "internal"),
                                (R, "subnode", "subnode"), (R, "solution", "solution")):
            self._wrap(cls, name, part)

    def _wrap(self, cls, name, part):
        f = getattr(cls, name)
        self._saved.append((cls, name, f))
        timers = self.t

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                timers[part] += time.perf_counter() - t0

        setattr(cls, name, timed)

    def close(self):
        for cls, name, f in self._saved:
            setattr(cls, name, f)


def run(n: int, steps: int, h: float, p: int) -> dict:
    t0 = time.perf_counter()
    model = chain_model(n)
    tm = _Timers()
    try:
        t1 = time.perf_counter()
        sol = fm.simulate(model, steps * h, h, p=p, show_progress=False)
        t_total = time.perf_counter() - t1
    finally:
        tm.close()
    wall = sol.meta["wall_time"]
    # the first node is recorded during set-up (Run.start), the others inside the time loop
    loop = wall + tm.t["solution"]
    rec = sum(tm.t.values())
    return dict(n=n, steps=len(sol.stats["h"]), loop=loop, rec=rec, share=rec / loop, parts=dict(tm.t),
                setup=(t1 - t0) + t_total - wall - tm.t["solution"])


def setup_only(n: int) -> dict:
    """Model building and ``Run.start`` (compilation, redundancy check, sparsity pattern, initial
    state, Newton scales, the first node's record) of an ``n``-link chain, no time step."""
    from flexmb.dynamics.simulate import Run, SimulationOptions

    t0 = time.perf_counter()
    model = chain_model(n)
    t1 = time.perf_counter()
    Run.start(model, 1e-3, 1e-3, 1, 0.0, SimulationOptions())
    t2 = time.perf_counter()
    return dict(model=t1 - t0, start=t2 - t1)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[10, 100, 1000])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--h", type=float, default=1e-3)
    ap.add_argument("--p", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs per N, the fastest kept")
    ap.add_argument("--setup", type=int, nargs="*", default=[], help="chain sizes whose set-up only is timed")
    args = ap.parse_args(argv)
    if args.n:
        print(f"{'N':>6} {'steps':>6} {'loop s':>8} {'record s':>9} {'share':>6} "
              + " ".join(f"{k:>9}" for k in PARTS) + f" {'setup s':>8}")
    for n in args.n:
        run(n, 1, args.h, args.p)  # warm-up
        runs = []
        for _ in range(args.repeat):
            gc.collect()
            runs.append(run(n, args.steps, args.h, args.p))
        r = min(runs, key=lambda r: r["loop"])
        print(f"{n:>6d} {r['steps']:>6d} {r['loop']:>8.3f} {r['rec']:>9.3f} {100 * r['share']:>5.1f}% "
              + " ".join(f"{r['parts'][k]:>9.4f}" for k in PARTS) + f" {r['setup']:>8.2f}", flush=True)
    for n in args.setup:
        s = setup_only(n)
        print(f"set-up N = {n}: model {s['model']:.2f} s, Run.start {s['start']:.2f} s", flush=True)


if __name__ == "__main__":
    main()
