"""Benchmark: an N-link chain of bars on spherical joints falling under gravity.

The chain hangs from the ground by a spherical joint at its first end, starts horizontal along x
at rest and falls under gravity (-z).  For each N the script runs a fixed number of time elements
(after one untimed warm-up run) and prints, per step: wall time, mean Newton iterations and
factorizations, unknowns per time element (internal / end values), nonzeros of the Newton matrix
before and after factorization (L+U), the number of times the refactorizing LU ("superlu") had to
pivot afresh ("piv"), the share of the time loop spent in residual/Jacobian
evaluation, LU factorization, LU solves and elsewhere, and the set-up time (model building,
compilation, initial state, sparsity pattern); at the end, the exponent of the cost per step
fitted between N = 100 and N = 1000 (target <= 1.15).

On a shared machine, timings scatter: ``--repeat R`` runs everything R times, interleaved, and
keeps the fastest run of each configuration (the usual estimate of the undisturbed cost).

Usage::

    python benchmarks/chain.py                          # N = 10 100 1000, 30 steps, h = 1 ms, p = 1
    python benchmarks/chain.py --n 10 100 1000 10000    # the 10000 run is skipped on MemoryError
    python benchmarks/chain.py --solver umfpack --reuse none
    python benchmarks/chain.py --compare-solvers        # sparse LU choice (flexmb/dynamics/solve/linsolve.py)
    python benchmarks/chain.py --compare                # solver x Jacobian reuse, whole time loop
"""
from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import flexmb as fm  # noqa: E402
from flexmb.dynamics.solve import linsolve  # noqa: E402

LINK_LENGTH = 0.1  # [m]
LINK_MASS = 0.05  # [kg]
LINK_RADIUS = 0.002  # [m]


def chain_model(n: int) -> fm.Model:
    """``n`` slender bars along x joined end to end by spherical joints, the first to the ground."""
    L, m, r = LINK_LENGTH, LINK_MASS, LINK_RADIUS
    inertia = (0.5 * m * r * r, m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12)
    bodies = [fm.RigidBody(f"bar{i}", mass=m, inertia=inertia, position=(L * (i + 0.5), 0.0, 0.0)) for i in range(n)]
    joints = [fm.Spherical(f"s{i}", "ground" if i == 0 else f"bar{i - 1}", f"bar{i}", point=(L * i, 0.0, 0.0))
              for i in range(n)]
    return fm.Model(bodies, joints, [fm.Gravity((0.0, 0.0, -9.81))])


class _TimedBackend:
    """Wraps a linear-solver backend to time the solves (the driver times the factorizations)."""

    def __init__(self, backend):
        self.backend = backend
        self.t_solve = 0.0
        self.n_solve = 0

    def __call__(self, A):
        solve = self.backend(A)

        def timed(b):
            t0 = time.perf_counter()
            try:
                return solve(b)
            finally:
                self.t_solve += time.perf_counter() - t0
                self.n_solve += 1

        return timed


def run(n: int, steps: int, h: float, p: int, solver: str, reuse: str) -> dict:
    """Build and simulate the chain of ``n`` links; return the measured figures."""
    t0 = time.perf_counter()
    model = chain_model(n)
    t_model = time.perf_counter() - t0
    backend = _TimedBackend(linsolve.linear_solver(solver))
    options = fm.SimulationOptions(newton=fm.NewtonOptions(reuse=reuse), linear_solver=backend)
    t0 = time.perf_counter()
    sol = fm.simulate(model, steps * h, h, p=p, options=options, show_progress=False)
    t_total = time.perf_counter() - t0
    meta = sol.meta
    wall = meta["wall_time"]
    k = len(sol.stats["iterations"])
    return dict(
        n=n, steps=k, setup=t_model + (t_total - wall), per_step=wall / k,
        iterations=float(np.mean(sol.stats["iterations"])), factorizations=float(np.mean(sol.stats["factorizations"])),
        internal=meta["unknowns_internal"], end=meta["unknowns_end"], nnz=meta["jacobian_nnz"],
        nnz_lu=getattr(backend.backend, "last_nnz", 0), pivots=getattr(backend.backend, "n_pivot_changes", 0),
        eval_share=meta["evaluation_time"] / wall, fac_share=meta["factorization_time"] / wall,
        solve_share=backend.t_solve / wall, positions=sol.body_position, t_eval=meta["evaluation_time"] / k,
    )


