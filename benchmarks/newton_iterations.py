"""Newton iterations per element with and without the predicted stopping test (issue 6 C).

``NewtonOptions.predicted_stop`` accepts an increment whose estimated remaining error
``theta / (1 - theta) |dU|`` (``theta`` the measured contraction) is below the tolerance, besides
``|dU| <= tol``.  This script runs each model both ways in one session, interleaved, and prints
iterations, factorizations and CPU time per element, the largest position difference between the
two runs (relative to the model's length) and, for the 15-link chain p = 3, the error against the
reference of ``compare_exudyn.py``.  ``--trace`` prints the median scaled increment of each kind
of unknown at each iteration (full or simplified Newton from the same predictor).

    python benchmarks/newton_iterations.py [--rounds 2] [--only chain10 pendulum ...] [--trace]
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import flexmb_chain, flexmb_chain15_errors, flexmb_pendulum  # noqa: E402

#: name: (model builder, t_end [s], h [s], p, length for the relative position difference [m])
MODELS = {
    "chain10": (lambda: flexmb_chain(10), 0.3, 1e-3, 1),
    "chain100": (lambda: flexmb_chain(100), 0.06, 1e-3, 1),
    "chain1000": (lambda: flexmb_chain(1000), 0.02, 1e-3, 1),
    "pendulum": (flexmb_pendulum, 10.0, 1 / 32, 2),
    "chain15_p3": (lambda: flexmb_chain(15), 2.0, 5e-3, 3),
}


def run(name: str, predicted: bool) -> dict:
    mk, t_end, h, p = MODELS[name]
    opts = fm.SimulationOptions(newton=fm.NewtonOptions(predicted_stop=predicted))
    model = mk()
    gc.collect()
    c0 = time.process_time()
    sol = fm.simulate(model, t_end, h, p=p, options=opts, show_progress=False)
    cpu = time.process_time() - c0
    k = len(sol.stats["iterations"])
    out = dict(it=float(np.mean(sol.stats["iterations"])), fac=float(np.mean(sol.stats["factorizations"])),
               cpu=cpu / k, x=sol.body_position, sol=sol)
    if name == "chain15_p3":
        out["err"] = flexmb_chain15_errors(sol)
    return out


def _kinds(lay, n: int) -> np.ndarray:
    """Kind of each unknown (rigid bodies only: 18 slots per internal point; joints: 30)."""
    lab = np.empty(n, dtype=object)
    jo = lay.joint_off
    lab[:jo] = np.array(["x"] * 3 + ["theta"] * 3 + ["pi"] * 6 + ["w"] * 6, dtype=object)[np.arange(jo) % 18]
    joint = sum([[k] * (3 if k in ("s", "phi") else 6) for k in ("s", "phi", "lambda", "Q", "nu_a", "nu_b")], [])
    lab[jo:] = np.array(joint, dtype=object)[np.arange(n - jo) % 30]
    return lab


def trace(name: str, simplified: bool) -> None:
    """Median (over elements 3..) of the largest scaled increment of each kind at each iteration, full or
    simplified Newton from the simulation's own predictor, without a stopping test (6 iterations)."""
    import flexmb.dynamics.simulate as S

    mk, t_end, h, p = MODELS[name]
    rec, lay = [], {}
    orig, orig_init = S.newton_solve, S.ElementSystem.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        lay["lay"] = self.lay

    def traced(evaluate, U0, scale, factor, options, residual=None):
        lab = _kinds(lay["lay"], U0.size)
        U, rows, solve = U0.copy(), [], None
        for _ in range(6):
            F, J = evaluate(U)
            if solve is None or not simplified:
                solve = factor(J)
            dU = -solve(F)
            w = np.abs(dU) / (scale + np.abs(U + dU))
            U = U + dU
            rows.append({k: float(w[lab == k].max()) for k in dict.fromkeys(lab)})
        rec.append(rows)
        return orig(evaluate, U0, scale, factor, options, residual)

    S.newton_solve, S.ElementSystem.__init__ = traced, init
    try:
        fm.simulate(mk(), min(t_end, 40 * h), h, p=p, show_progress=False)
    finally:
        S.newton_solve, S.ElementSystem.__init__ = orig, orig_init
    kinds = list(rec[0][0])
    print(f"{name} ({'simplified' if simplified else 'full'} Newton): median scaled increment per kind")
    print("iter " + " ".join(f"{k:>9}" for k in kinds))
    for it in range(5):
        print(f"{it + 1:>4} " + " ".join(f"{np.median([r[it][k] for r in rec[2:]]):9.1e}" for k in kinds))


def compare(names, rounds: int) -> None:
    print(f"{'model':>11} {'stop':>9} {'iter/el':>8} {'fact/el':>8} {'CPU ms/el':>10} {'|dx|/L':>9} extra")
    for name in names:
        best = {}
        for _ in range(rounds):
            for predicted in (False, True):
                r = run(name, predicted)
                if predicted not in best or r["cpu"] < best[predicted]["cpu"]:
                    best[predicted] = r
        a, b = best[False], best[True]
        span = float(np.ptp(a["x"][0], axis=0).max()) or 1.0
        dx = float(np.abs(a["x"] - b["x"]).max()) / max(span, 1e-300)
        for key, r in (("|dU|", a), ("predicted", b)):
            extra = ""
            if "err" in r:
                extra = f"z err {r['err'][0]:.3e} m, |F8| err {r['err'][1]:.3e} N"
            print(f"{name:>11} {key:>9} {r['it']:8.3f} {r['fac']:8.3f} {r['cpu'] * 1e3:10.3f} "
                  f"{dx if r is b else 0.0:9.1e} {extra}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--trace", action="store_true", help="increments per kind of unknown per iteration")
    args = ap.parse_args(argv)
    if args.trace:
        for name in args.only:
            for simplified in (False, True):
                trace(name, simplified)
        return 0
    compare(args.only, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
