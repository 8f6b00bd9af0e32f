"""Fixed cost per time element of small models (issue 6 C): where the time of a step goes.

Two models of ``benchmarks/compare_exudyn.py``: the IFToMM A01 pendulum (p = 2, h = 1/32 s, 10 s,
320 elements) and the 10-link spherical chain (p = 1, h = 1e-3 s, 300 elements).  Each run is
preceded by a one-element warm-up (imports, compiled kernels, caches).  Reported: wall time of the
time loop per element (best of ``--repeat`` runs) and, from a separate run with timing wrappers
around the engine's functions (``time.perf_counter``, ~1 us per wrapped call), the time per element
spent in each of them.  Nested entries are indented under the function that calls them; the
indented times are included in their parent's.

    python benchmarks/small_models.py                 # both models, breakdown
    python benchmarks/small_models.py --only pendulum --repeat 5
    python benchmarks/small_models.py --calls          # also Python calls per element (cProfile)
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import flexmb_chain, flexmb_pendulum  # noqa: E402

MODELS = {
    "pendulum": (flexmb_pendulum, 1 / 32, 2, 10.0),
    "chain10": (lambda: flexmb_chain(10), 1e-3, 1, 0.3),
}


def _targets():
    """(label, owner, attribute name) of the wrapped functions; owner resolved at call time."""
    import flexmb.dynamics.constraints as C
    import flexmb.dynamics.marching as M
    import flexmb.dynamics.recorder as R
    import flexmb.dynamics.simulate as S
    from flexmb.dynamics import joints as JN
    from flexmb.dynamics.attachments import AttachmentSet
    from flexmb.dynamics.bodies.rigid import RigidBodies
    from flexmb.dynamics.layout import Pattern

    return [
        ("step", S.Run, "step"),
        (" newton_solve", S, "newton_solve"),
        ("  evaluate (residual + Jacobian)", S.ElementSystem, "evaluate"),
        ("   element_kin (unpack bodies)", S.ElementSystem, "element_kin"),
        ("   rigid bodies' residual", RigidBodies, "residual"),
        ("   joint_residual", S, "joint_residual"),
        ("    attachment poses", AttachmentSet, "pose"),
        ("    attachment velocities", AttachmentSet, "velocity"),
        ("    joint rows kernel", JN.kernels, "joint_rows"),
        ("    chain rule (attachment Jacobians)", JN, "chain"),
        ("    constitutive laws", JN, "_constitutive"),
        ("    multipliers onto bodies (scatter)", AttachmentSet, "scatter"),
        ("   unpack_joints", S, "unpack_joints"),
        ("   Pattern.matrix (CSC values)", Pattern, "matrix"),
        ("  factorization (Run.factor)", S.Run, "factor"),
        (" predictor", S, "_predict"),
        (" end values", S, "_end_values"),
        ("  multipliers as momenta (gauge reset)", M, "multiplier_momenta"),
        ("  re-orthonormalization (SVD)", M, "_orthonormalize"),
        (" record internal points", S.Run, "_record"),
        (" record node (Recorder.node)", R.Recorder, "node"),
        ("  node-velocity projection", R, "project_node"),
        ("   NodeFrames (node attachment frames)", C, "NodeFrames"),
        ("  node reaction record", R, "node_record"),
        (" scales adaptation", S.Run, "_adapt_scales"),
        (" dropped-equation check / monitor", S.Run, "_check_dropped"),
    ]


def run(name: str):
    mk, h, p, t_end = MODELS[name]
    gc.collect()
    return fm.simulate(mk(), t_end, h, p=p, show_progress=False)


def per_element(name: str, repeat: int) -> tuple[float, fm.Solution]:
    mk, h, p, _ = MODELS[name]
    fm.simulate(mk(), h, h, p=p, show_progress=False)  # warm-up
    best, sol = np.inf, None
    for _ in range(repeat):
        sol = run(name)
        best = min(best, sol.meta["wall_time"] / len(sol.stats["iterations"]))
    return best, sol


def breakdown(name: str) -> tuple[list, float]:
    acc: dict = {}
    saved = []
    for label, owner, attr in _targets():
        f = getattr(owner, attr)
        saved.append((owner, attr, f))

        def wrapped(*a, _f=f, _label=label, **k):
            t = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] = acc.get(_label, 0.0) + time.perf_counter() - t

        setattr(owner, attr, functools.wraps(f)(wrapped))
    try:
        mk, h, p, _ = MODELS[name]
        fm.simulate(mk(), h, h, p=p, show_progress=False)
        acc.clear()
        sol = run(name)
    finally:
        for owner, attr, f in saved:
            setattr(owner, attr, f)
    ne = len(sol.stats["iterations"])
    return [(label, 1e3 * acc.get(label, 0.0) / ne) for label, _, _ in _targets()], float(np.mean(sol.stats["iterations"]))


def calls(name: str) -> float:
    mk, h, p, _ = MODELS[name]
    fm.simulate(mk(), h, h, p=p, show_progress=False)
    pr = cProfile.Profile()
    pr.enable()
    sol = run(name)
    pr.disable()
    return pstats.Stats(pr).total_calls / len(sol.stats["iterations"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=list(MODELS), nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calls", action="store_true", help="Python calls per element (cProfile run)")
    args = ap.parse_args(argv)
    for name in args.only or list(MODELS):
        ms, sol = per_element(name, args.repeat)
        rows, its = breakdown(name)
        print(f"\n{name}: {1e6 * ms:.0f} us per element (best of {args.repeat}), Newton iterations {its:.2f}, "
              f"unknowns {sol.meta['unknowns_internal']}; breakdown run (with the wrappers):")
        total = rows[0][1]
        for label, v in rows:
            print(f"  {label:<44s} {1e3 * v:8.0f} us {100 * v / total:5.1f} %")
        if args.calls:
            print(f"  Python calls per element: {calls(name):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