def _best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["per_step"])


HEADER = (f"{'N':>6} {'ms/step':>9} {'iters':>6} {'facts':>6} {'unknowns int/end':>17} {'nnz(J)':>9} "
          f"{'nnz(L+U)':>9} {'piv':>4} {'eval':>5} {'LU':>5} {'solve':>5} {'other':>5} {'setup s':>8}")


def fmt_row(r: dict) -> str:
    other = 1.0 - r["eval_share"] - r["fac_share"] - r["solve_share"]
    return (f"{r['n']:>6d} {r['per_step'] * 1e3:>9.2f} {r['iterations']:>6.2f} {r['factorizations']:>6.2f} "
            f"{r['internal']:>8d} /{r['end']:>7d} {r['nnz']:>9d} {r['nnz_lu']:>9d} {r['pivots']:>4d} "
            f"{100 * r['eval_share']:>4.0f}% {100 * r['fac_share']:>4.0f}% {100 * r['solve_share']:>4.0f}% "
            f"{100 * other:>4.0f}% {r['setup']:>8.2f}")


def exponent(results: list[dict], lo: int = 100, hi: int = 1000) -> float | None:
    by_n = {r["n"]: r["per_step"] for r in results}
    if lo in by_n and hi in by_n:
        return float(np.log(by_n[hi] / by_n[lo]) / np.log(hi / lo))
    return None


def bench(ns, steps, h, p, solver, reuse, repeat) -> list[dict]:
    print(HEADER)
    results = []
    for n in sorted(ns):
        runs = []
        try:
            if n <= 1000:
                run(n, 1, h, p, solver, reuse)  # warm-up (imports, caches)
            for _ in range(repeat if n <= 1000 else 1):
                gc.collect()
                runs.append(run(n, steps, h, p, solver, reuse))
        except MemoryError:
            print(f"{n:>6} skipped: out of memory")
            continue
        r = _best(runs)
        results.append(r)
        print(fmt_row(r), flush=True)
    e = exponent(results)
    if e is not None:
        print(f"\nfitted exponent of the cost per step, N = 100 -> 1000: {e:.3f} (target <= 1.15)")
    return results


def compare_configs(ns, steps, h, p, repeat) -> None:
    """Linear solver x Jacobian reuse, whole time loop, interleaved runs (the fastest is kept).

    The first configuration is the former default (SuperLU with COLAMD at every call, full
    Newton); the ratios are relative to it.
    """
    configs = [("superlu-colamd", "none"), ("superlu-cached", "none"), ("superlu-cached", "element"),
               ("superlu", "none"), ("superlu", "element"), ("superlu", "steps")]
    if "umfpack" in linsolve.available_backends():
        configs += [("umfpack", "none"), ("umfpack", "element")]
    print(f"\nLinear solver x Jacobian reuse (NewtonOptions.reuse), best of {repeat} interleaved runs; |dx| = largest "
          f"difference of the body positions from the first configuration over all nodes, in link lengths")
    print(f"{'N':>6} {'solver':>15} {'reuse':>8} {'ms/step':>9} {'ratio':>6} {'iters':>6} {'facts':>6} "
          f"{'eval ms':>8} {'LU ms':>7} {'solve ms':>8} {'|dx|/L':>8}")
    for n in ns:
        runs = {c: [] for c in configs}
        run(n, 1, h, p, "superlu", "none")
        for _ in range(repeat):
            for c in configs:
                gc.collect()
                runs[c].append(run(n, steps, h, p, *c))
        ref = _best(runs[configs[0]])
        for c in configs:
            r = _best(runs[c])
            dx = np.abs(r["positions"] - ref["positions"]).max() / LINK_LENGTH
            ms = 1e3 * r["per_step"]
            print(f"{n:>6} {c[0]:>15} {c[1]:>8} {ms:>9.2f} {r['per_step'] / ref['per_step']:>6.2f} "
                  f"{r['iterations']:>6.2f} {r['factorizations']:>6.2f} {ms * r['eval_share']:>8.2f} "
                  f"{ms * r['fac_share']:>7.2f} {ms * r['solve_share']:>8.2f} {dx:>8.1e}", flush=True)


