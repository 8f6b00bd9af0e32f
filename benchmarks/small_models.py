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
    python benchmarks/small_models.py --against /path/to/other/checkout --rounds 4
        # before/after: CPU time per element of this tree and another checkout, interleaved

``--against``: each round runs both trees in fresh processes, one after the other; per model the
CPU time (``time.process_time``) of a 10 s / 0.3 s run minus that of a two-element run, divided by
the difference in elements (set-up excluded), best of two per process; the minimum over the rounds
is reported.  CPU time is used because the machine is shared: wall times scatter by 2x under load.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
if __name__ == "__main__":  # run as a script: this checkout's package (an editable install may point at another)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import flexmb_chain, flexmb_pendulum  # noqa: E402

#: elements of the warm-up run: the first element of a run builds the pattern (general evaluator), the
#: next ones load the compiled Newton loop (dynamics/solve/fused_newton.py: ~65 ms from numba's cache),
#: which a one-element warm-up left inside the first measured run
WARM = 3

def universal_chain(n: int = 10) -> fm.Model:
    """``n`` bars on universal joints (cross axes z in A, y in B), the first to the ground."""
    bodies = [fm.RigidBody(f"bar{k}", mass=0.3, inertia=(1e-4, 2.25e-3, 2.25e-3), position=((k - 0.5) * 0.3, 0.0, 0.0))
              for k in range(1, n + 1)]
    joints = [fm.Universal(f"U{k}", "ground" if k == 1 else f"bar{k - 1}", f"bar{k}", point=((k - 1) * 0.3, 0.0, 0.0),
                           axis=(0, 0, 1), axis2=(0, 1, 0)) for k in range(1, n + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, 0.0, -9.81))])


def damped_chain(n: int = 10) -> fm.Model:
    """``n`` bars on revolute joints about y with torsional springs and dampers, the first to the ground."""
    bodies = [fm.RigidBody(f"bar{k}", mass=0.3, inertia=(1e-4, 2.25e-3, 2.25e-3), position=((k - 0.5) * 0.3, 0.0, 0.0))
              for k in range(1, n + 1)]
    joints = [fm.Revolute(f"R{k}", "ground" if k == 1 else f"bar{k - 1}", f"bar{k}", point=((k - 1) * 0.3, 0.0, 0.0),
                          axis=(0, 1, 0), stiffness=0.5, damping=0.02) for k in range(1, n + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, 0.0, -9.81))])


@functools.lru_cache(maxsize=1)
def _bar_data():
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.fe.mesh.structured import structured_box

    mesh = structured_box((1.0, 0.02, 0.02), (10, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4)


def mixed_pendulum() -> fm.Model:
    """A flexible bar (hex20, Craig-Bampton, 4 modes, ``"none"``) pinned to the ground, a rigid 0.5 kg bob
    on a revolute at its tip: rigid and flexible bodies in one model."""
    bar = fm.FlexibleBody("bar", _bar_data(), stiffening="none")
    bob = fm.RigidBody("bob", mass=0.5, inertia=(1e-4, 1e-4, 1e-4), position=(1.1, 0.0, 0.0))
    return fm.Model([bar, bob], [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1)),
                                 fm.Revolute("tip", ("bar", "xmax"), "bob", axis=(0, 0, 1))],
                    [fm.Gravity((0, -9.81, 0))])


def flexible_bar() -> fm.Model:
    """The flexible bar of :func:`mixed_pendulum` alone, pinned to the ground: modal bodies only."""
    bar = fm.FlexibleBody("bar", _bar_data(), stiffening="none")
    return fm.Model([bar], [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1))], [fm.Gravity((0, -9.81, 0))])


#: model, h, p (or a TimeElement), end time; the first two are the targets of compare_exudyn.py, the others
#: used the general path before the fused evaluator (issue 17)
MODELS = {
    "pendulum": (flexmb_pendulum, 1 / 32, 2, 10.0),
    "chain10": (lambda: flexmb_chain(10), 1e-3, 1, 0.3),
    "universal10": (universal_chain, 1e-3, 2, 0.1),
    "damped10": (damped_chain, 1e-3, 1, 0.3),
    "symmetric_pendulum": (flexmb_pendulum, 1 / 32, fm.TimeElement.of_order(2, transport="symmetric"), 5.0),
    "mixed": (mixed_pendulum, 5e-3, 2, 0.2),
    "flexbar": (flexible_bar, 5e-3, 2, 0.2),
}


