"""The results of a simulation: time histories of bodies, joints and energies, with save/load, CSV and plots.

A :class:`Solution` is built once by the solver and then only read. Its arrays are named by entity
(``body_*``, ``joint_*``) with the time axis first, so that ``sol.body_position[:, i]`` is the
trajectory of body ``i``. Two time grids exist:

* ``t`` (nt,): the time nodes, where the end values of the time elements live (positions,
  rotations, velocities, relative coordinates, multipliers, energies);
* ``t_internal`` (ni,): the internal points of the time elements, where the primary internal
  unknowns live (joint reactions). For the p = 1 element these are the mid-points.

Storage is one ``.npz`` file without pickle (:meth:`Solution.save`, :meth:`Solution.load`), a round
trip that is exact to the bit.
"""
from __future__ import annotations

import re

import csv
import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Solution", "BodyView", "JointView", "STATS_KEYS", "PLOT_QUANTITIES"]

logger = logging.getLogger(__name__)

#: Per-time-element statistics the solver reports, in this order (see :class:`Solution`).
STATS_KEYS: tuple[str, ...] = ("t_start", "h", "iterations", "rate", "factorizations", "residual", "retries")

#: Quantities accepted by :meth:`Solution.plot`.
PLOT_QUANTITIES: tuple[str, ...] = (
    "position", "velocity", "angular_velocity", "rel_position", "rel_rotation",
    "joint_force", "joint_moment", "joint_force_norm", "energy", "newton",
)

#: Version of the ``.npz`` layout written by :meth:`Solution.save`.
_FILE_FORMAT = 1
_FORMAT_KEY = "__flexmb_solution__"


class BodyView(NamedTuple):
    """Read-only time histories of one body (views into the :class:`Solution` arrays).

    Attributes
    ----------
    name : str
    t : ndarray, shape (nt,)
        Time nodes [s].
    position : ndarray, shape (nt, 3)
        Reference point in the inertial frame [m].
    rotation : ndarray, shape (nt, 3, 3)
        Rotation matrix body -> inertial.
    velocity : ndarray, shape (nt, 3)
        Velocity of the reference point [m/s].
    angular_velocity : ndarray, shape (nt, 3)
        Angular velocity, inertial components [rad/s].
    quaternion : ndarray, shape (nt, 4)
        Orientation as a unit quaternion, scalar first (w, x, y, z).
    """

    name: str
    t: NDArray[np.float64]
    position: NDArray[np.float64]
    rotation: NDArray[np.float64]
    velocity: NDArray[np.float64]
    angular_velocity: NDArray[np.float64]
    quaternion: NDArray[np.float64]


class JointView(NamedTuple):
    """Read-only time histories of one joint (views into the :class:`Solution` arrays).

    Attributes
    ----------
    name, type : str
    t : ndarray, shape (nt,)
        Time nodes [s].
    rel_position : ndarray, shape (nt, 3)
        Relative position of the attachment point on B w.r.t. frame A, components in A [m].
    rel_rotation : ndarray, shape (nt, 3)
        Accumulated relative rotation vector of B w.r.t. A, components in A [rad].
    rel_velocity : ndarray, shape (nt, 6)
        Relative linear and angular velocity, components in A [m/s, rad/s].
    multiplier : ndarray, shape (nt, 6)
        Multipliers at the nodes [N s, N m s].
    t_internal : ndarray, shape (ni,)
        Internal points of the time elements [s].
    force : ndarray, shape (ni, 3)
        Reaction force of A on B, components in A [N].
    moment : ndarray, shape (ni, 3)
        Reaction moment of A on B about the attachment point of B, components in A [N m].
    """

    name: str
    type: str
    t: NDArray[np.float64]
    rel_position: NDArray[np.float64]
    rel_rotation: NDArray[np.float64]
    rel_velocity: NDArray[np.float64]
    multiplier: NDArray[np.float64]
    t_internal: NDArray[np.float64]
    force: NDArray[np.float64]
    moment: NDArray[np.float64]


