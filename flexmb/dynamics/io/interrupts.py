"""Ctrl-C around a run: held back while a checkpoint is written (:func:`held`), and turned into
:class:`~flexmb.errors.SimulationInterrupted` without results during the set-up
(:func:`setup_interrupted`); in the time loop the driver hands back the results so far."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from flexmb.errors import SimulationInterrupted


@contextmanager
def setup_interrupted(what: str):
    """Ctrl-C while ``what`` (numba compilation, model compilation, redundancy detection, reading a
    checkpoint) raises :class:`SimulationInterrupted` without results, as nothing was simulated."""
    try:
        yield
    except SimulationInterrupted:
        raise
    except KeyboardInterrupt:
        raise SimulationInterrupted(f"simulation interrupted while {what}, before the first time element: there are "
                                    f"no results (the exception's `solution` is None)", None) from None


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
