"""What every body definition shares: the name of the ground, attachment :class:`Frame` values, and
the parsing of a rotation given as a matrix or a dict (:func:`rotation_input`).

Its own module so that :mod:`flexmb.model` (rigid bodies, joints, :class:`~flexmb.model.Model`) and
:mod:`flexmb.model.flexible` (flexible bodies, which :mod:`flexmb.model` re-exports) both import it
without importing each other. Re-exported from :mod:`flexmb.model` (``from flexmb.model import
GROUND, Frame`` keeps working).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flexmb.model.checks import vec3 as _vec3
from flexmb.errors import ModelError

__all__ = ["GROUND", "Frame"]

GROUND = "ground"


def rotation_input(name: str, value: Any, owner: str) -> NDArray:
    """Accept a 3x3 rotation matrix, a quaternion dict, or anything `rotations.orientation` takes."""
    if value is None:
        return np.eye(3)
    if isinstance(value, dict):
        from flexmb.rotations.orientation import orientation

        try:
            return orientation(**value)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{owner}: {name}={value!r}: {exc}") from exc
    try:
        R = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        R = np.zeros(0)
    if R.shape != (3, 3):
        raise ModelError(
            f"{owner}: {name} must be a 3x3 rotation matrix or a dict such as "
            f"{{'quat': (w, x, y, z)}}, {{'rotvec': ...}}, {{'euler': ..., 'seq': 'ZXZ'}}, "
            f"{{'bryant': ...}}, {{'axis': ..., 'angle': ...}}; got shape {R.shape}"
        )
    if not np.all(np.isfinite(R)):
        raise ModelError(f"{owner}: {name} contains NaN or inf")
    err = np.abs(R.T @ R - np.eye(3)).max()
    if err > 1e-9 or np.linalg.det(R) < 0:
        raise ModelError(
            f"{owner}: {name} is not a proper rotation matrix (|R^T R - I| = {err:.2e}, "
            f"det = {np.linalg.det(R):.6f}); orthonormalize it or give a quaternion"
        )
    return R


@dataclass(frozen=True)
class Frame:
    """A frame attached to a body: ``origin (3,)`` and ``orientation (3,3)`` in the body frame;
    ``site``: the interface of a flexible body it moves with (None: a point of the body frame)."""

    origin: NDArray = field(default_factory=lambda: np.zeros(3))
    orientation: NDArray = field(default_factory=lambda: np.eye(3))
    site: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "origin", _vec3("origin", self.origin, "Frame"))
        object.__setattr__(self, "orientation", rotation_input("orientation", self.orientation, "Frame"))

    @classmethod
    def checked(cls, origin: NDArray, orientation: NDArray, site: str | None = None) -> "Frame":
        """A Frame of values derived from checked ones (a model's attachment frames: products of
        checked rotations and vectors), without the input checks of the constructor (~20 us of a
        run's set-up per frame); ``origin (3,)``, ``orientation (3, 3)`` float arrays."""
        f = object.__new__(cls)
        object.__setattr__(f, "origin", np.asarray(origin, dtype=float).reshape(3))
        object.__setattr__(f, "orientation", np.asarray(orientation, dtype=float).reshape(3, 3))
        object.__setattr__(f, "site", site)
        return f
