"""The optional dependencies of parameter studies (the ``sweep`` extra) and the error that names them."""
from __future__ import annotations

import importlib
from types import ModuleType

from flexmb.errors import FlexmbError

__all__ = ["MissingDependencyError", "require", "EXTRA"]

#: the pip extra that installs everything flexmb.studies uses
EXTRA = "sweep"
_INSTALL = f"pip install 'flexmb[{EXTRA}]'  (dask[distributed], pandas, pyarrow)"


class MissingDependencyError(FlexmbError, ImportError):
    """An optional dependency of parameter studies is not installed; the message names the extra."""


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra to install.

    >>> require("json", "a test").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingDependencyError(
            f"{purpose} needs the Python package {top!r}, which is not installed ({exc}); install the "
            f"parameter-study extra: {_INSTALL}") from exc
