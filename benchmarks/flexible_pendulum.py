"""Flexible pendulum against the rigid pendulum: cost per time element against the number of modes
(issue 17 D), in one process.

Rigid reference: the IFToMM A01 pendulum of ``benchmarks/compare_exudyn.py`` (1 kg point mass on a
1 m massless rod, revolute), p = 2, h = 1/32 s, 10 s.  Flexible pendulum: an aluminium bar 1 m x 5 cm
x 5 cm (E = 7e10 Pa, nu = 0.3, rho = 2700 kg/m^3), hex20 24 x 2 x 2, Craig-Bampton with the
interfaces ``xmin`` (the floating frame, pinned to the ground by a revolute about z) and ``xmax``,
64 shapes (6 constraint modes of ``xmax`` and 58 fixed-interface modes), built once and cached;
bodies with ``nm`` modes keep the ``nm`` lowest shapes (``modes=range(nm)``: the dropped stiffer ones
condensed into the quartic energy).  Released horizontally at rest under gravity, p = 2, h = 1/32 s,
2 s (64 elements; 10 s at nm <= 8), ``stiffening="none"`` and ``"full"``.  Each run is preceded by
a 3-element warm-up of the same model (compiled kernels, pattern).

Reported per run: wall time per element of the ``simulate`` call (``sol.meta["wall_time"]`` over
the elements) and its CPU time (``time.process_time``: steadier on a shared machine), Newton evaluations per element, and the ranks of the strain-energy factors.  Then:
the ratio to the rigid pendulum at 4 and 8 modes (target <= 3), the fitted exponent of the cost in
nm over 8 ... 64 (target <= 2), ``"full"`` / ``"none"`` at 32 modes (target <= 1.5).  The ratios come from
the runs they compare timed again in turn (the rigid pendulum, 4, 8 and 32 modes, "none" and "full":
:data:`HEAD_TO_HEAD` rounds, the fastest of each): timed one after the other in the scan, they compared
two moments of a machine whose speed moves by 1.5x within minutes (the scan's 32-mode "full" / "none" read
0.86, 1.60 and 2.24 in three targets runs, 1.06-1.44 alternating; 8 modes "none" 1.77-3.72x the rigid
pendulum).  The scan's own ratios are kept with the suffix ``_scan``.

    python benchmarks/flexible_pendulum.py                  # nm = 2 4 8 16 32 64
    python benchmarks/flexible_pendulum.py --modes 4 8 16 --json results/flexible_pendulum.json
    python benchmarks/flexible_pendulum.py --repeat 3       # each figure the fastest of 3 runs

The CPU time covers the whole ``simulate`` call (set-up included), the wall time only its time loop: compare
wall with wall.  One run per figure can land on a busy moment of a shared machine (the 32-mode
"full" / "none" ratio read 1.11-1.58 in single runs): ``--repeat`` keeps the fastest of several.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from compare_exudyn import flexmb_pendulum  # noqa: E402
from flexible_targets import head_to_head as in_turn  # noqa: E402  (X3's rounds: the same timing in turn)

H, P = 1 / 32, 2
MODES = (2, 4, 8, 16, 32, 64)
#: rounds of the runs the ratios compare, timed in turn (or --repeat, if larger)
HEAD_TO_HEAD = 7
TARGETS = dict(ratio_rigid=3.0, exponent=2.0, full_over_none=1.5)


def bar_mesh():
    from flexmb.fe.mesh import Material
    from flexmb.fe.mesh.structured import structured_box

    return structured_box((1.0, 0.05, 0.05), (24, 2, 2), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=7e10, nu=0.3, rho=2700.0))


def bar_data(n_shapes: int = 64):
    """The Craig-Bampton bar with ``n_shapes`` shapes (cached in the flexmb cache directory)."""
    from flexmb.fe.reduction.body_data import FlexibleBodyData, build_flexible_body

    base = Path(os.environ.get("FLEXMB_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flexmb")
    path = base / f"bench_pendulum_bar_{n_shapes}.npz"
    if path.exists():
        try:
            data = FlexibleBodyData.load(path)
            if data.energy_factors is not None:
                return data
        except Exception:  # rebuilt below
            pass
    t0 = time.perf_counter()
    data = build_flexible_body(bar_mesh(), interfaces=["xmin", "xmax"], n_modes=n_shapes - 6, name="bar")
    print(f"built the bar data ({data.n_modes} shapes) in {time.perf_counter() - t0:.0f} s", flush=True)
    base.mkdir(parents=True, exist_ok=True)
    data.save(path)
    return data


def flexible_model(data, nm: int, stiffening: str) -> fm.Model:
    body = fm.FlexibleBody("bar", data, modes=list(range(nm)), stiffening=stiffening, damping=0.0)
    pin = fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1))
    return fm.Model([body], [pin], [fm.Gravity((0.0, -9.81, 0.0))])


def per_element(model_fn, t_end: float, repeat: int = 1) -> dict:
    """Wall time per element of a run (after a 3-element warm-up of the same model); with ``repeat`` > 1
    the fastest of that many runs (wall and CPU each their minimum: the machine's load only adds)."""
    fm.simulate(model_fn(), 3 * H, H, p=P, show_progress=False)
    walls, cpus = [], []
    for _ in range(repeat):
        c0 = time.process_time()
        sol = fm.simulate(model_fn(), t_end, H, p=P, show_progress=False)
        cpus.append(time.process_time() - c0)
        walls.append(sol.meta["wall_time"])
    ne = len(sol.stats["iterations"])
    return dict(elements=ne, ms=1e3 * min(walls) / ne, cpu_ms=1e3 * min(cpus) / ne,
                iterations=float(np.mean(sol.stats["iterations"])), repeat=repeat)


def head_to_head(model_fns: dict, rounds: int) -> dict:
    """The models of ``model_fns`` (name -> ``(model function, t_end)``) run in turn ``rounds`` times after
    a warm-up each (:func:`flexible_targets.head_to_head`'s rounds): the fastest wall time per element of
    each [ms] (``best``) and all (``walls``)."""
    def per_element_ms(fn, t_end):
        sol = fm.simulate(fn(), t_end, H, p=P, show_progress=False)
        return dict(wall=1e3 * sol.meta["wall_time"] / len(sol.stats["iterations"]))

    for fn, _ in model_fns.values():
        fm.simulate(fn(), 3 * H, H, p=P, show_progress=False)
    return in_turn({name: (lambda fn=fn, t_end=t_end: per_element_ms(fn, t_end))
                    for name, (fn, t_end) in model_fns.items()}, rounds)


def fit_exponent(nm, cost) -> float:
    return float(np.polyfit(np.log(nm), np.log(cost), 1)[0])


def write_json(path: Path | None, out: dict) -> None:
    """``out`` as JSON at ``path`` (nothing when ``path`` is None)."""
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", type=int, nargs="+", default=list(MODES))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration, the fastest kept")
    args = ap.parse_args(argv)
    data = bar_data(max(64, max(args.modes)))
    out = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
               load=os.getloadavg(), machine=platform.processor() or platform.machine(), flexmb=fm.__version__,
               h=H, p=P, runs=[])
    rigid = per_element(flexmb_pendulum, 10.0, args.repeat)
    out["rigid"] = rigid
    print(f"rigid pendulum (IFToMM A01): {rigid['ms']:.3f} ms per element ({rigid['cpu_ms']:.3f} CPU), "
          f"{rigid['iterations']:.2f} iterations")
    print(f"{'nm':>4} {'stiffening':>10} {'ms/elem':>9} {'x rigid':>8} {'CPU ms':>8} {'x rigid':>8} {'its':>5} {'R3':>4} {'R4':>5}")
    for nm in args.modes:
        for stiff in ("none", "full"):
            model = flexible_model(data, nm, stiff)
            f = model.bodies[0].data.energy_factors
            r = per_element(lambda: flexible_model(data, nm, stiff), 10.0 if nm <= 8 else 2.0, args.repeat)
            r.update(nm=nm, stiffening=stiff, ranks=list(f.ranks) if stiff == "full" else [0, 0])
            out["runs"].append(r)
            print(f"{nm:>4} {stiff:>10} {r['ms']:>9.3f} {r['ms'] / rigid['ms']:>8.2f} {r['cpu_ms']:>8.3f} "
                  f"{r['cpu_ms'] / rigid['cpu_ms']:>8.2f} {r['iterations']:>5.2f} "
                  f"{r['ranks'][0]:>4} {r['ranks'][1]:>5}", flush=True)
    summary = {}
    for stiff in ("none", "full"):
        rows = [r for r in out["runs"] if r["stiffening"] == stiff]
        big = [r for r in rows if r["nm"] >= 8]
        if len(big) >= 2:
            summary[f"exponent_{stiff}"] = fit_exponent([r["nm"] for r in big], [r["ms"] for r in big])
        for r in rows:
            if r["nm"] in (4, 8):
                summary[f"ratio_rigid_{stiff}_{r['nm']}_scan"] = r["ms"] / rigid["ms"]
                summary[f"cpu_ratio_rigid_{stiff}_{r['nm']}"] = r["cpu_ms"] / rigid["cpu_ms"]
    f32 = {r["stiffening"]: r["ms"] for r in out["runs"] if r["nm"] == 32}
    if len(f32) == 2:
        summary["full_over_none_32_scan"] = f32["full"] / f32["none"]
    # the ratios' runs again, in turn (module docstring)
    runs = {"rigid": (flexmb_pendulum, 10.0)}
    for nm in [m for m in (4, 8, 32) if m in args.modes]:
        for stiff in ("none", "full"):
            runs[f"{stiff} {nm}"] = ((lambda nm=nm, stiff=stiff: flexible_model(data, nm, stiff)), 10.0 if nm <= 8 else 2.0)
    if len(runs) > 1:
        hh = out["head_to_head"] = head_to_head(runs, max(HEAD_TO_HEAD, args.repeat))
        b = hh["best"]
        for key in [k for k in b if k != "rigid" and not k.endswith(" 32")]:
            stiff, nm = key.split()
            summary[f"ratio_rigid_{stiff}_{nm}"] = b[key] / b["rigid"]
        if "none 32" in b:
            summary["full_over_none_32"] = b["full 32"] / b["none 32"]
        print(f"timed in turn {hh['rounds']} times (fastest of each), ms per element: "
              + ", ".join(f"{k} {v:.3f}" for k, v in b.items()))
    out["summary"] = summary
    print("summary:", ", ".join(f"{k} {v:.2f}" for k, v in summary.items()))
    print(f"targets: x rigid <= {TARGETS['ratio_rigid']} at 4 and 8 modes, exponent <= {TARGETS['exponent']}, "
          f"full / none <= {TARGETS['full_over_none']} at 32 modes; load {os.getloadavg()[0]:.1f}")
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