def _targets():
    """(label, owner, attribute name) of the wrapped functions; owner resolved at call time."""
    import flexmb.dynamics.node.constraints as C
    import flexmb.dynamics.node.projection as PR
    import flexmb.dynamics.march.marching as M
    import flexmb.dynamics.io.recorder as R
    import flexmb.dynamics.energy_audit as EA
    import flexmb.dynamics.node.stage as NS
    import flexmb.dynamics.node.stage_modal as NSM
    import flexmb.dynamics.simulate as S
    import flexmb.dynamics.step.advance as ADV
    from flexmb.dynamics.elements import joints as JN
    from flexmb.dynamics.elements.attachments import AttachmentSet
    from flexmb.dynamics.bodies.rigid import RigidBodies
    from flexmb.dynamics.layout import Pattern
    from flexmb.dynamics.solve.evaluation import GeneralEvaluator
    from flexmb.dynamics.solve.fused import FusedEvaluator
    from flexmb.dynamics.solve.compiled_loop import FusedNewton

    return [
        ("step", S.Run, "step"),
        (" Newton (ElementSystem.newton)", S.ElementSystem, "newton"),
        ("  compiled Newton loop (fused evaluator)", FusedNewton, "solve"),
        ("  evaluate (residual + Jacobian)", S.ElementSystem, "evaluate"),
        ("   fused evaluator (one compiled call)", FusedEvaluator, "triplets"),
        ("   general evaluator", GeneralEvaluator, "triplets"),
        ("    rigid bodies' residual", RigidBodies, "residual"),
        ("    joint_residual", JN, "joint_residual"),
        ("     attachment poses", AttachmentSet, "pose"),
        ("     attachment velocities", AttachmentSet, "velocity"),
        ("     multipliers onto bodies (scatter)", AttachmentSet, "scatter"),
        ("   Pattern.matrix (CSC values)", Pattern, "matrix"),
        ("  factorization (Run.factor)", S.Run, "factor"),
        (" predictor", ADV, "predict_element"),
        (" end values", M, "end_values"),
        ("  compiled end node (rigid node stage)", NS, "end_node"),
        ("  compiled end node (modal node stage)", NSM.ModalPlan, "end_node"),
        ("  multipliers as momenta (gauge reset)", M, "multiplier_momenta"),
        ("  re-orthonormalization", M, "_orthonormalize"),
        (" energy audit (ElementAudit.refused)", EA.ElementAudit, "refused"),
        ("  node values (Recorder.node_values)", R.Recorder, "node_values"),
        ("   compiled node values (rigid node stage)", NS, "node_values"),
        ("   compiled node values (modal node stage)", NSM.ModalPlan, "node_values"),
        (" record internal points", S.Run, "_record"),
        (" record node (Recorder.node)", R.Recorder, "node"),
        ("  node-velocity projection", R, "project_node"),
        ("   NodeFrames (node attachment frames)", C, "node_frames"),
        ("   projection (compiled)", PR.NodeProjector, "project_momenta"),
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
    fm.simulate(mk(), WARM * h, h, p=p, show_progress=False)  # warm-up
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
        fm.simulate(mk(), WARM * h, h, p=p, show_progress=False)
        acc.clear()
        sol = run(name)
    finally:
        for owner, attr, f in saved:
            setattr(owner, attr, f)
    ne = len(sol.stats["iterations"])
    return [(label, 1e3 * acc.get(label, 0.0) / ne) for label, _, _ in _targets()], float(np.mean(sol.stats["iterations"]))


def calls(name: str) -> float:
    mk, h, p, _ = MODELS[name]
    fm.simulate(mk(), WARM * h, h, p=p, show_progress=False)
    pr = cProfile.Profile()
    pr.enable()
    sol = run(name)
    pr.disable()
    return pstats.Stats(pr).total_calls / len(sol.stats["iterations"])


def cpu_per_element(name: str, repeat: int = 2) -> float:
    """CPU seconds per element of ``name``, set-up excluded (see the module docstring)."""
    mk, h, p, t_end = MODELS[name]

    def cpu(t):
        gc.collect()
        gc.disable()
        c0 = time.process_time()
        try:
            sol = fm.simulate(mk(), t, h, p=p, show_progress=False)
        finally:
            gc.enable()
        return time.process_time() - c0, len(sol.stats["iterations"])

    cpu(WARM * h)
    best = np.inf
    for _ in range(repeat):
        c1, n1 = cpu(2 * h)
        c2, n2 = cpu(t_end)
        best = min(best, (c2 - c1) / (n2 - n1))
    return best


def against(other: str, rounds: int, names: list) -> None:
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"this tree": here, other: str(Path(other).resolve())}
    code = ("import json, sys; sys.path.insert(0, 'benchmarks'); import small_models as s; "
            f"print(json.dumps({{n: s.cpu_per_element(n) for n in {names!r}}}))")
    script = Path(__file__).resolve()
    res = {k: [] for k in trees}
    for r in range(rounds):
        for label, root in trees.items():
            # the other tree may predate this script: run this file against its package
            env = {**os.environ, "PYTHONPATH": root}
            out = subprocess.run([sys.executable, "-c", code.replace("'benchmarks'", repr(str(script.parent)))],
                                 cwd=root, env=env, capture_output=True, text=True, check=True)
            res[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {r}: {label}: " + ", ".join(f"{n} {1e6 * v:.0f} us" for n, v in res[label][-1].items()),
                  flush=True)
    for n in names:
        a = min(x[n] for x in res["this tree"])
        b = min(x[n] for x in res[other])
        print(f"{n}: this tree {1e6 * a:.0f} us, {other} {1e6 * b:.0f} us CPU per element: {b / a:.2f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=list(MODELS), nargs="+", help="default: pendulum and chain10")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calls", action="store_true", help="Python calls per element (cProfile run)")
    ap.add_argument("--against", metavar="DIR", help="another checkout: interleaved CPU time per element")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    if args.against:
        against(args.against, args.rounds, args.only or ["pendulum", "chain10"])
        return 0
    for name in args.only or ["pendulum", "chain10"]:
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
