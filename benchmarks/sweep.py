"""Benchmark: a parameter study of 16 runs, serially and on a 2-worker dask LocalCluster.

The study: the IFToMM A01 pendulum (examples/sweep_pendulum.py) over 16 rod lengths from 0.25 to
4 m, each run three periods in time elements of T/40 with p = 3 (120 elements, about 1-2 s each).

Printed:

* serial: wall time of the 16 runs in this process (``flexmb.sweep(scheduler=None)``, after one
  untimed warm-up run), and the sum of the per-run wall and CPU times;
* cluster start-up: ``LocalCluster`` of 2 single-threaded worker processes + Client + warm-up
  (flexmb imported on every worker);
* cluster: wall time of the same 16 runs on the warm cluster (``scheduler=client``); speed-up over
  serial with the start-up excluded and included;
* a ceiling: the same runs on a plain ``ProcessPoolExecutor`` of as many processes (no dask, no
  store, no DataFrame), started beforehand: the speed-up any parallel layer can reach on this
  machine at that moment, and the cluster's wall time relative to it;
* per-run scheduling overhead: (cluster wall x workers - sum of the workers' run times) / runs,
  i.e. the time per run that a worker spent not running a simulation, split into the mean gap
  between consecutive runs of a worker (returning the record, receiving the next task) and the idle
  tail (one worker done before the other); and the round trip of a no-op task;
* the CPU time of this process (in-process scheduler + client) during the cluster run, and the
  ratio of per-run CPU times on a worker and in the serial loop;
* a projection for idle cores, taking CPU times as wall times: serial = sum of the serial runs' CPU,
  cluster = (sum of the workers' run CPU + gaps + this process's CPU) / workers.  On a machine
  shared with other jobs the measured speed-up says more about the other jobs than about the
  sweep; the projection shows what the sweep itself costs.

Every process uses one BLAS/OpenMP thread (set here before numpy is imported, and by the cluster
for its workers), so that serial and parallel runs do the same work per core.

On a shared machine the numbers scatter: ``--repeat R`` runs serial and cluster R times,
interleaved, and keeps the fastest of each (the usual estimate of the undisturbed cost); the load
average at the start and end is printed.  The CPU-time column shows how much of each run's wall
time it actually had a core.

``--store`` measures instead what the results store costs on a serial sweep of many short runs
(a quarter period of the pendulum in four elements, p = 2: some 20-50 ms each): the same runs
without a store, with the default store (each finished run appended to the journal at once, folded
into a Parquet part every 5 s) and with ``store_every=0`` (a Parquet part written to disk after
every run), interleaved ``--repeat`` times, the fastest of each kept.

Usage::

    python benchmarks/sweep.py                  # 16 runs, 2 workers
    python benchmarks/sweep.py --repeat 3 --runs 32 --workers 2
    python benchmarks/sweep.py --store --runs 400 --repeat 3
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flexmb as fm  # noqa: E402
from flexmb.studies import local_cluster  # noqa: E402
from flexmb.studies.runner import warm_workers  # noqa: E402

_spec = importlib.util.spec_from_file_location("_sweep_pendulum", ROOT / "examples" / "sweep_pendulum.py")
EX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(EX)

PERIODS, STEPS_PER_PERIOD = 3.0, 40


def build(length: float):
    """The A01 pendulum of rod ``length`` [m]: three periods, h = T/40, p = 3."""
    model, _ = EX.build(length)
    T = EX.exact_period(length)
    return model, {"t_end": PERIODS * T, "h": T / STEPS_PER_PERIOD, "p": 3}


def outputs(sol, length: float) -> dict:
    return {"x_end": float(sol.body("bob").position[-1, 0])}


def _noop(i):
    return i


def _pool_run(length: float) -> float:
    from flexmb.studies.task import run_one

    return run_one((build, outputs), {"length": length}, "")["cpu_time"]


def _pool_warm() -> None:
    import flexmb.dynamics.simulate  # noqa: F401


def bare_pool(lengths: list, n_workers: int) -> tuple[float, float]:
    """Wall time of the same runs on a plain process pool (no dask, no store, no DataFrame), started
    and warmed beforehand: what any parallel layer can reach on this machine right now."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("spawn"), initializer=_pool_warm) as ex:
        list(ex.map(_noop, range(4 * n_workers)))  # the workers are up
        t = time.perf_counter()
        cpu = sum(ex.map(_pool_run, lengths))
        return time.perf_counter() - t, cpu