def compare_solvers(ns, h, p, repeat) -> None:
    """Factor+solve time of each sparse LU on the Newton matrix of the chain (interleaved, medians)."""
    import scipy.sparse.linalg as spla

    from flexmb.dynamics.march.marching import predict as _predict
    from flexmb.dynamics.simulate import ElementSystem
    from flexmb.dynamics.system import compile_model, initial_state
    from flexmb.dynamics.time_elements import time_element

    print("\nSparse LU on the chain's Newton matrix (after two Newton iterations of the first element): "
          "median time of factor [+ solve], relative to SuperLU with COLAMD at every call")
    print(f"{'N':>6} {'backend':>34} {'factor ms':>10} {'ratio':>6} {'solve ms':>9} {'nnz(L+U)':>9} {'|Ax-b|/|b|':>10}")
    for n in ns:
        cm = compile_model(chain_model(n))
        st, w0 = initial_state(cm)
        system = ElementSystem(cm, time_element(p))
        U = _predict(cm, system.lay, system.te, st, h, w0, None)
        for _ in range(2):
            F, J = system.evaluate(U, st, h)
            U = U - spla.splu(J.tocsc()).solve(F)
        F, J = system.evaluate(U, st, h)
        cands = {}
        for name, fac in linsolve.available_backends().items():
            fac(J)  # first call: ordering/symbolic analysis of the pattern (cached from then on)
            cands[name] = fac
        for spec in ("NATURAL",):  # MMD orderings: 1.7-2x slower (and MMD(A^T+A) ~400x at N = 1000), dropped
            cands[f"splu {spec} every call"] = (lambda A, s=spec: spla.splu(A, permc_spec=s).solve)
        try:
            import PyKLU

            if n <= 200:  # its cost grows quadratically on these matrices
                cands["KLU (PyKLU)"] = lambda A: PyKLU.Klu(A).solve
        except ImportError:
            pass
        reps = max(5, min(200, 3000 // n))
        tf = {k: [] for k in cands}
        ts = {k: [] for k in cands}
        sols = {}
        for _ in range(reps):
            for k, fac in cands.items():
                t0 = time.perf_counter()
                solve = fac(J)
                t1 = time.perf_counter()
                sols[k] = solve(F)
                t2 = time.perf_counter()
                tf[k].append(t1 - t0)
                ts[k].append(t2 - t1)
        base = np.median(tf["superlu-colamd"])
        for k, fac in cands.items():
            m = np.median(tf[k])
            nnz = getattr(fac, "last_nnz", 0)
            res = np.linalg.norm(J @ sols[k] - F) / np.linalg.norm(F)
            print(f"{n:>6} {k:>34} {1e3 * m:>10.2f} {m / base:>6.2f} {1e3 * np.median(ts[k]):>9.2f} "
                  f"{nnz if nnz else '':>9} {res:>10.1e}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[10, 100, 1000], help="chain lengths (default 10 100 1000)")
    ap.add_argument("--steps", type=int, default=30, help="time elements per run (default 30)")
    ap.add_argument("--h", type=float, default=1e-3, help="time-element length [s] (default 1e-3)")
    ap.add_argument("--p", type=int, default=1, help="time-element order (default 1)")
    ap.add_argument("--solver", default="superlu", help=f"linear solver, one of {sorted(linsolve.LINEAR_SOLVERS)}")
    ap.add_argument("--reuse", default=None, choices=["auto", "none", "element", "steps"],
                    help="Newton Jacobian reuse (default: the NewtonOptions default)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration, the fastest is kept (default 3)")
    ap.add_argument("--compare-solvers", action="store_true", help="time every sparse LU backend/ordering")
    ap.add_argument("--compare", action="store_true",
                    help="whole time loop for each linear solver x Jacobian reuse configuration")
    ap.add_argument("--no-table", action="store_true", help="only the comparisons")
    args = ap.parse_args(argv)
    reuse = args.reuse or fm.NewtonOptions().reuse

    print(f"flexmb {fm.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; chain of bars (L = {LINK_LENGTH} m) on spherical joints under gravity")
    print(f"steps = {args.steps}, h = {args.h:g} s, p = {args.p}, solver = {args.solver}, reuse = {reuse}, "
          f"best of {args.repeat}\n")
    if not args.no_table:
        bench(args.n, args.steps, args.h, args.p, args.solver, reuse, args.repeat)
    if args.compare_solvers:
        compare_solvers(sorted(args.n), args.h, args.p, args.repeat)
    if args.compare:
        compare_configs(sorted(n for n in args.n if n <= 1000), args.steps, args.h, args.p, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