def _frozen(a: NDArray) -> NDArray:
    a.flags.writeable = False
    return a


def _float_array(name: str, value: ArrayLike | None, shape: tuple[int, ...], dims: str) -> NDArray[np.float64]:
    """Copy ``value`` to a read-only float64 array of exactly ``shape``; ``None`` means "no entries".

    ``dims`` names the axes for the error message, e.g. ``"(nt, nb, 3)"``.
    """
    if value is None:
        if math.prod(shape) != 0:
            raise ValueError(f"`{name}` is required, expected shape {dims} = {shape}; it was not given")
        return _frozen(np.zeros(shape))
    try:
        a = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a numeric array of shape {dims} = {shape}: {exc}") from None
    if a.shape != shape:
        raise ValueError(
            f"`{name}` has shape {a.shape}, expected {dims} = {shape}; "
            "check the time axis comes first and the entity axis second"
        )
    return _frozen(a)


def _names(name: str, value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ValueError(f"`{name}` must be a sequence of strings, not the single string {value!r}; wrap it in a tuple")
    names = tuple(value)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"`{name}` must contain strings only; got {bad[0]!r} of type {type(bad[0]).__name__}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"`{name}` must be unique; duplicated: {dup}. Give each entity its own name")
    return names


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def _check_increasing(name: str, t: NDArray) -> None:
    if not np.all(np.isfinite(t)):
        bad = np.flatnonzero(~np.isfinite(t))[:5].tolist()
        raise ValueError(f"`{name}` contains non-finite values at indices {bad}")
    if t.size > 1 and not np.all(np.diff(t) > 0):
        k = int(np.flatnonzero(np.diff(t) <= 0)[0])
        raise ValueError(
            f"`{name}` must be strictly increasing; {name}[{k}] = {t[k]!r} >= {name}[{k + 1}] = {t[k + 1]!r}. "
            "Store only accepted time elements, in order"
        )


class Solution:
    """Time histories of a flexible multibody simulation.

    All arrays are copied at construction and made read-only. Only keyword arguments are accepted;
    the joint arrays may be omitted when the model has no joints.

    Parameters
    ----------
    t : array_like, shape (nt,)
        Time nodes [s], strictly increasing.
    body_names : sequence of str, length nb
        Unique body names.
    body_position : array_like, shape (nt, nb, 3)
        Position of each body's reference point in the inertial frame [m]. For rigid bodies the
        reference point is the centre of mass.
    body_rotation : array_like, shape (nt, nb, 3, 3)
        Rotation matrix body -> inertial (columns are the body axes in inertial components).
    body_velocity : array_like, shape (nt, nb, 3)
        Velocity of the reference point, inertial components [m/s].
    body_angular_velocity : array_like, shape (nt, nb, 3)
        Angular velocity, inertial components [rad/s].
    joint_names, joint_types : sequence of str, length nj
        Unique joint names and their type names (e.g. ``"revolute"``).
    joint_rel_position : array_like, shape (nt, nj, 3)
        Relative position s of the attachment point on body B w.r.t. the attachment frame on body A,
        components in frame A [m].
    joint_rel_rotation : array_like, shape (nt, nj, 3)
        Relative rotation vector of frame B w.r.t. frame A, components in frame A [rad].
        Accumulated over time, so a revolute angle grows beyond 2π.
    joint_rel_velocity : array_like, shape (nt, nj, 6)
        Relative linear then angular velocity, components in frame A [m/s, rad/s].
    t_internal : array_like, shape (ni,)
        Internal points of the time elements, where the primary internal unknowns live (the
        mid-points for p = 1) [s].
    joint_force : array_like, shape (ni, nj, 3)
        Reaction force exerted by body A on body B, components in attachment frame A [N].
    joint_moment : array_like, shape (ni, nj, 3)
        Reaction moment exerted by body A on body B about the attachment point of B, components in
        attachment frame A [N m].
    joint_multiplier : array_like, shape (nt, nj, 6)
        Joint multipliers at the time nodes [N s, N m s].
    kinetic_energy, potential_energy : array_like, shape (nt,)
        Energies at the time nodes [J]. The potential energy includes gravity and elastic energy.
    stats : mapping of str to array_like, each shape (ne,)
        Per time element: ``t_start`` [s], ``h`` [s], ``iterations``, ``rate`` (Newton contraction
        rate), ``factorizations``, ``residual`` (final scaled residual norm), ``retries``. Further
        keys are allowed; all entries must have the same length ne. Dtypes are kept.
    extra : mapping of str to array_like, optional
        Further quantities, e.g. the modal coordinates of a flexible body under ``"modal/<body>"``,
        shape (nt, nm). Numeric or boolean dtypes only; dtypes are kept.
    meta : mapping, optional
        JSON-serialisable description of the run (model summary, time element, options, flexmb
        version). NumPy scalars and arrays are converted to plain Python values.

    Attributes
    ----------
    nt, nb, nj, ni, ne : int
        Numbers of time nodes, bodies, joints, internal points and time elements.
    total_energy : ndarray, shape (nt,)
        ``kinetic_energy + potential_energy`` [J].
    quaternions : ndarray, shape (nt, nb, 4)
        Body orientations as unit quaternions (w, x, y, z), sign continuous in time.

    Examples
    --------
    >>> sol.body("bar1").position[-1]          # doctest: +SKIP
    >>> sol.plot("rel_rotation", joints=["hinge"], components="z", path="hinge.png")  # doctest: +SKIP
    >>> sol.save("run.npz"); Solution.load("run.npz")                                # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        t: ArrayLike,
        body_names: Sequence[str],
        body_position: ArrayLike,
        body_rotation: ArrayLike,
        body_velocity: ArrayLike,
        body_angular_velocity: ArrayLike,
        t_internal: ArrayLike,
        kinetic_energy: ArrayLike,
        potential_energy: ArrayLike,
        joint_names: Sequence[str] = (),
        joint_types: Sequence[str] = (),
        joint_rel_position: ArrayLike | None = None,
        joint_rel_rotation: ArrayLike | None = None,
        joint_rel_velocity: ArrayLike | None = None,
        joint_force: ArrayLike | None = None,
        joint_moment: ArrayLike | None = None,
        joint_multiplier: ArrayLike | None = None,
        stats: Mapping[str, ArrayLike] | None = None,
        extra: Mapping[str, ArrayLike] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        t_arr = np.array(t, dtype=np.float64, copy=True)
        if t_arr.ndim != 1:
            raise ValueError(f"`t` must have shape (nt,), got shape {t_arr.shape}")
        _check_increasing("t", t_arr)
        ti_arr = np.array(t_internal, dtype=np.float64, copy=True)
        if ti_arr.ndim != 1:
            raise ValueError(f"`t_internal` must have shape (ni,), got shape {ti_arr.shape}")
        _check_increasing("t_internal", ti_arr)
        self.t: NDArray[np.float64] = _frozen(t_arr)
        self.t_internal: NDArray[np.float64] = _frozen(ti_arr)

        self.body_names: tuple[str, ...] = _names("body_names", body_names)
        self.joint_names: tuple[str, ...] = _names("joint_names", joint_names)
        if isinstance(joint_types, str):
            raise ValueError(f"`joint_types` must be a sequence of strings, not the single string {joint_types!r}")
        self.joint_types: tuple[str, ...] = tuple(joint_types)
        if len(self.joint_types) != len(self.joint_names) or not all(isinstance(s, str) for s in self.joint_types):
            raise ValueError(
                f"`joint_types` must hold one string per joint: {len(self.joint_names)} joint names "
                f"{list(self.joint_names)} but joint_types = {list(self.joint_types)}"
            )

        nt, ni, nb, nj = t_arr.size, ti_arr.size, len(self.body_names), len(self.joint_names)
        self.body_position = _float_array("body_position", body_position, (nt, nb, 3), "(nt, nb, 3)")
        self.body_rotation = _float_array("body_rotation", body_rotation, (nt, nb, 3, 3), "(nt, nb, 3, 3)")
        self.body_velocity = _float_array("body_velocity", body_velocity, (nt, nb, 3), "(nt, nb, 3)")
        self.body_angular_velocity = _float_array(
            "body_angular_velocity", body_angular_velocity, (nt, nb, 3), "(nt, nb, 3)"
        )
        self.joint_rel_position = _float_array("joint_rel_position", joint_rel_position, (nt, nj, 3), "(nt, nj, 3)")
        self.joint_rel_rotation = _float_array("joint_rel_rotation", joint_rel_rotation, (nt, nj, 3), "(nt, nj, 3)")
        self.joint_rel_velocity = _float_array("joint_rel_velocity", joint_rel_velocity, (nt, nj, 6), "(nt, nj, 6)")
        self.joint_force = _float_array("joint_force", joint_force, (ni, nj, 3), "(ni, nj, 3)")
        self.joint_moment = _float_array("joint_moment", joint_moment, (ni, nj, 3), "(ni, nj, 3)")
        self.joint_multiplier = _float_array("joint_multiplier", joint_multiplier, (nt, nj, 6), "(nt, nj, 6)")
        self.kinetic_energy = _float_array("kinetic_energy", kinetic_energy, (nt,), "(nt,)")
        self.potential_energy = _float_array("potential_energy", potential_energy, (nt,), "(nt,)")

        self.stats: dict[str, NDArray] = self._checked_stats(stats or {})
        self.extra: dict[str, NDArray] = self._checked_extra(extra or {})
        try:
            # the JSON round trip both validates and detaches meta from the caller's objects
            self.meta: dict[str, Any] = json.loads(json.dumps(dict(meta or {}), default=_json_default))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"`meta` must be JSON-serialisable (str keys; numbers, strings, lists, dicts): {exc}"
            ) from None
        self._quaternions: NDArray[np.float64] | None = None

    @staticmethod
    def _checked_stats(stats: Mapping[str, ArrayLike]) -> dict[str, NDArray]:
        out: dict[str, NDArray] = {}
        ne = None
        for key, value in stats.items():
            if not isinstance(key, str):
                raise ValueError(f"`stats` keys must be strings; got {key!r}")
            a = np.array(value, copy=True)
            if a.dtype.kind not in "biuf":
                raise ValueError(f"`stats[{key!r}]` must be numeric, got dtype {a.dtype}")
            if a.ndim != 1:
                raise ValueError(f"`stats[{key!r}]` has shape {a.shape}, expected (ne,): one entry per time element")
            if ne is None:
                ne, first = a.size, key
            elif a.size != ne:
                raise ValueError(
                    f"`stats[{key!r}]` has shape {a.shape}, expected (ne,) = ({ne},) like `stats[{first!r}]`"
                )
            out[key] = _frozen(a)
        missing = [k for k in STATS_KEYS if k not in out]
        if out and missing:
            logger.debug("stats without the documented keys %s", missing)
        return out

    @staticmethod
    def _checked_extra(extra: Mapping[str, ArrayLike]) -> dict[str, NDArray]:
        out: dict[str, NDArray] = {}
        for key, value in extra.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"`extra` keys must be non-empty strings; got {key!r}")
            a = np.array(value, copy=True)
            if a.dtype.kind not in "biufc":
                raise ValueError(
                    f"`extra[{key!r}]` has dtype {a.dtype}; only numeric or boolean arrays can be stored without pickle"
                )
            out[key] = _frozen(a)
        return out

    # ------------------------------------------------------------------ sizes and derived values
    @property
    def nt(self) -> int:
        """Number of time nodes."""
        return self.t.size

    @property
    def ni(self) -> int:
        """Number of internal points."""
        return self.t_internal.size

    @property
    def nb(self) -> int:
        """Number of bodies."""
        return len(self.body_names)

    @property
    def nj(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    @property
    def ne(self) -> int:
        """Number of time elements with statistics (0 when ``stats`` is empty)."""
        return next(iter(self.stats.values())).size if self.stats else 0

    @property
    def total_energy(self) -> NDArray[np.float64]:
        """Kinetic plus potential energy at the time nodes, shape (nt,) [J]."""
        return _frozen(self.kinetic_energy + self.potential_energy)

    @property
    def quaternions(self) -> NDArray[np.float64]:
        """Body orientations as unit quaternions (w, x, y, z), shape (nt, nb, 4).

        Computed from ``body_rotation`` with :class:`scipy.spatial.transform.Rotation`. The sign
        (q and -q are the same rotation) is chosen with w >= 0 at the first node and then
        continuous in time, so that plotted components do not jump.
        """
        if self._quaternions is None:
            from scipy.spatial.transform import Rotation

            nt, nb = self.nt, self.nb
            q = np.zeros((nt, nb, 4))
            if nt * nb:
                xyzw = Rotation.from_matrix(self.body_rotation.reshape(-1, 3, 3)).as_quat()
                q = np.roll(xyzw, 1, axis=-1).reshape(nt, nb, 4)
                # sign s_k with s_k q_k . s_{k-1} q_{k-1} >= 0 is a running product of signs
                step = np.ones((nt, nb))
                step[0] = np.where(q[0, :, 0] < 0, -1.0, 1.0)
                step[1:] = np.where(np.einsum("tbi,tbi->tb", q[1:], q[:-1]) < 0, -1.0, 1.0)
                q *= np.cumprod(step, axis=0)[..., None]
            self._quaternions = _frozen(q)
        return self._quaternions

    # ------------------------------------------------------------------ views
    def _index(self, kind: str, names: tuple[str, ...], name: str) -> int:
        try:
            return names.index(name)
        except ValueError:
            raise KeyError(f"unknown {kind} {name!r}; valid {kind} names: {list(names)}") from None

    def body(self, name: str) -> BodyView:
        """Time histories of the body ``name`` as a read-only :class:`BodyView`.

        Raises
        ------
        KeyError
            If ``name`` is not a body name; the message lists the valid names.
        """
        i = self._index("body", self.body_names, name)
        return BodyView(
            name, self.t, self.body_position[:, i], self.body_rotation[:, i], self.body_velocity[:, i],
            self.body_angular_velocity[:, i], self.quaternions[:, i],
        )

    def joint(self, name: str) -> JointView:
        """Time histories of the joint ``name`` as a read-only :class:`JointView`.

        Raises
        ------
        KeyError
            If ``name`` is not a joint name; the message lists the valid names.
        """
        j = self._index("joint", self.joint_names, name)
        return JointView(
            name, self.joint_types[j], self.t, self.joint_rel_position[:, j], self.joint_rel_rotation[:, j],
            self.joint_rel_velocity[:, j], self.joint_multiplier[:, j], self.t_internal,
            self.joint_force[:, j], self.joint_moment[:, j],
        )

    def __repr__(self) -> str:
        def names(ns: tuple[str, ...]) -> str:
            shown = ", ".join(ns[:4]) + (", ..." if len(ns) > 4 else "")
            return f"{len(ns)} [{shown}]"

        span = f"t=[{self.t[0]:.6g}, {self.t[-1]:.6g}] s" if self.nt else "t=[]"
        drift = ""
        if self.nt > 1:
            e = self.total_energy
            drift = f", energy drift={float(np.max(np.abs(e - e[0]))):.3g} J"
        return (
            f"Solution(nt={self.nt}, {span}, ne={self.ne}, bodies={names(self.body_names)}, "
            f"joints={names(self.joint_names)}{drift})"
        )

    # ------------------------------------------------------------------ storage
    _ARRAYS: tuple[str, ...] = (
        "t", "t_internal", "body_position", "body_rotation", "body_velocity", "body_angular_velocity",
        "joint_rel_position", "joint_rel_rotation", "joint_rel_velocity", "joint_force", "joint_moment",
        "joint_multiplier", "kinetic_energy", "potential_energy",
    )
    _STRINGS: tuple[str, ...] = ("body_names", "joint_names", "joint_types")

    def save(self, path: str | Path, *, compress: bool = True) -> Path:
        """Write the solution to one ``.npz`` file (no pickle); :meth:`load` reads it back bit for bit.

        Layout: one array per attribute; names as unicode arrays; ``stats/<key>`` and
        ``extra/<key>`` arrays with their dtypes; ``meta`` as a JSON string; and a JSON header
        ``__flexmb_solution__`` with the format version and the key order.

        Parameters
        ----------
        path : str or Path
            Target file; the suffix ``.npz`` is appended when missing (as NumPy does).
        compress : bool
            Use :func:`numpy.savez_compressed` (lossless) rather than :func:`numpy.savez`.

        Returns
        -------
        Path
            The file written.
        """
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        data: dict[str, NDArray] = {name: getattr(self, name) for name in self._ARRAYS}
        for name in self._STRINGS:
            data[name] = np.array(getattr(self, name), dtype=str).reshape(-1)
        data.update({f"stats/{k}": v for k, v in self.stats.items()})
        data.update({f"extra/{k}": v for k, v in self.extra.items()})
        data["meta"] = np.array(json.dumps(self.meta))
        header = {"format": _FILE_FORMAT, "stats": list(self.stats), "extra": list(self.extra)}
        data[_FORMAT_KEY] = np.array(json.dumps(header))
        (np.savez_compressed if compress else np.savez)(path, **data)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Solution:
        """Read a file written by :meth:`save`.

        Raises
        ------
        ValueError
            If the file is not a flexmb solution or has a newer format.
        """
        path = Path(path)
        with np.load(path, allow_pickle=False) as f:
            if _FORMAT_KEY not in f.files:
                raise ValueError(
                    f"{path} is not a flexmb solution file (no {_FORMAT_KEY!r} entry); write it with Solution.save"
                )
            header = json.loads(str(f[_FORMAT_KEY][()]))
            if header.get("format", 0) > _FILE_FORMAT:
                raise ValueError(
                    f"{path} has solution format {header.get('format')}, this flexmb reads up to "
                    f"{_FILE_FORMAT}; upgrade flexmb"
                )
            kwargs: dict[str, Any] = {name: f[name] for name in cls._ARRAYS}
            kwargs.update({name: tuple(str(s) for s in f[name]) for name in cls._STRINGS})
            kwargs["stats"] = {k: f[f"stats/{k}"] for k in header["stats"]}
            kwargs["extra"] = {k: f[f"extra/{k}"] for k in header["extra"]}
            kwargs["meta"] = json.loads(str(f["meta"][()]))
        return cls(**kwargs)

    def to_csv(self, directory: str | Path) -> dict[str, Path]:
        """Write the time histories as CSV tables in long format (one row per time and entity).

        Numbers are written with Python's shortest round-trip representation (exact).

        Files
        -----
        ``bodies.csv``
            t, body, x, y, z, vx, vy, vz, wx, wy, wz, qw, qx, qy, qz (inertial frame; SI units).
        ``joints.csv``
            t, joint, x, y, z, rx, ry, rz, vx, vy, vz, wx, wy, wz (relative coordinates and
            velocities, frame A).
        ``reactions.csv``
            t_internal, joint, fx, fy, fz, mx, my, mz (A on B, frame A, moment about the point of B).
        ``energy.csv``
            t, kinetic, potential, total.
        ``newton.csv``
            element, then one column per ``stats`` key.

        Parameters
        ----------
        directory : str or Path
            Created if missing; existing files of the same names are overwritten.

        Returns
        -------
        dict of str to Path
            ``{"bodies": ..., "joints": ..., "reactions": ..., "energy": ..., "newton": ...}``.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}

        def long_table(fname: str, header: list[str], t: NDArray, names: tuple[str, ...], values: NDArray) -> None:
            # values: (len(t), len(names), ncols) -> rows ordered by time, then entity
            nt_, ne_ = t.size, len(names)
            path = directory / fname
            with path.open("w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                tt = np.repeat(t, ne_).tolist()
                nn = list(names) * nt_
                vv = values.reshape(nt_ * ne_, -1).tolist()
                w.writerows([tk, nk, *vk] for tk, nk, vk in zip(tt, nn, vv))
            paths[fname.removesuffix(".csv")] = path

        long_table(
            "bodies.csv",
            ["t", "body", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "qw", "qx", "qy", "qz"],
            self.t, self.body_names,
            np.concatenate(
                [self.body_position, self.body_velocity, self.body_angular_velocity, self.quaternions], axis=-1
            ),
        )
        long_table(
            "joints.csv",
            ["t", "joint", "x", "y", "z", "rx", "ry", "rz", "vx", "vy", "vz", "wx", "wy", "wz"],
            self.t, self.joint_names,
            np.concatenate([self.joint_rel_position, self.joint_rel_rotation, self.joint_rel_velocity], axis=-1),
        )
        long_table(
            "reactions.csv",
            ["t_internal", "joint", "fx", "fy", "fz", "mx", "my", "mz"],
            self.t_internal, self.joint_names,
            np.concatenate([self.joint_force, self.joint_moment], axis=-1),
        )
        path = directory / "energy.csv"
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t", "kinetic", "potential", "total"])
            table = np.column_stack([self.t, self.kinetic_energy, self.potential_energy, self.total_energy])
            w.writerows(table.tolist())
        paths["energy"] = path
        path = directory / "newton.csv"
        keys = [k for k in STATS_KEYS if k in self.stats] + [k for k in self.stats if k not in STATS_KEYS]
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["element", *keys])
            cols = [self.stats[k].tolist() for k in keys]
            w.writerows([e, *row] for e, row in enumerate(zip(*cols)))
        paths["newton"] = path
        return paths

    # ------------------------------------------------------------------ plots
    def plot(
        self,
        quantity: str,
        *,
        bodies: Sequence[str] | None = None,
        joints: Sequence[str] | None = None,
        components: str = "xyz",
        ax: Any = None,
        path: str | Path | None = None,
    ) -> Any:
        """Plot a time history with matplotlib (imported here; works with the Agg backend).

        Parameters
        ----------
        quantity : str
            One of ``"position"``, ``"velocity"``, ``"angular_velocity"`` (bodies);
            ``"rel_position"``, ``"rel_rotation"``, ``"joint_force"``, ``"joint_moment"``,
            ``"joint_force_norm"`` (joints); ``"energy"`` (kinetic, potential, total and the
            drift of the total); ``"newton"`` (iterations and contraction rate per time element).
        bodies, joints : sequence of str, optional
            Entities to plot (default: all).
        components : str
            Subset of ``"xyz"`` for vector quantities, e.g. ``"z"``.
        ax : matplotlib.axes.Axes, optional
            Axes to draw into. By default a new figure is made: with ``pyplot`` when ``path`` is
            None (so that ``plt.show()`` displays it), without ``pyplot`` otherwise (nothing is
            left open).
        path : str or Path, optional
            Save the figure as PNG there (parent folders are created).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn into.
        """
        if quantity not in PLOT_QUANTITIES:
            raise ValueError(f"unknown plot quantity {quantity!r}; choose one of {list(PLOT_QUANTITIES)}")
        if not components or any(c not in "xyz" for c in components) or len(set(components)) != len(components):
            raise ValueError(f"`components` must be a non-empty subset of 'xyz' such as 'xz'; got {components!r}")
        comp = ["xyz".index(c) for c in components]

        if ax is None:
            if path is None:
                import matplotlib.pyplot as plt

                _, ax = plt.subplots()
            else:
                from matplotlib.figure import Figure

                ax = Figure(figsize=(7, 4), layout="constrained").subplots()

        def select(kind: str, all_names: tuple[str, ...], chosen: Sequence[str] | None) -> list[tuple[int, str]]:
            if chosen is None:
                return list(enumerate(all_names))
            if isinstance(chosen, str):
                chosen = [chosen]
            return [(self._index(kind, all_names, n), n) for n in chosen]

        si = str(self.meta.get("units", "SI")).upper() == "SI"

        def lab(text: str) -> str:  # SI units in brackets only for SI models
            return text if si else re.sub(r" \[[^\]]*\]", f" [{self.meta.get('units')}]", text)

        body_q = {"position": (self.body_position, "position [m]"),
                  "velocity": (self.body_velocity, "velocity [m/s]"),
                  "angular_velocity": (self.body_angular_velocity, "angular velocity [rad/s]")}
        joint_q = {"rel_position": (self.t, self.joint_rel_position, "relative position [m]"),
                   "rel_rotation": (self.t, self.joint_rel_rotation, "relative rotation [rad]"),
                   "joint_force": (self.t_internal, self.joint_force, "joint force [N]"),
                   "joint_moment": (self.t_internal, self.joint_moment, "joint moment [N m]")}
        if quantity in body_q:
            data, label = body_q[quantity]
            for i, name in select("body", self.body_names, bodies):
                for c in comp:
                    ax.plot(self.t, data[:, i, c], label=f"{name} {'xyz'[c]}")
            ax.set_ylabel(lab(f"body {label}"))
        elif quantity in joint_q:
            t, data, label = joint_q[quantity]
            for j, name in select("joint", self.joint_names, joints):
                for c in comp:
                    ax.plot(t, data[:, j, c], label=f"{name} {'xyz'[c]}")
            ax.set_ylabel(lab(label))
        elif quantity == "joint_force_norm":
            for j, name in select("joint", self.joint_names, joints):
                ax.plot(self.t_internal, np.linalg.norm(self.joint_force[:, j], axis=-1), label=name)
            ax.set_ylabel(lab("|joint force| [N]"))
        elif quantity == "energy":
            ax.plot(self.t, self.kinetic_energy, label="kinetic")
            ax.plot(self.t, self.potential_energy, label="potential")
            ax.plot(self.t, self.total_energy, label="total", color="k")
            ax.set_ylabel(lab("energy [J]"))
            if self.nt:
                drift = float(np.max(np.abs(self.total_energy - self.total_energy[0])))
                ax.set_title(f"max |E - E(0)| = {drift:.3g} J")
        else:  # newton
            if self.ne == 0:
                raise ValueError("no Newton statistics in this solution (`stats` is empty); nothing to plot")
            te = self.stats.get("t_start", np.arange(self.ne))
            # close the last step at the end of the last element
            te_end = te[-1] + (self.stats["h"][-1] if "h" in self.stats and "t_start" in self.stats else 1)
            edges = np.append(te, te_end)
            for key in ("iterations", "retries"):
                if key in self.stats and (key == "iterations" or np.any(self.stats[key])):
                    v = self.stats[key]
                    ax.step(edges, np.append(v, v[-1]), where="post", label=key)
            ax.set_ylabel("iterations per time element")
            if "rate" in self.stats:
                ax2 = ax.twinx()
                ax2.plot(te, self.stats["rate"], ".", color="C3", markersize=3, label="contraction rate")
                ax2.set_ylabel("contraction rate")
                ax2.legend(loc="upper right", fontsize="small")
        ax.set_xlabel("t [s]" if quantity != "newton" or "t_start" in self.stats else "time element")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left" if quantity == "newton" else "best", fontsize="small")
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            ax.figure.savefig(path, dpi=120)
        return ax
