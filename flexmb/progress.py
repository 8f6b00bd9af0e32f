"""Progress bar over simulated time, with ETA, shown only on an interactive terminal."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["progress", "Progress", "progress_enabled"]

#: Environment variable: "0" switches the progress bar off even on a terminal.
ENV_VAR = "FLEXMB_PROGRESS"


def progress_enabled() -> bool:
    """Default for ``enabled=None``: stderr is a terminal and ``FLEXMB_PROGRESS`` is not ``"0"``."""
    if os.environ.get(ENV_VAR, "").strip() == "0":
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed stream
        return False


class Progress:
    """Handle yielded by :func:`progress`; every method is a no-op when the bar is disabled."""

    def __init__(self, total: float, desc: str, enabled: bool) -> None:
        self.total = float(total)
        self.n = 0.0
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total,
                desc=desc,
                file=sys.stderr,
                dynamic_ncols=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| t = {n:.4g}/{total:.4g} s [{elapsed}<{remaining}{postfix}]",
            )

    @property
    def enabled(self) -> bool:
        """True when a bar is shown."""
        return self._bar is not None

    def update(self, dt: float) -> None:
        """Advance by ``dt`` seconds of simulated time (clipped at ``total``)."""
        dt = min(float(dt), self.total - self.n)
        self.n += dt
        if self._bar is not None and dt > 0:
            self._bar.update(dt)

    def note(self, text: str) -> None:
        """Show a short status after the ETA, e.g. ``"h=1e-3 s, 3 it"``."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def progress(total: float, *, desc: str, enabled: bool | None = None) -> Iterator[Progress]:
    """Progress bar over ``total`` seconds of simulated time, with elapsed wall time and ETA.

    Parameters
    ----------
    total : float
        Simulated time span to cover [s].
    desc : str
        Label in front of the bar.
    enabled : bool or None
        ``None``: shown only when stderr is a terminal and the environment variable
        ``FLEXMB_PROGRESS`` is not ``"0"``. ``False``: never (no output at all). ``True``: always,
        on stderr.

    Yields
    ------
    Progress
        Call ``update(dt)`` after each accepted time element.

    Examples
    --------
    >>> with progress(2.0, desc="simulate", enabled=False) as bar:
    ...     bar.update(0.5)
    """
    if not total >= 0:
        raise ValueError(f"`total` must be a non-negative time span in seconds, got {total!r}")
    bar = Progress(total, desc, progress_enabled() if enabled is None else bool(enabled))
    try:
        yield bar
    finally:
        bar.close()