def measure(n_runs: int, n_workers: int) -> dict:
    import numpy as np

    params = {"length": fm.log_range(0.25, 4.0, n_runs)}
    t = time.perf_counter()
    serial = fm.sweep(build, params, outputs, scheduler=None, progress=False)
    t_serial = time.perf_counter() - t
    t_pool, pool_run_cpu = bare_pool(params["length"], n_workers)

    import distributed

    t = time.perf_counter()
    with local_cluster(n_workers) as cluster, distributed.Client(cluster) as client:
        warm_workers(client)
        t_start = time.perf_counter() - t
        t, cpu = time.perf_counter(), time.process_time()
        par = fm.sweep(build, params, outputs, scheduler=client, progress=False)
        t_par, cpu_client = time.perf_counter() - t, time.process_time() - cpu
        t = time.perf_counter()
        client.gather(client.map(_noop, range(n_runs), pure=False))
        t_noop = (time.perf_counter() - t) / n_runs
    assert (serial["status"] == "ok").all() and (par["status"] == "ok").all()
    # gaps between consecutive runs of a worker (scheduling), and the idle tail of the first worker done
    gaps, ends = [], []
    for _, g in par.sort_values("started").groupby("worker"):
        fin = g["started"].to_numpy() + g["wall_time"].to_numpy()
        gaps.extend(g["started"].to_numpy()[1:] - fin[:-1])
        ends.append(fin[-1])
    assert list(serial["x_end"]) == list(par["x_end"]), "serial and cluster results differ"
    return dict(serial=t_serial, pool=t_pool, pool_run_cpu=pool_run_cpu, serial_run_wall=serial["wall_time"].sum(), serial_run_cpu=serial["cpu_time"].sum(),
                start=t_start, cluster=t_par, cluster_run_wall=par["wall_time"].sum(),
                cluster_run_cpu=par["cpu_time"].sum(), noop=t_noop, client_cpu=cpu_client,
                workers_used=par["worker"].nunique(), gap=float(np.mean(gaps)) if gaps else float("nan"),
                tail=float(max(ends) - min(ends)))


def build_short(length: float):
    """The A01 pendulum over a quarter period in four elements, p = 2 (a short run)."""
    model, _ = EX.build(length)
    T = EX.exact_period(length)
    return model, {"t_end": 0.25 * T, "h": T / 16, "p": 2}


