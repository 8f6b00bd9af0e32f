"""The flexible targets of issue 17 D that compare accuracy and time with Exudyn, in one process.

1. **X3, the same linear modal model** (``stiffening="none"``, case X3's rod with the bending + axial
   basis, the model of ``benchmarks/flexible.py``): each program's converged first maximum (flexmb
   p = 3, h = 1e-4; Exudyn h = 1e-5), then runs to a crank angle of 0.9 rad (past the first maximum,
   at ~0.73 rad) at several steps; the wall time of the cheapest run whose first maximum is within
   0.1 % of the program's own converged value.  Target: flexmb's <= Exudyn's.
2. **X3 "full"** (the validated nonlinear model) within 1 % of Meijaard's 0.00976, to 0.9 rad: the
   cheapest flexmb run, against Exudyn's linear-model time of 1.  Target: flexmb's <= Exudyn's.
3. **X1 spin-up**: flexmb ``"full"`` p = 3, h = 0.4 s (20 s) against Exudyn with the stiffening user
   function (h = 1e-3 s, 20 s).  Target: flexmb <= 0.2 x Exudyn.

First maxima: flexmb from the order-4 dense output every 2e-6 s (``Solution.at``), Exudyn from its
sensor at every step.  Wall time of ``simulate`` / ``SolveDynamic``; every flexmb configuration is
run once before it is timed (compiled kernels).  X3's runs (tens of ms) are timed ``--repeat`` times
each, both programs alike, and the fastest counts (``walls`` lists them all): on the shared 2-core
machine one run's wall time moved by 2x with the load.  The scans pick each program's cheapest run; those
runs are then timed again in turn (flexmb linear, Exudyn, flexmb "full", seven rounds), and the ratios come
from these alternating rounds (``x3_head_to_head``): a scan of one program minutes after the other's
compared the machine's two moments as much as the programs (X3 linear 0.93x and 1.26x in two targets runs
ten minutes apart).  The alternating rounds take each program's :data:`CANDIDATES` cheapest runs of the scan
that meet the accuracy, and each program's fastest of them counts (``chosen``): the scan's single cheapest
run was itself one moment's choice (flexmb p = 3 picked over p = 2 at h = 1e-3 when p = 2's scan run fell in
a slow phase: 1.58x instead of ~1.1x).

    python benchmarks/flexible_targets.py [--json results/flexible_targets.json] [--only x3 x1] [--repeat 3]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import flexmb as fm  # noqa: E402
from flexible import exu, exudyn_crank, exudyn_spinup, flexmb_crank, flexmb_spinup, spinup_data  # noqa: E402
from flexmb.validation.cases import case_x3  # noqa: E402

ANGLE = 0.9  # rad of crank: past the first maximum
FLEXMB_LINEAR = ((2, 2e-3), (2, 1e-3), (2, 5e-4), (2, 2.5e-4), (3, 2e-3), (3, 1e-3), (3, 5e-4))
FLEXMB_FULL = ((2, 2e-3), (2, 1e-3), (3, 2e-3), (3, 1e-3), (2, 5e-4))
EXUDYN_LINEAR = (2e-4, 1e-4, 5e-5, 2.5e-5, 1.25e-5)
REF_FULL = 0.00976


REPEAT = 3  # X3's timed runs: the fastest of this many (--repeat)
CANDIDATES = 2  # each program's cheapest runs of the scan timed again in the alternating rounds
HEAD_TO_HEAD = 7  # rounds of the chosen runs timed in turn (flexmb linear, Exudyn, flexmb "full")


def fastest(run, repeat: int) -> dict:
    """The fastest of ``repeat`` calls of ``run() -> dict`` (its ``wall``), with every wall time in ``walls``."""
    rows = [run() for _ in range(repeat)]
    best = dict(min(rows, key=lambda r: r["wall"]))
    best["walls"] = [r["wall"] for r in rows]
    return best


def head_to_head(runs: dict, rounds: int) -> dict:
    """``runs``: name -> ``run() -> dict`` (its ``wall``), called in turn ``rounds`` times (a, b, c, a, b, c, ...)
    so that the machine's drift over the minutes of a scan falls on all alike; the fastest wall of each
    (``best``) and every wall (``walls``)."""
    walls = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            walls[name].append(run()["wall"])
    return dict(best={name: min(w) for name, w in walls.items()}, walls=walls, rounds=rounds)


def timed_crank(data, p, h, stiffening, repeat: int):
    flexmb_crank(data, p, 2 * h, stiffening, angle=case_x3.OMEGA_X3 * 2 * h)  # compiled kernels, caches
    return fastest(lambda: flexmb_crank(data, p, h, stiffening, angle=ANGLE), repeat)


def x3(out: dict, repeat: int = REPEAT) -> None:
    data = case_x3.rod_data()
    ref_f = flexmb_crank(data, 3, 1e-4, "none", angle=ANGLE)["first_max"]
    print(f"\nX3, linear modal model, to {ANGLE} rad: flexmb converged first maximum {ref_f:.7f} (p = 3, h = 1e-4)")
    print(f"{'program':<10}{'p':>3}{'h':>10}{'wall [s]':>10}{'first max':>12}{'vs own conv.':>14}")
    rows = []
    for p, h in FLEXMB_LINEAR:
        r = timed_crank(data, p, h, "none", repeat)
        r["error"] = abs(r["first_max"] / ref_f - 1)
        rows.append(r)
        print(f"{'flexmb':<10}{p:>3}{h:>10.3g}{r['wall']:>10.3f}{r['first_max']:>12.7f}{100 * r['error']:>13.3f}%", flush=True)
    best_f = min((r for r in rows if r["error"] <= 1e-3), key=lambda r: r["wall"], default=None)
    out["x3_linear"] = dict(flexmb_reference=ref_f, flexmb=rows, flexmb_best=best_f)
    best_e = None
    if exu is not None:
        ref_e = exudyn_crank(data, 1e-5, angle=ANGLE)["first_max"]
        erows = []
        for h in EXUDYN_LINEAR:
            e = fastest(lambda: exudyn_crank(data, h, angle=ANGLE), repeat)
            e["error"] = abs(e["first_max"] / ref_e - 1)
            erows.append(e)
            print(f"{'Exudyn':<10}{'GA':>3}{h:>10.3g}{e['wall']:>10.3f}{e['first_max']:>12.7f}{100 * e['error']:>13.3f}%"
                  f"  (converged {ref_e:.7f}, h = 1e-5)", flush=True)
        best_e = min((e for e in erows if e["error"] <= 1e-3), key=lambda e: e["wall"], default=None)
        out["x3_linear"].update(exudyn_reference=ref_e, exudyn=erows, exudyn_best=best_e)
    if best_f and best_e:
        print(f"within 0.1 %: flexmb {best_f['wall']:.3f} s (p = {best_f['p']}, h = {best_f['h']:g}), Exudyn "
              f"{best_e['wall']:.3f} s (h = {best_e['h']:g}): ratio {best_f['wall'] / best_e['wall']:.2f} (target <= 1)")
    frows = []
    for p, h in FLEXMB_FULL:
        r = timed_crank(data, p, h, "full", repeat)
        r["error"] = abs(r["first_max"] / REF_FULL - 1)
        frows.append(r)
        print(f"{'flexmb full':<10}{p:>3}{h:>10.3g}{r['wall']:>10.3f}{r['first_max']:>12.7f}{100 * r['error']:>13.3f}%"
              f" vs 0.00976", flush=True)
    best = min((r for r in frows if r["error"] <= 0.01), key=lambda r: r["wall"], default=None)
    out["x3_full"] = dict(flexmb=frows, flexmb_best=best)
    if best and best_e:
        print(f"'full' within 1 % of 0.00976: flexmb {best['wall']:.3f} s (p = {best['p']}, h = {best['h']:g}) against "
              f"Exudyn's linear model {best_e['wall']:.3f} s: ratio {best['wall'] / best_e['wall']:.2f} (target <= 1)")
    if best_f and best_e:  # each program's cheapest runs again, alternating: the ratios the targets read
        def cheapest(rows_, tol):
            return sorted((r for r in rows_ if r["error"] <= tol), key=lambda r: r["wall"])[:CANDIDATES]

        cands = {"linear": [(r, (lambda r=r: flexmb_crank(data, r["p"], r["h"], "none", angle=ANGLE)))
                            for r in cheapest(rows, 1e-3)],
                 "exudyn": [(r, (lambda r=r: exudyn_crank(data, r["h"], angle=ANGLE))) for r in cheapest(erows, 1e-3)],
                 "full": [(r, (lambda r=r: flexmb_crank(data, r["p"], r["h"], "full", angle=ANGLE)))
                          for r in cheapest(frows, 0.01)]}
        runs = {(name, k): fn for name, lst in cands.items() for k, (_, fn) in enumerate(lst)}
        hh = head_to_head(runs, max(HEAD_TO_HEAD, repeat))
        chosen, best_w = {}, {}
        for name, lst in cands.items():
            if lst:
                k = min(range(len(lst)), key=lambda k: hh["best"][(name, k)])
                chosen[name] = lst[k][0]
                best_w[name] = hh["best"][(name, k)]
        out["x3_head_to_head"] = dict(best=best_w, rounds=hh["rounds"],
                                      walls={f"{name} {k}": w for (name, k), w in hh["walls"].items()},
                                      candidates={name: [dict(p=r.get("p"), h=r["h"]) for r, _ in lst]
                                                  for name, lst in cands.items()})
        # the runs the ratios read (the scan's own cheapest stay as *_scan)
        out["x3_linear"]["flexmb_best_scan"], out["x3_linear"]["flexmb_best"] = best_f, chosen["linear"]
        out["x3_linear"]["exudyn_best_scan"], out["x3_linear"]["exudyn_best"] = best_e, chosen["exudyn"]
        if "full" in chosen:
            out["x3_full"]["flexmb_best_scan"], out["x3_full"]["flexmb_best"] = best, chosen["full"]
        w = best_w
        print(f"alternating each program's {CANDIDATES} cheapest runs {hh['rounds']} times (fastest of each): flexmb "
              f"linear {w['linear']:.3f} s (p = {chosen['linear']['p']}, h = {chosen['linear']['h']:g}), Exudyn "
              f"{w['exudyn']:.3f} s (h = {chosen['exudyn']['h']:g}): ratio {w['linear'] / w['exudyn']:.2f}"
              + (f"; 'full' {w['full']:.3f} s (p = {chosen['full']['p']}, h = {chosen['full']['h']:g}): ratio "
                 f"{w['full'] / w['exudyn']:.2f}" if "full" in w else ""))


def x1(out: dict) -> None:
    data = spinup_data()
    flexmb_spinup(data, 3, 0.4, "full", t_end=0.8)  # compiled kernels
    f = flexmb_spinup(data, 3, 0.4, "full")
    print(f"\nX1 spin-up, 20 s: flexmb full p = 3, h = 0.4: {f['wall']:.3f} s, extreme {f['extreme']:.5f} m")
    out["x1"] = dict(flexmb=f)
    if exu is not None:
        e = exudyn_spinup(data, stiffening=True)
        out["x1"]["exudyn_stiffening_uf"] = e
        print(f"Exudyn + stiffening user function, h = 1e-3: {e['wall']:.3f} s, extreme {e['extreme']:.5f} m: "
              f"ratio {f['wall'] / e['wall']:.3f} (target <= 0.2)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=("x3", "x1"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--repeat", type=int, default=REPEAT, help="X3: time each run this many times, keep the fastest")
    args = ap.parse_args(argv)
    repeat = max(1, args.repeat)
    out = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"), load=os.getloadavg(),
               flexmb=fm.__version__, repeat=repeat)
    parts = set(args.only or ("x3", "x1"))
    if "x3" in parts:
        x3(out, repeat)
    if "x1" in parts:
        x1(out)
    print(f"load {out['load'][0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; X3: the fastest of {repeat} runs")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
