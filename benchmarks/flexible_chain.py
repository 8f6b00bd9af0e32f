"""Chain of K flexible bars against Exudyn's chain of ``ObjectFFRFreducedOrder`` bodies (issue 17 D).

Each bar: the aluminium bar of ``benchmarks/flexible_pendulum.py`` (1 m x 5 cm x 5 cm, hex20 24 x 2 x 2)
with 8 Craig-Bampton shapes (``xmin`` the floating frame, ``xmax``: 6 constraint modes and 2
fixed-interface modes), ``stiffening="none"`` (the same linear modal body in both programs).  Bar k
lies along x from (k - 1) m; revolutes about z join the ground to bar 1's ``xmin`` and bar k - 1's
``xmax`` to bar k's ``xmin``; gravity -9.81 m/s^2 along y; released at rest.

flexmb: p = 2, h = 1/64 s, 0.25 s (16 elements) after a 3-element warm-up of the same model; cost
per element = ``sol.meta["wall_time"]`` / elements.  Exudyn 1.13.6: the same mesh, mass and
stiffness matrices and mode shapes through ``FEMinterface`` / ``ObjectFFRFreducedOrderInterface``
(as ``benchmarks/flexible.py``), one ``AddObjectFFRFreducedOrder`` per bar (gravity on each),
``GenericJoint`` with the rotation about z free between the ground / ``MarkerSuperElementRigid`` of
the ``xmax`` face nodes and ``MarkerNodeRigid`` of the next bar's frame node (the ``xmin`` face is
the frame: the modes vanish there); generalized-alpha (spectral radius 0.9), modified Newton,
``EigenSparse``, the same h; cost per step = time of ``SolveSteps`` / steps.

Targets: fitted exponent of flexmb's cost in K over 1 ... 64 <= 1.1; flexmb per element <= 2 x
Exudyn per step at K = 16 and 64.

    python benchmarks/flexible_chain.py                  # K = 1 2 4 8 16 32 64
    python benchmarks/flexible_chain.py --K 1 4 16 --json results/flexible_chain.json
    python benchmarks/flexible_chain.py --baseline       # also the former Newton path, in the same run

``--baseline``: each K is also run the way Newton ran before the compiled loop covered the reuse within
the element (2026-11-29, main 0463444): ``reuse="auto"`` resolving to ``"element"`` from 2000 unknowns
(``reuse_min_unknowns=2000``: K >= 16; full Newton, compiled, below) and those elements solved by the
Python loop of ``newton_solve`` (``Stages.newton``); ``now / baseline`` is the ratio of the two costs.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import exudyn_steps  # noqa: E402
from exudyn_setup import exu  # noqa: E402
from flexible import exudyn_interface  # noqa: E402
from flexible_pendulum import bar_mesh, write_json  # noqa: E402

H, P, T_END = 1 / 64, 2, 0.25
KS = (1, 2, 4, 8, 16, 32, 64)
TARGETS = dict(exponent=1.1, ratio_exudyn=2.0)


def bar8_data():
    """The bar with 8 Craig-Bampton shapes (cached like the pendulum's)."""
    from flexmb.fe.reduction.body_data import FlexibleBodyData, build_flexible_body

    base = Path(os.environ.get("FLEXMB_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flexmb")
    path = base / "bench_chain_bar_8.npz"
    if path.exists():
        try:
            return FlexibleBodyData.load(path)
        except Exception:  # rebuilt below
            pass
    data = build_flexible_body(bar_mesh(), interfaces=["xmin", "xmax"], n_modes=2, name="bar", quartic=False)
    base.mkdir(parents=True, exist_ok=True)
    data.save(path)
    return data


def flexmb_chain(data, K: int) -> fm.Model:
    bodies = [fm.FlexibleBody(f"bar{k}", data, position=(k - 1.0, 0.0, 0.0), stiffening="none", damping=0.0)
              for k in range(1, K + 1)]
    joints = [fm.Revolute("J1", "ground", ("bar1", "xmin"), axis=(0, 0, 1))]
    joints += [fm.Revolute(f"J{k}", (f"bar{k - 1}", "xmax"), (f"bar{k}", "xmin"), axis=(0, 0, 1)) for k in range(2, K + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, -9.81, 0.0))])


def _python_loop(system, st, h, U0, scale, factor, options):
    """``Stages.newton`` that solves the elements with reuse within the element by ``newton_solve``'s
    Python loop (the others as a run does: ``ElementSystem.newton``)."""
    from flexmb.dynamics.solve.newton import newton_solve

    if options.reuse_mode(U0.size) != "element":
        return system.newton(st, h, U0, scale, factor, options)
    system.newton_calls["general"] += 1
    return newton_solve(lambda U: system.evaluate(U, st, h), U0, scale, factor, options,
                        residual=lambda U: system.residual(U, st, h))