def store_overhead(n_runs: int, repeat: int) -> dict:
    """Wall time of a serial sweep of ``n_runs`` short runs without a store, with the default store
    and with a part file per run (``store_every=0``); the fastest of ``repeat`` interleaved rounds."""
    import shutil
    import tempfile

    params = {"length": fm.linear_range(0.5, 2.0, n_runs)}
    fm.sweep(build_short, [{"length": 1.0}], outputs, scheduler=None, progress=False)  # warm-up
    best: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="flexmb-bench-store-"))
    try:
        for r in range(repeat):
            times = {}
            for label, kw in (("none", {}), ("default", {"store": tmp / f"d{r}.parquet"}),
                              ("part per run", {"store": tmp / f"p{r}.parquet", "store_every": 0})):
                t, cpu = time.perf_counter(), time.process_time()
                df = fm.sweep(build_short, params, outputs, scheduler=None, progress=False, **kw)
                times[label], times[label + " cpu"] = time.perf_counter() - t, time.process_time() - cpu
                assert (df["status"] == "ok").all() and df.attrs["sweep"]["computed"] == n_runs
            print(f"  repeat {r + 1}: " + ", ".join(f"{k} {times[k]:.2f} s (CPU {times[k + ' cpu']:.2f} s)"
                                                    for k in ("none", "default", "part per run")))
            for k, v in times.items():
                best[k] = min(best.get(k, v), v)
        # the journal's own cost, which the wall times above hide in the noise of a shared machine:
        # ResultStore.add of rows of this study (JSON line, one write system call), then the fold
        from flexmb.studies.store import ResultStore

        rows = df.to_dict("records")
        rs = ResultStore(tmp / "journal-only.parquet")
        t = time.perf_counter()
        for row in rows:
            rs.add(row, {})
        t_add = (time.perf_counter() - t) / len(rows)
        t = time.perf_counter()
        rs.flush()
        t_fold = time.perf_counter() - t
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"journal: {t_add * 1e6:.0f} us per finished run (ResultStore.add); fold of {len(rows)} rows into a "
          f"Parquet part (written, fsync'ed): {t_fold * 1e3:.1f} ms")
    for kind, suffix in (("wall", ""), ("CPU", " cpu")):
        base = best["none" + suffix]
        print(f"store overhead ({kind} time) on {n_runs} runs of {base / n_runs * 1e3:.0f} ms: " + ", ".join(
            f"{k} {best[k + suffix] / base:.3f}x ({(best[k + suffix] - base) / n_runs * 1e3:+.2f} ms per run)"
            for k in ("default", "part per run")))
    return best


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="interleaved repetitions; the fastest of each is kept")
    ap.add_argument("--store", action="store_true", help="the cost of the results store on short serial runs")
    args = ap.parse_args(argv)
    import dask
    import numpy as np

    if args.store:
        print(f"flexmb {fm.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        best = store_overhead(args.runs, args.repeat)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return best

    print(f"flexmb {fm.__version__}, dask {dask.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"study: {args.runs} runs of the A01 pendulum ({PERIODS:g} periods, h = T/{STEPS_PER_PERIOD}, p = 3), "
          f"{args.workers} workers, best of {args.repeat}")
    fm.sweep(build, [{"length": 1.0}], outputs, scheduler=None, progress=False)  # warm-up: imports, caches
    best: dict = {}
    for r in range(args.repeat):
        m = measure(args.runs, args.workers)
        print(f"  repeat {r + 1}: serial {m['serial']:.2f} s, bare process pool {m['pool']:.2f} s, start-up "
              f"{m['start']:.2f} s, cluster {m['cluster']:.2f} s")
        for k, v in m.items():
            best[k] = min(best.get(k, v), v)
    n, w = args.runs, args.workers
    overhead = (best["cluster"] * w - best["cluster_run_wall"]) / n
    print(f"serial:   {best['serial']:7.2f} s wall for {n} runs ({best['serial'] / n:.2f} s per run; sum of run wall "
          f"{best['serial_run_wall']:.2f} s, CPU {best['serial_run_cpu']:.2f} s)")
    print(f"start-up: {best['start']:7.2f} s (LocalCluster of {w} processes, Client, flexmb imported on the workers)")
    print(f"cluster:  {best['cluster']:7.2f} s wall on {w} workers (sum of run wall {best['cluster_run_wall']:.2f} s, "
          f"CPU {best['cluster_run_cpu']:.2f} s)")
    print(f"speed-up: {best['serial'] / best['cluster']:.2f}x with the cluster started, "
          f"{best['serial'] / (best['cluster'] + best['start']):.2f}x including its start-up (target >= 1.7x on 2 cores)")
    print(f"ceiling:  {best['pool']:7.2f} s on a bare process pool of {w} (no dask): speed-up "
          f"{best['serial'] / best['pool']:.2f}x, the most this machine gives right now; cluster / bare pool "
          f"= {best['cluster'] / best['pool']:.3f}")
    print(f"overhead: {overhead * 1e3:.0f} ms per run of worker time not spent in a run, of which "
          f"{best['gap'] * 1e3:.1f} ms between consecutive runs of a worker (scheduling) and the rest the idle tail "
          f"(first worker done {best['tail']:.2f} s before the last); no-op task round trip {best['noop'] * 1e3:.1f} ms")
    print(f"CPU of this process (scheduler + client) during the cluster run: {best['client_cpu']:.2f} s")
    print(f"per-run CPU / serial: {best['cluster_run_cpu'] / best['serial_run_cpu']:.3f} on a dask worker, "
          f"{best['pool_run_cpu'] / best['serial_run_cpu']:.3f} in the bare pool (> 1: two runs at once on the "
          f"two cores each cost more CPU than one alone)")
    # what the same work would take on idle cores (CPU time = wall time): the workers' run CPU
    # (including their own background threads), the scheduling gaps, and this process's CPU, which
    # takes a core from the workers
    projected = (best["cluster_run_cpu"] + best["gap"] * n + best["client_cpu"]) / w
    print(f"projection for idle cores (CPU time as wall time): serial {best['serial_run_cpu']:.2f} s, cluster "
          f"{projected:.2f} s, speed-up {best['serial_run_cpu'] / projected:.2f}x (indicative only)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return best


if __name__ == "__main__":
    main()
