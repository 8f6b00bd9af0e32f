"""Keep numba's on-disk cache of flexmb's compiled kernels consistent with their source.

Why: numba (0.68) keys a cached function on its own source file's stamp and its own bytecode, not on
the functions it calls in other files nor on the global arrays it freezes at compile time.  After
``fused_newton``'s compiled loop is cached, a change in ``rigid_kernels.py``, ``joint_law.py``,
``refactor_lu.py`` or ``layout.py`` (an upgrade of flexmb, a ``git pull``, a merge) leaves it running
the former machine code of its callees, without any error: silently wrong physics.

What: once per process, before any kernel is loaded, a SHA-256 of the source of every flexmb module
that holds compiled code (the files under the package that mention ``numba`` or ``@jit_kernel``; the ``rotations`` package too,
whose series tables the kernels freeze as constants) is compared with a stamp file in each cache
directory numba uses for them (``__pycache__`` next to the module, or ``NUMBA_CACHE_DIR`` / the
user-wide cache when that is not writable: numba's own locators decide).  When it differs, that
directory's cache files of those modules (``<module>.*.nbi`` / ``.nbc``) are deleted and the stamp
rewritten: the kernels recompile once (about a minute on 2 cores) and are cached again.  Errors
(read-only locations) are logged at DEBUG and ignored: numba then keeps its own behaviour.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

log = logging.getLogger(__name__)

STAMP = "flexmb-kernels.stamp"
_DONE: list[bool] = []


def kernel_sources(root: Path | None = None) -> list[Path]:
    """The package's source files that hold compiled code (or constants compiled into it), sorted."""
    root = Path(__file__).resolve().parent if root is None else root
    out = sorted((root / "rotations").glob("*.py"))
    for path in sorted(root.rglob("*.py")):
        if path.name == Path(__file__).name or path in out:
            continue
        try:
            text = path.read_bytes()
            if b"numba" in text or b"@jit_kernel" in text:
                out.append(path)
        except OSError:
            continue
    return sorted(out)


def fingerprint(files: list[Path]) -> str:
    """SHA-256 over the files' names and contents."""
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cache_dir(path: Path) -> Path | None:
    """The directory numba caches ``path``'s functions in (its first locator that accepts the file)."""
    from numba.core import caching

    def probe():  # a function "defined" in ``path`` for the locators (they read its first line number)
        pass

    for cls in caching.CacheImpl._locator_classes:
        try:
            loc = cls.from_function(probe, str(path))
        except Exception:  # noqa: BLE001 - a locator that does not apply
            loc = None
        if loc is not None:
            return Path(loc.get_cache_path())
    return None


def refresh() -> None:
    """Delete flexmb's stale cached kernels (module docstring); once per process."""
    if _DONE:
        return
    _DONE.append(True)
    try:
        refresh_files(kernel_sources())
    except Exception as exc:  # noqa: BLE001 - never in the way of a run
        log.debug("numba cache check skipped: %s", exc)


def refresh_files(files: list[Path]) -> int:
    """Check the cache directories of ``files`` against their fingerprint; returns the number of cache
    files removed."""
    fp = fingerprint(files)
    by_dir: dict[Path, list[str]] = {}
    for path in files:
        d = cache_dir(path)
        if d is not None:
            by_dir.setdefault(d, []).append(path.stem)
    removed = 0
    for d, stems in by_dir.items():
        stamp = d / STAMP
        try:
            if stamp.is_file() and stamp.read_text().strip() == fp:
                continue
            n = 0
            if d.is_dir():
                for stem in stems:
                    for f in list(d.glob(f"{stem}.*.nbi")) + list(d.glob(f"{stem}.*.nbc")):
                        f.unlink(missing_ok=True)
                        n += 1
            if n:
                log.info("flexmb's compiled kernels changed since they were cached in %s: %d cache files "
                         "removed, the kernels compile again once", d, n)
            removed += n
            d.mkdir(parents=True, exist_ok=True)
            stamp.write_text(fp + "\n")
        except OSError as exc:
            log.debug("numba cache check of %s skipped: %s", d, exc)
    return removed
