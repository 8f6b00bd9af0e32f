"""Set-up of the dask workers of a study (imported only when a cluster is used: needs distributed)."""
from __future__ import annotations

import logging
import os

from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["WorkerSetup", "warm"]


def warm(quiet: bool = False) -> int:
    """Import the engine (numpy, scipy.sparse, flexmb.dynamics) in this worker process; ``quiet``:
    raise the ``distributed`` loggers to WARNING (a worker of flexmb's own LocalCluster, whose
    start/stop INFO lines are not the user's business).  Returns the process id."""
    import flexmb.dynamics.simulate  # noqa: F401
    import flexmb.studies.task  # noqa: F401

    if quiet:
        log = logging.getLogger("distributed")
        if log.getEffectiveLevel() < logging.WARNING:
            log.setLevel(logging.WARNING)
    return os.getpid()


class WorkerSetup(WorkerPlugin):
    """Runs :func:`warm` on every worker, including workers that join or restart later."""

    name = "flexmb-sweep-setup"

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def setup(self, worker) -> None:
        warm(self.quiet)
