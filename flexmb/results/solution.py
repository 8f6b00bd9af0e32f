"""The results of a simulation: time histories of bodies, joints and energies, with save/load, CSV and plots.

A :class:`Solution` is built once by the solver and then only read. Its arrays are named by entity
(``body_*``, ``joint_*``) with the time axis first, so that ``sol.body_position[:, i]`` is the
trajectory of body ``i``. Two time grids exist:

* ``t`` (nt,): the time nodes, where the end values of the time elements live (positions,
  rotations, velocities, relative coordinates, multipliers, energies) and where the joint
  reactions are recovered to the nodal order (``joint_force``, ``joint_moment``);
* ``t_internal`` (ni,): the internal points of the time elements, where the reactions are primary
  unknowns (``joint_force_internal``, ``joint_moment_internal``: pointwise values that oscillate
  within each element for p >= 2). For the p = 1 element these are the mid-points.

Reactions at other times: :meth:`Solution.reactions_at`, :meth:`JointView.force_at`.

Storage is one ``.npz`` file without pickle (:meth:`Solution.save`, :meth:`Solution.load`), a round
trip that is exact to the bit.
"""
from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.results import store as solution_store
from flexmb.results.energy_fields import EnergyFields
from flexmb.results.output import PLOT_QUANTITIES, STATS_KEYS, plot_deflection, plot_solution, write_csv
from flexmb.results.store import _FORMAT_KEY, _digest, _json_default  # noqa: F401  (re-exported)
from flexmb.results.views import BodyView, JointView, PointView, _frozen, _quaternions, _values_at

__all__ = ["Solution", "BodyView", "JointView", "PointView", "STATS_KEYS", "PLOT_QUANTITIES"]

logger = logging.getLogger(__name__)

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
    dup = sorted(n for n, k in Counter(names).items() if k > 1)
    if dup:
        raise ValueError(f"`{name}` must be unique; duplicated: {dup}. Give each entity its own name")
    return names


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


