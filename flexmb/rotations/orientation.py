"""User-facing orientation input: :func:`orientation` (exactly one of a matrix, quaternion, rotation
vector, axis and angle, Euler or Bryant angles) and :func:`as_matrix` (a compact spec for model
input), both checked and built on :class:`scipy.spatial.transform.Rotation`.

Re-exported by :mod:`flexmb.rotations` (``flexmb.orientation`` is
:func:`flexmb.rotations.orientation`); this module imports nothing from it.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from flexmb.errors import ModelError

__all__ = ["ORTHONORMAL_TOL", "as_matrix", "orientation"]

#: Tolerance of ``orientation``/``as_matrix`` on ``max|R^T R - I|`` for a user-given matrix.
ORTHONORMAL_TOL = 1e-9


def _finite(value: ArrayLike, name: str, last: int | None) -> NDArray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ModelError(f"`{name}` must be numeric, got {value!r}.") from err
    if last is not None and (arr.ndim < 1 or arr.shape[-1] != last):
        raise ModelError(f"`{name}` must have shape (..., {last}), got shape {arr.shape}: {value!r}.")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"`{name}` must be finite, got {value!r}.")
    return arr


def _check_matrix(matrix: ArrayLike) -> NDArray:
    R = _finite(matrix, "matrix", None)
    if R.ndim < 2 or R.shape[-2:] != (3, 3):
        raise ModelError(f"`matrix` must have shape (3, 3) or (..., 3, 3), got shape {R.shape}.")
    err = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)), initial=0.0)
    if err > ORTHONORMAL_TOL:
        raise ModelError(
            f"`matrix` is not orthonormal: max|R^T R - I| = {err:.3g} > {ORTHONORMAL_TOL:g} "
            f"for {matrix!r}. Pass an exact rotation matrix (re-orthonormalise it, e.g. with "
            "scipy.spatial.transform.Rotation.from_matrix(R).as_matrix()), or give the "
            "orientation as quat=, rotvec=, axis=/angle= or euler=.")
    det = np.linalg.det(R)
    if np.any(det < 0):
        raise ModelError(
            f"`matrix` has determinant {np.min(det):.6g}; it is a reflection, not a rotation: "
            f"{matrix!r}. Flip the sign of one axis (column) to make a right-handed frame.")
    return R.copy()


def orientation(matrix: ArrayLike | None = None, *, quat: ArrayLike | None = None,
                rotvec: ArrayLike | None = None, axis: ArrayLike | None = None,
                angle: ArrayLike | None = None, euler: ArrayLike | None = None, seq: str = "ZXZ",
                bryant: ArrayLike | None = None, degrees: bool = False) -> NDArray:
    """Rotation matrix from exactly one user-facing description of an orientation.

    Everything except the validation of ``matrix`` is delegated to
    `scipy.spatial.transform.Rotation`. Each argument may carry leading batch axes.

    Parameters
    ----------
    matrix : array_like, shape (..., 3, 3), optional
        Rotation matrix. It must be orthonormal to within `ORTHONORMAL_TOL` with ``det = +1``.
        It is returned unchanged (as a float copy).
    quat : array_like, shape (..., 4), optional
        Quaternion, **scalar first** ``(w, x, y, z)``. It is normalised; it must be nonzero.
    rotvec : array_like, shape (..., 3), optional
        Rotation vector (axis times angle), so ``orientation(rotvec=t) == exp(t)``.
    axis : array_like, shape (..., 3), optional
        Rotation axis (nonzero, normalised here), given together with ``angle``.
    angle : array_like, shape (...), optional
        Rotation angle about ``axis`` (right-hand rule).
    euler : array_like, shape (..., 3), optional
        Euler angles for the sequence ``seq``.
    seq : str
        scipy axis sequence for ``euler``. Uppercase means intrinsic (rotating axes) and
        lowercase means extrinsic (fixed axes). The default ``"ZXZ"`` gives the classical
        ``R = Rz(psi) Rx(theta) Rz(phi)``.
    bryant : array_like, shape (..., 3), optional
        Bryant (Cardan, Tait-Bryan) angles: intrinsic x-y'-z'', ``R = Rx(a) Ry(b) Rz(c)``
        (scipy ``"XYZ"``).
    degrees : bool
        Angles in ``angle``, ``euler``, ``bryant`` and ``rotvec`` are in degrees.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Rotation matrix mapping body-frame components to inertial components.

    Raises
    ------
    ModelError
        A subclass of ``ValueError``. It is raised for none or several descriptions, bad shapes,
        non-finite values, a non-orthonormal or reflecting matrix, a zero axis or quaternion, or an
        invalid ``seq``.
    """
    given = {name: val for name, val in (("matrix", matrix), ("quat", quat), ("rotvec", rotvec),
                                          ("axis", axis), ("angle", angle), ("euler", euler),
                                          ("bryant", bryant)) if val is not None}
    if ("axis" in given) != ("angle" in given):
        raise ModelError("`axis` and `angle` must be given together, e.g. "
                         "orientation(axis=(0, 0, 1), angle=0.5).")
    if len(set(given) - {"angle"}) != 1:
        raise ModelError(
            f"orientation needs exactly one of matrix=, quat=, rotvec=, axis= with angle=, "
            f"euler= or bryant=; got {sorted(given) or 'none'}.")
    if "matrix" in given:
        return _check_matrix(matrix)
    if "quat" in given:
        q = _finite(quat, "quat", 4)
        norm = np.linalg.norm(q, axis=-1)
        if np.any(norm < 1e-12):
            raise ModelError(f"`quat` must be nonzero (scalar-first w, x, y, z), got {quat!r}.")
        return Rotation.from_quat(q, scalar_first=True).as_matrix()
    if "rotvec" in given:
        return Rotation.from_rotvec(_finite(rotvec, "rotvec", 3), degrees=degrees).as_matrix()
    if "axis" in given:
        ax = _finite(axis, "axis", 3)
        ang = _finite(angle, "angle", None)
        norm = np.linalg.norm(ax, axis=-1)
        if np.any(norm < 1e-12):
            raise ModelError(f"`axis` must be a nonzero vector, got {axis!r}.")
        rv = ax / norm[..., None] * ang[..., None]
        return Rotation.from_rotvec(rv, degrees=degrees).as_matrix()
    if "bryant" in given:
        euler, seq = bryant, "XYZ"
    name = "bryant" if "bryant" in given else "euler"
    ang = _finite(euler, name, 3)
    if not (isinstance(seq, str) and len(seq) == 3):
        raise ModelError(f"`seq` must be a 3-letter axis sequence such as 'ZXZ' (intrinsic) or "
                         f"'zxz' (extrinsic), got {seq!r}.")
    try:
        return Rotation.from_euler(seq, ang, degrees=degrees).as_matrix()
    except ValueError as err:
        raise ModelError(f"invalid Euler sequence seq={seq!r}: {err} Use three letters from x, y, "
                         "z, all uppercase (intrinsic) or all lowercase (extrinsic), "
                         "with no two consecutive axes equal.") from err


_SPEC_FORMS = {"matrix": 1, "quat": 1, "rotvec": 1, "axis_angle": 2, "euler": 2, "bryant": 1}


def as_matrix(spec) -> NDArray:
    """Rotation matrix from a compact orientation specification (for model input).

    Parameters
    ----------
    spec : array_like or Mapping or tuple or scipy Rotation
        One of:

        * a rotation matrix, shape (3, 3) or (..., 3, 3), validated as in `orientation`;
        * a mapping of `orientation` keywords, e.g. ``{"euler": (0, 90, 0), "seq": "ZXZ",
          "degrees": True}``;
        * ``("matrix", R)``, ``("quat", (w, x, y, z))``, ``("rotvec", theta)``,
          ``("axis_angle", axis, angle)``, ``("euler", seq, angles)`` or ``("bryant", angles)``,
          with angles in radians (use the mapping form for degrees);
        * a `scipy.spatial.transform.Rotation`.

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Raises
    ------
    ModelError
        For an unrecognised specification or invalid values (see `orientation`).
    """
    if isinstance(spec, Rotation):
        return spec.as_matrix()
    if isinstance(spec, Mapping):
        try:
            return orientation(**spec)
        except TypeError as err:
            raise ModelError(f"invalid orientation keywords in {spec!r}: {err}") from err
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind, args = spec[0].lower(), spec[1:]
        if kind not in _SPEC_FORMS or len(args) != _SPEC_FORMS[kind]:
            raise ModelError(
                f"unrecognised orientation {spec!r}. Use ('matrix', R), ('quat', (w, x, y, z)), "
                "('rotvec', theta), ('axis_angle', axis, angle), ('euler', seq, angles) or "
                "('bryant', angles).")
        if kind == "axis_angle":
            return orientation(axis=args[0], angle=args[1])
        if kind == "euler":
            return orientation(euler=args[1], seq=args[0])
        return orientation(**{kind: args[0]})
    return orientation(matrix=spec)
