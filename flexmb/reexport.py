"""Lazy re-exports (PEP 562): a module's ``__getattr__`` and ``__dir__`` that load a name from the
module defining it on first access and keep it in the module's namespace.

Used by :mod:`flexmb` (``import flexmb`` stays light: numpy, scipy and the engine load on first
use) and by :mod:`flexmb.fe.mesh` (old import paths of names that moved to modules importing it,
without an import cycle). Imports only the standard library.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(module: str, table: Mapping[str, str],
                    namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module named ``module`` whose globals are ``namespace``;
    ``table`` maps each re-exported name to the module that defines it."""

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value  # later look-ups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
