"""Parameter studies: one simulation per parameter set, serially or on dask.distributed, results in
a pandas DataFrame and a resumable Parquet store.

>>> import flexmb as fm
>>> fm.linear_range(100, 150, 6)
[100.0, 110.0, 120.0, 130.0, 140.0, 150.0]

Modules: ``parameters`` (grids, tables, ranges, the key of a parameter set), ``task`` (one run, as
on a worker), ``store`` (Parquet results and journal, resume), ``fingerprint`` (the study version
that shaped stored rows), ``progress`` (bar / log lines), ``runner`` (:func:`sweep`: serial loop
or dask Client), ``arguments`` (checks of its arguments), ``mainscript`` (the main script as
spawned workers see it), ``worker`` (set-up of the dask workers), ``deps`` (the optional ``sweep``
extra).

pandas, dask.distributed and pyarrow are imported only when a study runs; without them
:func:`sweep` raises :class:`MissingDependencyError` naming the extra ``flexmb[sweep]``.
"""
from __future__ import annotations

from flexmb.studies.deps import MissingDependencyError
from flexmb.studies.parameters import grid, linear_range, log_range, parameter_key, parameter_sets
from flexmb.studies.runner import local_cluster, sweep
from flexmb.studies.store import StoreError, load_results

__all__ = ["sweep", "grid", "linear_range", "log_range", "parameter_sets", "parameter_key", "load_results",
           "local_cluster", "MissingDependencyError", "StoreError"]
