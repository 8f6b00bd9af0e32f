"""The C heap under the Newton iterations of large models: freed blocks kept for reuse (glibc).

Every Newton iteration of a large model allocates and frees arrays of 0.1 to 30 MB: the compiled
kernels' work arrays (allocated with ``malloc``), the residual, the Jacobian values, the factors'
scratch, NumPy's temporaries.  glibc serves an allocation above its mmap threshold (128 KiB at start,
raised with the blocks freed, up to 32 MiB) with freshly mapped pages, and gives the top of its heap back to
the system beyond its trim threshold (twice the mmap threshold): either way the next iteration's arrays
are page-faulted in again, and the kernel zeroes every page.  On the N = 1000 chain (p = 1) that was
3,300-4,500 minor page faults and 12-19 ms of system time per step of 50-60 ms.

:func:`keep_freed_blocks` fixes the mmap threshold at glibc's largest (:data:`MMAP_THRESHOLD`, 32 MiB)
and the trim threshold at :data:`TRIM_THRESHOLD` (256 MiB), once per process, when a run starts: freed
blocks are reused (~700 faults and 3-4 ms of system time per step, the same run; N = 3000: 7,800-13,000 ->
~1,800 faults, 30-48 -> 8-11 ms of system time per step).  The cost: up to 256 MiB freed at the top of the heap stay
with the process instead of going back to the system, and blocks below 32 MiB come from the heap (this
is what every program in the process gets from then on: the settings are the C library's, not
flexmb's).  Nothing is changed where the C library is not glibc, or when the environment variable
``FLEXMB_MALLOC`` is ``default`` (set it before the first run).
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform

log = logging.getLogger(__name__)

#: glibc's ``mallopt`` parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: blocks below this come from the heap [bytes]: glibc's largest mmap threshold on 64-bit systems
MMAP_THRESHOLD = 32 * 1024 * 1024
#: freed memory kept at the top of the heap [bytes]
TRIM_THRESHOLD = 256 * 1024 * 1024

_done: bool | None = None  # None: not tried yet; then whether the settings were applied


def keep_freed_blocks() -> bool:
    """Set glibc's mmap and trim thresholds (module docstring), once per process; True when they are set
    (now or by an earlier call), False where they are not (not glibc, ``FLEXMB_MALLOC=default``, or
    ``mallopt`` refused a value)."""
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get("FLEXMB_MALLOC", "").strip().lower() == "default":
        log.debug("FLEXMB_MALLOC=default: the C heap's thresholds left as they are")
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    if ok:
        log.debug("glibc heap: mmap threshold %d B, trim threshold %d B (flexmb.dynamics.solve.heap)",
                  MMAP_THRESHOLD, TRIM_THRESHOLD)
    else:
        log.info("glibc's mallopt refused the heap thresholds; large arrays are mapped afresh at every "
                 "Newton iteration (page faults: slower steps of large models, the results the same)")
    _done = ok
    return ok
