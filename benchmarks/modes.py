"""Benchmark of modal reduction: assembly, 20 free-free modes, a Craig-Bampton basis with two interfaces.

Structured hex8 meshes of a slender bar with a fixed 8 x 8-element square cross-section (1 m x 1 m)
and a length that grows with the size, so the sparse Cholesky work per DOF stays constant (the
regime of slender machine parts; a compact block costs more per DOF, see benchmarks/README.md).
Each size runs in its own process, so the peak resident memory (``ru_maxrss``) is per size, and a
size that runs out of memory or time is reported as skipped instead of ending the benchmark.

    python benchmarks/modes.py                       # 10k, 100k, 300k DOF
    python benchmarks/modes.py --sizes 10k 100k --modes 20 --timeout 900
    python benchmarks/modes.py --shape block         # compact blocks (cost grows faster than DOF)
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CROSS = 8  # elements across the bar's width and height


def divisions(n_dofs: float, shape: str) -> tuple[int, int, int]:
    """Cells (nx, ny, nz) of a hex8 mesh with about ``n_dofs`` DOFs."""
    if shape == "bar":
        nx = max(2, round(n_dofs / (3 * (CROSS + 1) ** 2)) - 1)
        return nx, CROSS, CROSS
    c = max(2, round((n_dofs / 3 / 4) ** (1 / 3)) - 1)  # block 4 c x c x c
    return 4 * c, c, c


def child(n_dofs: float, shape: str, n_modes: int) -> dict:
    from flexmb.fe.elements import assembly as fe
    from flexmb.fe import reduction as red
    from flexmb.fe.mesh import Material, structured_box
    from flexmb.fe.spd_solve import cholmod_available

    div = divisions(n_dofs, shape)
    mesh = structured_box((div[0] / div[1], 1.0, 1.0), div, "hexahedron", material=Material(210e9, 0.3, 7850.0))
    out = dict(shape=shape, divisions=div, n_dofs=mesh.n_dofs, backend="cholmod" if cholmod_available() else "splu")
    t = time.perf_counter()
    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    out["assembly_s"] = time.perf_counter() - t
    t = time.perf_counter()
    ff = red.free_free_modes(K, M, n_modes, points=mesh.points)
    out["free_free_s"] = time.perf_counter() - t
    out["f1_free_Hz"] = float(ff.frequencies[0])
    t = time.perf_counter()
    cb = red.craig_bampton(K, M, mesh, ["xmin", "xmax"], n_modes)
    out["craig_bampton_s"] = time.perf_counter() - t
    out["cb_shapes"] = cb.n_modes
    out["f1_cb_Hz"] = float(cb.frequencies[0])
    out["peak_rss_GB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    return out


def _parse_size(s: str) -> float:
    s = s.lower()
    return float(s[:-1]) * 1e3 if s.endswith("k") else float(s)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", default=["10k", "100k", "300k"], help="target DOF counts (e.g. 10k 100k)")
    p.add_argument("--shape", choices=("bar", "block"), default="bar")
    p.add_argument("--modes", type=int, default=20, help="free-free modes and fixed-interface modes (default 20)")
    p.add_argument("--timeout", type=float, default=1200.0, help="seconds per size before it is skipped")
    p.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.shape, args.modes)))
        return 0
    head = (f"{'DOF':>8} {'cells':>14} {'assembly':>9} {'free-free':>10} {'Craig-B.':>9} {'total':>8} "
            f"{'peak RSS':>9}  {'f1 free':>8} {'f1 CB':>8}")
    print(f"modal reduction benchmark: hex8 {args.shape}, {args.modes} modes; times in s, memory in GB, f in Hz")
    print(head)
    for size in args.sizes:
        cmd = [sys.executable, __file__, "--child", str(_parse_size(size)), "--shape", args.shape,
               "--modes", str(args.modes)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{size:>8}  skipped: longer than --timeout {args.timeout:g} s")
            continue
        if proc.returncode != 0:
            reason = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
            print(f"{size:>8}  skipped: {reason} (out of memory?)" if proc.returncode < 0 else f"{size:>8}  failed: {reason}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        total = r["assembly_s"] + r["free_free_s"] + r["craig_bampton_s"]
        cells = "x".join(str(v) for v in r["divisions"])
        print(f"{r['n_dofs']:>8} {cells:>14} {r['assembly_s']:>9.1f} {r['free_free_s']:>10.1f} "
              f"{r['craig_bampton_s']:>9.1f} {total:>8.1f} {r['peak_rss_GB']:>9.2f}  {r['f1_free_Hz']:>8.2f} "
              f"{r['f1_cb_Hz']:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