def _simulate(model, t_end: float, baseline: bool):
    if not baseline:
        return fm.simulate(model, t_end, H, p=P, show_progress=False)
    from flexmb.dynamics.simulate import Run
    from flexmb.dynamics.solve.newton import NewtonOptions
    from flexmb.dynamics.step.advance import Stages

    opts = fm.SimulationOptions(newton=NewtonOptions(reuse_min_unknowns=2000))
    run = Run.start(model, t_end, H, P, 0.0, opts, stages=Stages(newton=_python_loop))
    return run.go(show_progress=False)


def flexmb_cost(data, K: int, baseline: bool = False, repeat: int = 1) -> dict:
    """Cost per element of the 0.25 s run (the fastest of ``repeat`` runs) after the warm-up."""
    model = flexmb_chain(data, K)
    _simulate(model, 3 * H, baseline)
    best = None
    for _ in range(repeat):
        gc.collect()
        sol = _simulate(model, T_END, baseline)
        if best is None or sol.meta["wall_time"] < best.meta["wall_time"]:
            best = sol
    sol = best
    ne = len(sol.stats["iterations"])
    return dict(ms=1e3 * sol.meta["wall_time"] / ne, iterations=float(np.mean(sol.stats["iterations"])),
                factorizations=float(np.mean(sol.stats["factorizations"])),
                y_tip=float(sol.body(f"bar{K}").interface("xmax").position[-1, 1]))


def exudyn_cost(data, K: int) -> dict:
    from exudyn.itemInterface import GenericJoint, MarkerBodyRigid, MarkerNodeRigid, MarkerSuperElementRigid, ObjectGround

    mesh = bar_mesh()
    cms = exudyn_interface(data, mesh)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    face = np.asarray(mesh.node_sets["xmax"])
    prev = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    for k in range(K):
        obj = cms.AddObjectFFRFreducedOrder(mbs, positionRef=[float(k), 0, 0], gravity=[0, -9.81, 0])
        frame = mbs.AddMarker(MarkerNodeRigid(nodeNumber=obj["nRigidBody"]))
        mbs.AddObject(GenericJoint(markerNumbers=[prev, frame], constrainedAxes=[1, 1, 1, 1, 1, 0]))
        prev = mbs.AddMarker(MarkerSuperElementRigid(bodyNumber=obj["oFFRFreducedOrder"], offset=[0, 0, 0],
                                                     meshNodeNumbers=face,
                                                     weightingFactors=np.full(face.size, 1.0 / face.size)))
    r = exudyn_steps(mbs, H, int(round(T_END / H)), T_END)
    return dict(ms=1e3 * r["per_step"], iterations=r["iterations"], completed=r["completed"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, nargs="+", default=list(KS))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--baseline", action="store_true", help="also run the former Newton path (module docstring)")
    ap.add_argument("--repeat", type=int, default=1, help="flexmb: the fastest of this many runs (default 1)")
    args = ap.parse_args(argv)
    data = bar8_data()
    out = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"), load=os.getloadavg(),
               flexmb=fm.__version__, h=H, p=P, t_end=T_END, rows=[])
    print(f"chain of K flexible bars ({data.n_modes} modes each), h = {H:g} s, {T_END} s; ms per element / step")
    print(f"{'K':>4} {'flexmb ms':>10} {'its':>5} {'Exudyn ms':>10} {'its':>5} {'ratio':>7}"
          + (f" {'baseline ms':>11} {'its':>5} {'now / baseline':>15}" if args.baseline else ""))
    for K in args.K:
        f = flexmb_cost(data, K, repeat=args.repeat)
        e = exudyn_cost(data, K) if exu is not None else None
        row = dict(K=K, flexmb=f, exudyn=e, ratio=None if e is None else f["ms"] / e["ms"])
        if args.baseline:
            row["baseline"] = flexmb_cost(data, K, baseline=True, repeat=args.repeat)
        out["rows"].append(row)
        py = row.get("baseline")
        print(f"{K:>4} {f['ms']:>10.2f} {f['iterations']:>5.2f} "
              + ("" if e is None else f"{e['ms']:>10.3f} {e['iterations']:>5.2f} {row['ratio']:>6.2f}x"
                 + ("" if e["completed"] else " (Exudyn did not complete)"))
              + ("" if py is None else f" {py['ms']:>11.2f} {py['iterations']:>5.2f} {f['ms'] / py['ms']:>14.2f}x"),
              flush=True)
    if len(out["rows"]) >= 2:
        Ks = [r["K"] for r in out["rows"]]
        out["exponent_flexmb"] = float(np.polyfit(np.log(Ks), np.log([r["flexmb"]["ms"] for r in out["rows"]]), 1)[0])
        msg = f"fitted exponent of flexmb's cost in K: {out['exponent_flexmb']:.2f} (target <= {TARGETS['exponent']})"
        if exu is not None:
            out["exponent_exudyn"] = float(np.polyfit(np.log(Ks), np.log([r["exudyn"]["ms"] for r in out["rows"]]), 1)[0])
            msg += f", Exudyn {out['exponent_exudyn']:.2f}"
        print(msg)
    print(f"target: flexmb <= {TARGETS['ratio_exudyn']} x Exudyn at K = 16 and 64; load {os.getloadavg()[0]:.1f}")
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
