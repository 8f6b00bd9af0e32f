"""flexmb: flexible multibody dynamics with more-than-redundant coordinates and finite elements in time.

The public API is re-exported here; everything else is internal.
"""
from __future__ import annotations

import logging as _logging

from .errors import ConvergenceError as ConvergenceError
from .errors import FlexmbError as FlexmbError
from .errors import MeshImportError as MeshImportError
from .errors import ModelError as ModelError

__version__ = "0.1.0"

_logging.getLogger(__name__).addHandler(_logging.NullHandler())
