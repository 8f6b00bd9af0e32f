"""Progress of a study: a bar with done / failed / ETA on a terminal, INFO log lines otherwise."""
from __future__ import annotations

import logging
import sys
import time

from flexmb.progress import progress_enabled

__all__ = ["StudyProgress", "LOG_SECONDS"]

logger = logging.getLogger(__name__)

#: wall-time interval of the INFO progress lines when no bar is shown [s]
LOG_SECONDS = 10.0


class StudyProgress:
    """Counts finished runs; shows them as a tqdm bar or as INFO log lines.

    Parameters
    ----------
    total : int
        Runs to compute in this call (stored runs excluded).
    skipped : int
        Runs found in the store (reported once, not counted).
    enabled : bool or None
        Bar on stderr: ``None`` = only on a terminal (and ``FLEXMB_PROGRESS`` != ``"0"``).
    """

    def __init__(self, total: int, skipped: int = 0, enabled: bool | None = None, desc: str = "sweep") -> None:
        self.total, self.skipped = int(total), int(skipped)
        self.done = self.failed = 0
        self._start = self._last_log = time.perf_counter()
        self._bar = None
        if enabled is None:
            enabled = progress_enabled()
        if enabled and self.total:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc, file=sys.stderr, dynamic_ncols=True, unit="run",
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} runs [{elapsed}<{remaining}{postfix}]")
            self._bar.set_postfix_str(self._postfix(), refresh=False)
        if skipped:
            logger.info("%d runs already in the store, %d to compute", skipped, total)

    def _postfix(self) -> str:
        return f"failed {self.failed}" + (f", stored {self.skipped}" if self.skipped else "")

    def update(self, ok: bool) -> None:
        """One more run finished (``ok`` or failed)."""
        self.done += 1
        self.failed += not ok
        if self._bar is not None:
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            self._bar.update(1)
            return
        now = time.perf_counter()
        if now - self._last_log >= LOG_SECONDS or self.done == self.total:
            self._last_log = now
            elapsed = now - self._start
            eta = elapsed / self.done * (self.total - self.done)
            logger.info("sweep: %d/%d runs done, %d failed, %.0f s elapsed, ETA %.0f s", self.done, self.total,
                        self.failed, elapsed, eta)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
