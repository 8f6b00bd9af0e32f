"""Every performance target of issue 17 D in one run: one table with the figure, the target, met or not,
and the load during each part (the acceptance asks for the targets "measured in one run and recorded
with date and load").

Runs, one after the other, each in its own process with this tree's ``flexmb`` (``PYTHONPATH`` set to
the tree holding this script) and its figures written to JSON in ``--out``:

1. ``compare_exudyn.py``: the rigid targets (N-link chain at N = 10 <= 5x Exudyn's step, N = 1000 and
   3000 <= 2x, fitted exponent N = 100 ... 3000 <= 1.1; 15-link chain to 1e-5 m faster than Exudyn and
   to 1e-7 m in under 1 s; IFToMM pendulum <= 0.3 ms per element);
2. ``flexible_pendulum.py``: flexible pendulum <= 3x the rigid pendulum per element at 4 and 8 modes,
   fitted exponent over 8 ... 64 modes <= 2 (``"none"`` and ``"full"``), ``"full"`` <= 1.5x ``"none"``
   at 32 modes;
3. ``flexible_chain.py --repeat 3``: chain of K flexible bars (8 modes) <= 2x Exudyn's step at K = 16 and
   64, fitted exponent K = 1 ... 64 <= 1.1;
4. ``flexible_targets.py``: X3 linear within 0.1 % and X3 ``"full"`` within 1 % of 0.00976 in no more
   than Exudyn's linear-model time; X1 <= 0.2x Exudyn's stiffened run;
5. ``flexmb demo slider-crank``: the demo's simulation <= 5 s;
6. with ``--suite``: ``make test``'s command (the fast suite) <= 3 minutes wall.

Ratios are those of one process each (the machine is noisy: the load average is recorded before and
after every part).  Takes ~10 minutes (15 with ``--suite``) on a quiet 2-core machine.

    python benchmarks/targets.py [--out results/targets] [--suite] [--only rigid flexpend flexchain x3 demo]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
PARTS = ("rigid", "flexpend", "flexchain", "x3", "demo", "suite")


def run(cmd: list[str], log: Path) -> tuple[float, tuple[float, float], str]:
    """Run ``cmd`` from the tree's root with this tree's flexmb; its output teed into ``log``.  Returns the
    wall time [s], the 1-minute load average before and after, and the output."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    l0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    log.write_text(out)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode}); its output: {log}")
    return wall, (l0, os.getloadavg()[0]), out


def row(measure: str, value: float | None, target: float, fmt: str = "{:.2f}x", note: str = "") -> dict:
    met = None if value is None else bool(value <= target)
    return dict(measure=measure, value=value, shown="n/a" if value is None else fmt.format(value),
                target=f"<= {fmt.format(target)}", met=met, note=note)


def rigid_rows(js: dict) -> list[dict]:
    rows = []
    chain = js.get("chain", {})
    for r in chain.get("rows", []):
        if r.get("target") is not None:
            rows.append(row(f"rigid N = {r['n']} chain, per step vs Exudyn", r["ratio"], r["target"],
                            note=f"{1e3 * r['flexmb']['per_step']:.2f} ms vs {1e3 * r['exudyn']['per_step']:.3f} ms"))
    if "exponent_flexmb" in chain:
        rows.append(row("rigid chain exponent N = 100 ... 3000", chain["exponent_flexmb"], 1.1, "{:.2f}"))
    acc = js.get("accuracy", {})
    cross = acc.get("at_1e-5", {})
    ex = cross.get("Exudyn")
    best = min((c for k, c in cross.items() if k != "Exudyn" and c), key=lambda c: c["wall"], default=None)
    if best and ex:
        rows.append(row("15-link chain to 1e-5 m, wall vs Exudyn", best["wall"] / ex["wall"], 1.0,
                        note=f"{best['wall']:.2f} s vs {ex['wall']:.2f} s"))
    best7 = min((c for c in acc.get("at_1e-7", {}).values() if c), key=lambda c: c["wall"], default=None)
    if best7:
        rows.append(row("15-link chain to 1e-7 m, wall [s]", best7["wall"], 1.0, "{:.2f} s",
                        "extrapolated" if best7["extrapolated"] else ""))
    pend = js.get("pendulum", {})
    if pend.get("flexmb"):
        f = min(r["per_step"] for r in pend["flexmb"])
        rows.append(row("IFToMM pendulum p = 2, ms per element", 1e3 * f, 0.3, "{:.3f} ms",
                        f"{pend.get('ratio', float('nan')):.0f}x Exudyn's step"))
    return rows


def flexpend_rows(js: dict) -> list[dict]:
    s = js["summary"]
    rows = []
    for stiff in ("none", "full"):
        for nm in (4, 8):
            k = f"ratio_rigid_{stiff}_{nm}"
            if k in s:
                rows.append(row(f"flexible pendulum {nm} modes '{stiff}' vs rigid", s[k], 3.0,
                                note=f"CPU {s.get('cpu_' + k, float('nan')):.2f}x"))
        if f"exponent_{stiff}" in s:
            rows.append(row(f"flexible pendulum exponent 8 ... 64 modes '{stiff}'", s[f"exponent_{stiff}"], 2.0, "{:.2f}"))
    if "full_over_none_32" in s:
        rows.append(row("flexible pendulum 'full' / 'none' at 32 modes", s["full_over_none_32"], 1.5))
    return rows


