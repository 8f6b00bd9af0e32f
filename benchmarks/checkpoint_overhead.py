"""Checkpoint overhead (issue 18 section 3): the wall time of a run with checkpoints against the same
run without, for the 15-link chain (p = 3, h = 5e-3 s, to 1.5 s: 300 elements) and the adaptive
15-link chain (p = 2, atol = 1e-5 m, to 1.5 s), at ``checkpoint_every`` = 60 s (the default), 1,
0.25 and 0.05 s; with the number of writes, the time spent writing (measured around each write,
in the same run: robust to the load of a shared machine) and its share of the run's wall time.
Then whether the overhead depends on the run's length: the chain to 1.5 and to 4.5 s at 0.25 s.
Last, the time to read the checkpoint of the 0.05 s run back (``load_checkpoint``).

On a shared machine timings scatter: ``--repeat R`` runs every configuration R times, interleaved,
and keeps the fastest.  ``--tree DIR`` imports flexmb from another checkout (e.g. the one before
the append-only checkpoints, whose writes are ``save_run`` calls).

    python benchmarks/checkpoint_overhead.py [--repeat 3] [--tree DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tree", default=str(HERE.parent), help="flexmb checkout to import (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, args.tree)
    sys.path.insert(1, str(HERE))
    import flexmb as fm
    from compare_exudyn import flexmb_chain

    print(f"flexmb from {Path(fm.__file__).parents[1]}")
    spent = [0.0, 0]  # time in checkpoint writes [s], writes

    def timed(write):
        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return write(*a, **kw)
            finally:
                spent[0] += time.perf_counter() - t
                spent[1] += 1
        return wrapper

    import flexmb.dynamics.simulate as sim

    if hasattr(sim, "Checkpoints"):
        sim.Checkpoints.write = timed(sim.Checkpoints.write)
    else:  # before the append-only checkpoints
        sim.save_run = timed(sim.save_run)
    model = flexmb_chain(15)
    cases = {"chain": dict(h=5e-3, p=3), "adaptive chain": dict(h=0.01, p=2, rtol=0.0, atol=1e-5)}
    fm.simulate(model, 0.05, 5e-3, p=3, show_progress=False)  # compile / load the kernels
    tmp = Path(tempfile.mkdtemp(prefix="flexmb-ckpt-"))

    def one(case: str, t_end: float, every: float | None) -> tuple[float, int, float]:
        ck = tmp / "run.ckpt"
        shutil.rmtree(ck, ignore_errors=True)
        if ck.is_file():
            ck.unlink()
        kw = {} if every is None else dict(checkpoint=ck, checkpoint_every=every)
        spent[:] = [0.0, 0]
        t = time.perf_counter()
        fm.simulate(model, t_end, show_progress=False, **cases[case], **kw)
        return time.perf_counter() - t, spent[1], spent[0]

    runs = [(case, 1.5, every) for case in cases for every in (None, 60.0, 1.0, 0.25, 0.05)]
    runs += [("chain", 4.5, None), ("chain", 4.5, 0.25)]
    best: dict = {}
    for _ in range(args.repeat):
        for key in runs:
            out = one(*key)
            if key not in best or out[0] < best[key][0]:
                best[key] = out
    print(f"{'run':<16} {'t_end':>5} {'every [s]':>9} {'wall [s]':>9} {'vs none':>8} {'writes':>6} {'writing [s]':>11} "
          f"{'share':>6} {'per write':>10}")
    for case, t_end, every in runs:
        wall, writes, writing = best[(case, t_end, every)]
        base = best[(case, t_end, None)][0]
        if every is None:
            print(f"{case:<16} {t_end:5.1f} {'-':>9} {wall:9.2f}")
            continue
        print(f"{case:<16} {t_end:5.1f} {every:>9} {wall:9.2f} {wall / base:7.2f}x {writes:>6} {writing:11.3f} "
              f"{100 * writing / (wall - writing):5.1f}% {1e3 * writing / writes:8.1f}ms")
    one("chain", 1.5, 0.05)
    if hasattr(fm, "load_checkpoint"):
        t = time.perf_counter()
        fm.load_checkpoint(tmp / "run.ckpt")
        print(f"load_checkpoint of the chain's 0.05 s checkpoint "
              f"({len(list((tmp / 'run.ckpt').glob('chunk-*.npz')))} chunks): {time.perf_counter() - t:.2f} s")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
