"""Ctrl-C around a run: held back while a checkpoint is written (:func:`held`); in the time loop the
driver hands back the results so far (:class:`~flexmb.errors.SimulationInterrupted`)."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


@contextmanager
def held():
    """Ctrl-C during the block is delivered when it ends (a checkpoint write is not torn by the user's
    Ctrl-C, which then finds the run's record of its files in step with the disk).  Only in the main
    thread with Python's default SIGINT handler; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    caught = []
    old = signal.signal(signal.SIGINT, lambda *args: caught.append(args))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if caught:
            raise KeyboardInterrupt