def flexchain_rows(js: dict) -> list[dict]:
    rows = [row(f"flexible chain K = {r['K']} vs Exudyn", r["ratio"], 2.0,
                note=f"{r['flexmb']['ms']:.2f} ms vs {r['exudyn']['ms']:.2f} ms")
            for r in js["rows"] if r["K"] in (16, 64) and r.get("ratio") is not None]
    if "exponent_flexmb" in js:
        rows.append(row("flexible chain exponent K = 1 ... 64", js["exponent_flexmb"], 1.1, "{:.2f}"))
    return rows


def x3_rows(js: dict) -> list[dict]:
    rows = []
    lin, full = js.get("x3_linear", {}), js.get("x3_full", {})
    e, f = lin.get("exudyn_best"), lin.get("flexmb_best")
    hh = js.get("x3_head_to_head", {}).get("best", {})  # the chosen runs timed alternating (flexible_targets.py)
    if e and f:
        fw, ew = hh.get("linear", f["wall"]), hh.get("exudyn", e["wall"])
        rows.append(row("X3 linear within 0.1 %, wall vs Exudyn", fw / ew, 1.0,
                        note=f"{fw:.3f} s (p = {f['p']}, h = {f['h']:g}) vs {ew:.3f} s (h = {e['h']:g})"))
    b = full.get("flexmb_best")
    if b and e:
        bw, ew = hh.get("full", b["wall"]), hh.get("exudyn", e["wall"])
        rows.append(row("X3 'full' within 1 %, wall vs Exudyn's linear", bw / ew, 1.0,
                        note=f"{bw:.3f} s (p = {b['p']}, h = {b['h']:g})"))
    x1 = js.get("x1", {})
    if "exudyn_stiffening_uf" in x1:
        rows.append(row("X1 spin-up 'full' vs Exudyn + stiffening", x1["flexmb"]["wall"] / x1["exudyn_stiffening_uf"]["wall"],
                        0.2, "{:.3f}x"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "targets")
    ap.add_argument("--only", nargs="+", choices=PARTS, help="run only these parts")
    ap.add_argument("--suite", action="store_true", help="also time the fast suite (make test's command)")
    args = ap.parse_args(argv)
    parts = list(args.only or [p for p in PARTS if p != "suite" or args.suite])
    args.out.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip())
    report = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
                  commit=commit + ("+changes" if dirty else ""), cores=os.cpu_count(), parts={}, rows=[])
    print(f"issue 17 D targets, {report['date']}, {report['commit']}, {report['cores']} cores", flush=True)
    for part in parts:
        js_path = args.out / f"{part}.json"
        log = args.out / f"{part}.log"
        if part == "rigid":
            cmd = [py, str(BENCH / "compare_exudyn.py"), "--json", str(js_path)]
        elif part == "flexpend":
            cmd = [py, str(BENCH / "flexible_pendulum.py"), "--repeat", "3", "--json", str(js_path)]
        elif part == "flexchain":
            cmd = [py, str(BENCH / "flexible_chain.py"), "--repeat", "3", "--json", str(js_path)]
        elif part == "x3":
            cmd = [py, str(BENCH / "flexible_targets.py"), "--json", str(js_path)]
        elif part == "demo":
            cmd = [py, "-m", "flexmb", "demo", "slider-crank", "--out", str(args.out / "demo")]
        else:
            workers = os.environ.get("TEST_WORKERS", "auto")
            cmd = [py, "-m", "pytest", "-q", "-m", "not slow", "-n", workers, "--dist", "worksteal", "-p", "no:cacheprovider"]
        print(f"  {part}: {' '.join(Path(c).name if i < 2 else c for i, c in enumerate(cmd))} ...", end="", flush=True)
        wall, load, out = run(cmd, log)
        print(f" {wall:.0f} s, load {load[0]:.2f} -> {load[1]:.2f}", flush=True)
        report["parts"][part] = dict(wall=wall, load=load, log=str(log))
        if part == "demo":
            m = re.search(r"(\d+) time elements in ([\d.]+) s, mean Newton iterations ([\d.]+)", out)
            rows = [row("make demo simulation [s]", float(m.group(2)) if m else None, 5.0, "{:.1f} s",
                        f"{m.group(1)} elements, {m.group(3)} iterations" if m else "")]
        elif part == "suite":
            m = re.search(r"(\d+) passed", out)
            rows = [row("fast suite wall [min]", wall / 60, 3.0, "{:.2f} min", f"{m.group(1) if m else '?'} passed")]
        else:
            js = json.loads(js_path.read_text())
            rows = {"rigid": rigid_rows, "flexpend": flexpend_rows, "flexchain": flexchain_rows, "x3": x3_rows}[part](js)
        for r in rows:
            r["part"], r["load"] = part, load
        report["rows"] += rows
    print(f"\n| measure | this run | target | met | load | note |\n|---|---:|---|---|---|---|")
    for r in report["rows"]:
        met = "n/a" if r["met"] is None else ("yes" if r["met"] else "**no**")
        print(f"| {r['measure']} | {r['shown']} | {r['target']} | {met} | {r['load'][0]:.1f} -> {r['load'][1]:.1f} | "
              f"{r['note']} |")
    missed = [r["measure"] for r in report["rows"] if r["met"] is False]
    print(f"\n{len(report['rows']) - len(missed)} of {len(report['rows'])} met" + (f"; missed: {'; '.join(missed)}" if missed else ""))
    (args.out / "targets.json").write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out / 'targets.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