class Solution(EnergyFields):
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
        Position of each body's reference point in the inertial frame [m] (the point the body's
        ``position`` was given for; the centre of mass sits at ``com`` in the body frame).
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
    joint_force : array_like, shape (nt, nj, 3)
        Reaction force exerted by body A on body B at the time nodes, components in attachment
        frame A [N]; recovered from the impulses to the nodal order (docs/theory.md section 8).
    joint_moment : array_like, shape (nt, nj, 3)
        Reaction moment exerted by body A on body B about the attachment point of B at the time
        nodes, components in attachment frame A [N m].
    joint_force_internal, joint_moment_internal : array_like, shape (ni, nj, 3)
        The same at the internal points ``t_internal``, as solved for (pointwise values; for
        p >= 2 they oscillate within each element).
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
        joint_force_internal: ArrayLike | None = None,
        joint_moment_internal: ArrayLike | None = None,
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
        self.joint_force = _float_array("joint_force", joint_force, (nt, nj, 3), "(nt, nj, 3)")
        self.joint_moment = _float_array("joint_moment", joint_moment, (nt, nj, 3), "(nt, nj, 3)")
        self.joint_force_internal = _float_array("joint_force_internal", joint_force_internal, (ni, nj, 3),
                                                 "(ni, nj, 3)")
        self.joint_moment_internal = _float_array("joint_moment_internal", joint_moment_internal, (ni, nj, 3),
                                                  "(ni, nj, 3)")
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
        self._model: Any = None

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
    def events(self) -> list:
        """The impacts of a run with contacts or impulses (:func:`flexmb.results.events.event_list`)."""
        from flexmb.results.events import event_list
        return event_list(self)

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
        ex = self.extra
        ifs = {}
        pre = f"interface/{name}/"
        for key in ex:
            if key.startswith(pre) and key.endswith("/position"):
                iname = key[len(pre):-len("/position")]
                k = pre + iname
                Rk = ex[f"{k}/rotation"]
                ifs[iname] = BodyView(f"{name}:{iname}", self.t, ex[f"{k}/position"], Rk, ex[f"{k}/velocity"],
                                      ex[f"{k}/angular_velocity"], _quaternions(Rk))
        return BodyView(
            name, self.t, self.body_position[:, i], self.body_rotation[:, i], self.body_velocity[:, i],
            self.body_angular_velocity[:, i], self.quaternions[:, i], ex.get(f"modal/{name}"),
            ex.get(f"modal_rate/{name}"), ifs,
            None if self._model is None else self._model.bodies[self._model.body_index(name)],
        )

    @property
    def model(self) -> Any:
        """The :class:`~flexmb.model.Model` given to :meth:`attach` (None: unknown, e.g. after :meth:`load`)."""
        return self._model

    def attach(self, model: Any) -> "Solution":
        """Tell the solution which model it is the result of (not saved by :meth:`save`); returns ``self``.

        Flexible-body outputs need the body data (mesh, mode shapes, stresses): ``body(name).nodes``,
        ``.chord_deflection``, ``.elastic_energy``, ``.kinetic_energy``, :meth:`to_paraview`,
        :meth:`plot_deflection`.  ModelError when the model's bodies or modal sizes differ from the
        solution's."""
        from flexmb.results.flexible_outputs import check_model

        check_model(self, model)
        self._model = model
        return self

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
            self.joint_rel_velocity[:, j], self.joint_multiplier[:, j], self.joint_force[:, j],
            self.joint_moment[:, j], self.t_internal, self.joint_force_internal[:, j],
            self.joint_moment_internal[:, j], self._order(),
        )

    def _order(self) -> int:
        """Nodal order 2p of the run (``meta["order"]``; 2 when unknown)."""
        order = self.meta.get("order", 2)
        return int(order) if isinstance(order, (int, float)) and order >= 1 else 2

    def reactions_at(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Reactions of all joints at ``times`` [s] within the run.

        Returns
        -------
        force, moment : ndarray, shape (k, nj, 3) (or (nj, 3) for a scalar time)
            Force of A on B [N] and its moment about B's origin [N m], frame A components: the
            local polynomial of degree ``2p`` through the nearest ``2p + 1`` node values
            (:attr:`joint_force`, :attr:`joint_moment`), accurate to the nodal order.

        Raises
        ------
        ModelError
            For a time outside ``[t[0], t[-1]]`` or not a finite number.
        """
        n = self._order() + 1
        return (_values_at(self.t, self.joint_force, times, n, "reactions_at"),
                _values_at(self.t, self.joint_moment, times, n, "reactions_at"))

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
    _ARRAYS: tuple[str, ...] = solution_store.ARRAYS
    _STRINGS: tuple[str, ...] = solution_store.STRINGS

    def at(self, times: ArrayLike) -> "Solution":
        """The solution at requested ``times`` [s] (strictly increasing, within ``[t[0], t[-1]]``),
        interpolated to order 4 from the nodes' values and derivatives (cubic Hermite for positions
        and rotations, cubic splines for the rest; :mod:`flexmb.results.dense_output`), not linearly.
        Internal-point arrays and statistics are carried over unchanged."""
        from flexmb.results.dense_output import sample

        out = sample(self, times)
        out._model = self._model
        return out

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
        return solution_store.save(self, path, compress=compress)

    @classmethod
    def load(cls, path: str | Path) -> Solution:
        """Read a file written by :meth:`save`.

        Every array is checked against the SHA-256 digest :meth:`save` stored with it, and the
        node values must be finite, so a file damaged or modified after saving is refused.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        SolutionFileError
            If the file is not a flexmb solution, is damaged (truncated, flipped bits, missing
            entries, NaN injected) or has a newer format; the message names the file and the entry.
        """
        return solution_store.load(cls, path)

    def to_csv(self, directory: str | Path) -> dict[str, Path]:
        """Write the time histories as CSV tables in long format (one row per time and entity).

        Numbers are written with Python's shortest round-trip representation (exact). Column
        headers carry the units of the model's unit system (``meta["units"]``, see
        :mod:`flexmb.model.units`), e.g. ``x [m]`` or ``x [ft]``; models without joints get joint
        tables with the header only.

        Files
        -----
        ``bodies.csv``
            t, body, x, y, z, vx, vy, vz, wx, wy, wz, qw, qx, qy, qz (reference point, inertial frame).
        ``joints.csv``
            t, joint, x, y, z, rx, ry, rz, vx, vy, vz, wx, wy, wz (relative coordinates and
            velocities, frame A).
        ``reactions.csv``
            t, joint, fx, fy, fz, mx, my, mz (A on B at the nodes, frame A, moment about the point of B).
        ``reactions_internal.csv``
            t_internal, joint, fx, fy, fz, mx, my, mz (the same at the internal points).
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
            ``{"bodies": ..., "joints": ..., "reactions": ..., "reactions_internal": ..., "energy": ...,
            "newton": ...}``.
        """
        return write_csv(self, directory)

    def to_paraview(self, directory: str | Path, *, model: Any = None, bodies: Sequence[str] | None = None,
                    every: int = 1, scale: float = 1.0, frame: str = "inertial", triad: float | None = None,
                    stem: str = "solution") -> Path:
        """Write a ParaView ``.pvd`` time series (deformed meshes of the flexible bodies with
        ``displacement`` [m] and ``von_mises`` [Pa], rigid bodies as axis triads) and return its path;
        files and options (``every`` k-th time, ``scale`` of the drawn displacements, ``frame``
        "inertial"/"body", ``triad`` [m]) in :mod:`flexmb.results.paraview`.  ``model``: see :meth:`attach`."""
        from flexmb.results.paraview import write_paraview

        return write_paraview(self, directory, model=model, bodies=bodies, every=every, scale=scale, frame=frame,
                              triad=triad, stem=stem)

    def plot_deflection(self, body: str, *, interfaces: Sequence[str] | None = None, nodes: Any = None,
                        components: str = "xyz", model: Any = None, ax: Any = None, path: str | Path | None = None):
        """Plot the elastic displacement ``Phi_t q`` (body frame) of a flexible body's interfaces
        (default: all but the reference) and/or nodes against time; see
        :func:`flexmb.results.output.plot_deflection`.  Returns the matplotlib axes."""
        if model is not None:
            self.attach(model)
        return plot_deflection(self, body, interfaces=interfaces, nodes=nodes, components=components, ax=ax,
                               path=path)

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
        return plot_solution(self, quantity, bodies=bodies, joints=joints, components=components, ax=ax, path=path)
