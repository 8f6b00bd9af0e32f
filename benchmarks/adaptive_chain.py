"""Error-controlled steps on the 15-link chain (issue 8 section 4): elements and wall time needed to
reach a 1e-5 m worst bar-height error at t = 0.5, 1.0, 1.5 s, adaptive (``rtol``/``atol`` with
``t_eval`` at the reference times) against the best fixed step (the largest step dividing 0.5 s
that meets the target), for p = 2 and 3.  The reference is issue 6's converged solution
(benchmarks/compare_exudyn.py).  Prints one table; quote the ratios measured in one run.

    python benchmarks/adaptive_chain.py [--quick]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
import sys

import numpy as np

import flexmb as fm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_exudyn import REF_BARS, REF_TIMES, REF_Z, TARGET_ERROR, flexmb_chain  # noqa: E402


def error(sol: fm.Solution) -> float:
    names = list(sol.body_names)
    cols = [names.index(f"bar{b}") for b in REF_BARS]
    at = sol.at(np.array(REF_TIMES))
    return float(np.abs(at.body_position[:, cols, 2] - REF_Z).max())


def run(p: int, h: float, **kw) -> tuple[float, int, float, str]:
    t = time.perf_counter()
    sol = fm.simulate(flexmb_chain(15), REF_TIMES[-1], h, p=p, show_progress=False, **kw)
    wall = time.perf_counter() - t
    # elements solved: every element Newton solved, including rejected steps and the estimator's own
    m = sol.meta
    n = int(m.get("solved_elements", sol.stats["h"].size))
    info = ""
    if "accepted_steps" in m:
        info = (f"{m['accepted_steps']} accepted, {m['rejected_steps']} rejected, sum of local error estimates "
                f"{sol.stats['local_error'].sum():.2e} m; ")
    return error(sol), n, wall, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="p = 3 only")
    args = ap.parse_args()
    orders = (3,) if args.quick else (2, 3)
    print(f"15-link chain, target worst |z - z_ref| <= {TARGET_ERROR:g} m at t = {REF_TIMES} s")
    print(f"{'p':>2} {'run':<28} {'error [m]':>10} {'solved el.':>10} {'wall [s]':>9}")
    for p in orders:
        # best fixed step: the largest h = 0.5 / n (n integer, so nodes land on the reference times)
        # that meets the target, by bisection on n
        lo, hi = (10, 200) if p == 3 else (50, 400)
        fixed = {}
        while hi - lo > max(2, lo // 10):
            n = (lo + hi) // 2
            fixed[n] = run(p, 0.5 / n)
            print(f"{p:>2} {'fixed h = %.4g' % (0.5 / n):<28} {fixed[n][0]:10.2e} {fixed[n][1]:10d} {fixed[n][2]:9.2f}")
            lo, hi = (lo, n) if fixed[n][0] <= TARGET_ERROR else (n, hi)
        if hi not in fixed:
            fixed[hi] = run(p, 0.5 / hi)
        best = fixed[hi]
        print(f"{p:>2} {'best fixed h = %.4g' % (0.5 / hi):<28} {best[0]:10.2e} {best[1]:10d} {best[2]:9.2f}")
        for atol in (1e-4, 3e-5, 1e-5, 5e-6):
            e, ne, w, info = run(p, 0.01, rtol=0.0, atol=atol, t_eval=np.array(REF_TIMES))
            ok = "meets" if e <= TARGET_ERROR else "misses"
            print(f"{p:>2} {'adaptive atol = %.0e' % atol:<28} {e:10.2e} {ne:10d} {w:9.2f}  {info}{ok} the target; "
                  f"{ne / best[1]:.2f} x the elements, {w / best[2]:.2f} x the wall time of the best fixed step")


if __name__ == "__main__":
    main()
