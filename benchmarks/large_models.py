"""Where a time element of a large model goes (issue 6 C, task BIGN).

Models of ``benchmarks/compare_exudyn.py``: the N-link spherical chain (p = 1, h = 1e-3 s, the
number of steps of compare_exudyn: 30 at N = 1000, 12 at N = 3000) and the 15-link chain to
t = 1.5 s at p = 3 (h = 5e-3 and 1e-2).  Reported per time element: wall time of the time loop
(``meta["wall_time"]``, a plain run), Newton iterations, Jacobians (full evaluations),
factorizations, fresh pivotings of the refactorization, unknowns, nnz of the Newton matrix and of
L + U, and from a second run with timing wrappers (``time.perf_counter`` around the engine's
functions, ~1 us per call) the time per element in: evaluation (residual + Jacobian, split into
the element equations and ``Pattern.matrix``), residual-only evaluations, the factorization (the
first SuperLU + analysis, fresh pivotings, numeric refactorizations), the triangular solves,
Newton's own logic (the rest of ``newton_solve``), predictor, end values, node work (recorder)
and the rest of the step.

    python benchmarks/large_models.py                       # N = 1000, 3000, 15-link p = 3 h = 5e-3, 1e-2
    python benchmarks/large_models.py --only n1000 --steps 60
"""
from __future__ import annotations

import argparse
import functools
import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import flexmb_chain  # noqa: E402

MODELS = {
    # name: (model factory, h, p, t_end)
    "n1000": (lambda: flexmb_chain(1000), 1e-3, 1, 30e-3),
    "n3000": (lambda: flexmb_chain(3000), 1e-3, 1, 12e-3),
    "c15p3h5": (lambda: flexmb_chain(15), 5e-3, 3, 1.5 + 5e-3),
    "c15p3h10": (lambda: flexmb_chain(15), 1e-2, 3, 1.5 + 1e-2),
}


def _targets():
    """(label, owner, attribute) of the wrapped functions."""
    import flexmb.dynamics.solve.linsolve as LS
    import flexmb.dynamics.io.recorder as R
    import flexmb.dynamics.solve.refactor_lu as RL
    import flexmb.dynamics.march.marching as M
    import flexmb.dynamics.simulate as S
    import flexmb.dynamics.step.advance as ADV
    from flexmb.dynamics.layout import Pattern

    return [
        ("step", S.Run, "step"),
        (" Newton (ElementSystem.newton)", S.ElementSystem, "newton"),
        ("  evaluate, residual + Jacobian", S.ElementSystem, "evaluate"),
        ("   element equations (triplets)", S.ElementSystem, "triplets"),
        ("   Pattern.matrix", Pattern, "matrix"),
        ("  residual-only evaluations", S.ElementSystem, "residual"),
        ("  factorization (Run.factor)", S.Run, "factor"),
        ("   SuperLU + analysis (first, fresh pivots)", LS.Refactor, "_pivot"),
        ("   numeric refactorization", RL.Structure, "factor"),
        ("  triangular solves", RL.Factors, "__call__"),
        (" predictor (step.advance.predict_element)", ADV, "predict_element"),
        (" end values (march.marching.end_values)", M, "end_values"),
        (" record internal points", S.Run, "_record"),
        (" record node (Recorder.node)", R.Recorder, "node"),
        (" scales adaptation", S.Run, "_adapt_scales"),
        (" dropped-equation check", S.Run, "_check_dropped"),
    ]


def run(name: str):
    mk, h, p, t_end = MODELS[name]
    gc.collect()
    return fm.simulate(mk(), t_end, h, p=p, show_progress=False)


def breakdown(name: str):
    acc: dict = {}
    cnt: dict = {}
    saved = []
    # the residual-only evaluation calls evaluate: count it apart
    for label, owner, attr in _targets():
        f = getattr(owner, attr)
        saved.append((owner, attr, f))

        def wrapped(*a, _f=f, _label=label, **k):
            t = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] = acc.get(_label, 0.0) + time.perf_counter() - t
                cnt[_label] = cnt.get(_label, 0) + 1

        setattr(owner, attr, functools.wraps(f)(wrapped))
    try:
        sol = run(name)
    finally:
        for owner, attr, f in saved:
            setattr(owner, attr, f)
    return sol, acc, cnt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=list(MODELS), nargs="+")
    args = ap.parse_args(argv)
    fm.simulate(flexmb_chain(10), 2e-3, 1e-3, p=1, show_progress=False)  # imports, compiled kernels
    fm.simulate(flexmb_chain(3), 2e-2, 1e-2, p=3, show_progress=False)
    for name in args.only or list(MODELS):
        sol = run(name)
        ne = len(sol.stats["iterations"])
        wall = sol.meta["wall_time"] / ne
        sol2, acc, cnt = breakdown(name)
        ne2 = len(sol2.stats["iterations"])
        m = sol.meta
        its = float(np.mean(sol.stats["iterations"]))
        facs = float(np.mean(sol.stats["factorizations"]))
        extra = {k: m.get(k) for k in ("unknowns_internal", "nnz_jacobian", "nnz_lu", "pivot_changes") if k in m}
        print(f"\n{name}: {ne} elements, {1e3 * wall:.2f} ms per element (plain run), Newton its {its:.2f}, "
              f"factorizations {facs:.2f}; {extra}")
        total = acc["step"]
        inner = {k: v for k, v in acc.items()}
        # residual-only evaluations go through evaluate too: split
        for label, _, _ in _targets():
            v = inner.get(label, 0.0)
            print(f"  {label:<46s} {1e3 * v / ne2:8.2f} ms {100 * v / total:5.1f} %  ({cnt.get(label, 0) / ne2:.2f} calls)")
        newton_logic = acc.get(" newton_solve", 0) - acc.get("  evaluate, residual + Jacobian", 0) \
            - acc.get("  factorization (Run.factor)", 0) - acc.get("  triangular solves", 0)
        print(f"  {'  Newton logic (newton_solve - evaluate - factor - solves)':<46s} {1e3 * newton_logic / ne2:8.2f} ms "
              f"{100 * newton_logic / total:5.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
