"""CSV tables and plots of a :class:`~flexmb.results.solution.Solution` (matplotlib imported on use).

CSV headers and axis labels carry the units of the model's unit system (``Model(units=...)``, see
:mod:`flexmb.model.units`): ``[ft]``, ``[lbf]``, ``[ft lbf]`` for a ``"ft-slug-s"`` model.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import csv

import numpy as np
from numpy.typing import NDArray

from flexmb.model.units import unit_symbols

__all__ = ["PLOT_QUANTITIES", "STATS_KEYS", "plot_deflection", "plot_solution", "write_csv"]

#: Per-time-element statistics the solver reports, in this order (see :class:`~flexmb.results.solution.Solution`).
STATS_KEYS: tuple[str, ...] = ("t_start", "h", "iterations", "rate", "factorizations", "residual", "retries")

#: Quantities accepted by :meth:`~flexmb.results.solution.Solution.plot`.
PLOT_QUANTITIES: tuple[str, ...] = (
    "position", "velocity", "angular_velocity", "rel_position", "rel_rotation",
    "joint_force", "joint_moment", "joint_force_norm", "energy", "newton",
)


def write_csv(sol: Any, directory: str | Path) -> dict[str, Path]:
    """Write the CSV tables of ``sol``; see :meth:`flexmb.results.solution.Solution.to_csv`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}

    from flexmb.model.units import unit_symbols

    u = unit_symbols(sol.meta.get("units", "SI"))

    def cols(names: str, unit: str) -> list[str]:
        return [f"{c} [{unit}]" for c in names.split()]

    def long_table(fname: str, header: list[str], t: NDArray, names: tuple[str, ...], values: NDArray) -> None:
        # values: (len(t), len(names), ncols) -> rows ordered by time, then entity
        nt_, ne_ = t.size, len(names)
        values = values.reshape(nt_ * ne_, values.shape[-1])
        path = directory / fname
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            tt = np.repeat(t, ne_).tolist()
            nn = list(names) * nt_
            vv = values.tolist()
            w.writerows([tk, nk, *vk] for tk, nk, vk in zip(tt, nn, vv))
        paths[fname.removesuffix(".csv")] = path

    long_table(
        "bodies.csv",
        [f"t [{u['T']}]", "body", *cols("x y z", u["L"]), *cols("vx vy vz", u["v"]), *cols("wx wy wz", u["w"]),
         "qw", "qx", "qy", "qz"],
        sol.t, sol.body_names,
        np.concatenate(
            [sol.body_position, sol.body_velocity, sol.body_angular_velocity, sol.quaternions], axis=-1
        ),
    )
    long_table(
        "joints.csv",
        [f"t [{u['T']}]", "joint", *cols("x y z", u["L"]), *cols("rx ry rz", "rad"), *cols("vx vy vz", u["v"]),
         *cols("wx wy wz", u["w"])],
        sol.t, sol.joint_names,
        np.concatenate([sol.joint_rel_position, sol.joint_rel_rotation, sol.joint_rel_velocity], axis=-1),
    )
    long_table(
        "reactions.csv",
        [f"t [{u['T']}]", "joint", *cols("fx fy fz", u["F"]), *cols("mx my mz", u["FL"])],
        sol.t, sol.joint_names,
        np.concatenate([sol.joint_force, sol.joint_moment], axis=-1),
    )
    long_table(
        "reactions_internal.csv",
        [f"t_internal [{u['T']}]", "joint", *cols("fx fy fz", u["F"]), *cols("mx my mz", u["FL"])],
        sol.t_internal, sol.joint_names,
        np.concatenate([sol.joint_force_internal, sol.joint_moment_internal], axis=-1),
    )
    path = directory / "energy.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"t [{u['T']}]", *cols("kinetic potential total", u["E"])])
        table = np.column_stack([sol.t, sol.kinetic_energy, sol.potential_energy, sol.total_energy])
        w.writerows(table.tolist())
    paths["energy"] = path
    path = directory / "newton.csv"
    keys = [k for k in STATS_KEYS if k in sol.stats] + [k for k in sol.stats if k not in STATS_KEYS]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["element", *(f"{k} [{u['T']}]" if k in ("t_start", "h") else k for k in keys)])
        cols = [sol.stats[k].tolist() for k in keys]
        w.writerows([e, *row] for e, row in enumerate(zip(*cols)))
    paths["newton"] = path
    return paths


def plot_solution(sol: Any, quantity: str, *, bodies: Sequence[str] | None = None, joints: Sequence[str] | None = None,
                  components: str = "xyz", ax: Any = None, path: str | Path | None = None) -> Any:
    """Plot ``quantity`` of ``sol``; see :meth:`flexmb.results.solution.Solution.plot`."""
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
        return [(sol._index(kind, all_names, n), n) for n in chosen]

    u = unit_symbols(sol.meta.get("units", "SI"))

    def lab(text: str) -> str:  # unit symbols of the model's unit system
        return text.format(**u)

    body_q = {"position": (sol.body_position, "position [{L}]"),
              "velocity": (sol.body_velocity, "velocity [{v}]"),
              "angular_velocity": (sol.body_angular_velocity, "angular velocity [{w}]")}
    joint_q = {"rel_position": (sol.t, sol.joint_rel_position, "relative position [{L}]"),
               "rel_rotation": (sol.t, sol.joint_rel_rotation, "relative rotation [rad]"),
               "joint_force": (sol.t, sol.joint_force, "joint force [{F}]"),
               "joint_moment": (sol.t, sol.joint_moment, "joint moment [{FL}]")}
    if quantity in body_q:
        data, label = body_q[quantity]
        for i, name in select("body", sol.body_names, bodies):
            for c in comp:
                ax.plot(sol.t, data[:, i, c], label=f"{name} {'xyz'[c]}")
        ax.set_ylabel(lab(f"body {label}"))
    elif quantity in joint_q:
        t, data, label = joint_q[quantity]
        for j, name in select("joint", sol.joint_names, joints):
            for c in comp:
                ax.plot(t, data[:, j, c], label=f"{name} {'xyz'[c]}")
        ax.set_ylabel(lab(label))
    elif quantity == "joint_force_norm":
        for j, name in select("joint", sol.joint_names, joints):
            ax.plot(sol.t, np.linalg.norm(sol.joint_force[:, j], axis=-1), label=name)
        ax.set_ylabel(lab("|joint force| [{F}]"))
    elif quantity == "energy":
        ax.plot(sol.t, sol.kinetic_energy, label="kinetic")
        ax.plot(sol.t, sol.potential_energy, label="potential")
        ax.plot(sol.t, sol.total_energy, label="total", color="k")
        ax.set_ylabel(lab("energy [{E}]"))
        if sol.nt:
            drift = float(np.max(np.abs(sol.total_energy - sol.total_energy[0])))
            ax.set_title(f"max |E - E(0)| = {drift:.3g} {u['E']}")
    else:  # newton
        if sol.ne == 0:
            raise ValueError("no Newton statistics in this solution (`stats` is empty); nothing to plot")
        te = sol.stats.get("t_start", np.arange(sol.ne))
        # close the last step at the end of the last element
        te_end = te[-1] + (sol.stats["h"][-1] if "h" in sol.stats and "t_start" in sol.stats else 1)
        edges = np.append(te, te_end)
        for key in ("iterations", "retries"):
            if key in sol.stats and (key == "iterations" or np.any(sol.stats[key])):
                v = sol.stats[key]
                ax.step(edges, np.append(v, v[-1]), where="post", label=key)
        ax.set_ylabel("iterations per time element")
        if "rate" in sol.stats:
            ax2 = ax.twinx()
            ax2.plot(te, sol.stats["rate"], ".", color="C3", markersize=3, label="contraction rate")
            ax2.set_ylabel("contraction rate")
            ax2.legend(loc="upper right", fontsize="small")
    ax.set_xlabel(f"t [{u['T']}]" if quantity != "newton" or "t_start" in sol.stats else "time element")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left" if quantity == "newton" else "best", fontsize="small")
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(path, dpi=120)
    return ax


def plot_deflection(sol: Any, body: str, *, interfaces: Sequence[str] | None = None, nodes: Any = None,
                    components: str = "xyz", ax: Any = None, path: str | Path | None = None) -> Any:
    """Plot deflection histories of the flexible body ``body`` of ``sol`` (the solution must know its
    model, :meth:`Solution.attach`): the elastic displacement relative to the floating frame, body
    frame components, of

    * ``interfaces`` (names; default: every interface but the reference one when ``nodes`` is None):
      the interface point's translation ``Phi_t q`` (the modal map's first three rows),
    * ``nodes`` (indices, an interface name or a list of them): ``Phi_t q`` of each node.

    ``components``: subset of ``"xyz"``.  Axes in the model's units; one line per entity and
    component, labelled ``"<entity> <component>"``.  ``ax``/``path`` as in :meth:`Solution.plot`.
    Returns the axes.
    """
    from flexmb.errors import ModelError
    from flexmb.results.flexible_outputs import flexible_element, resolve_nodes

    view = sol.body(body)
    data = flexible_element(view, f"plot_deflection({body!r})").data
    if not components or any(c not in "xyz" for c in components) or len(set(components)) != len(components):
        raise ValueError(f"`components` must be a non-empty subset of 'xyz' such as 'y'; got {components!r}")
    comp = ["xyz".index(c) for c in components]
    names = [f.name for f in data.interfaces]
    if interfaces is None:
        interfaces = [f.name for f in data.interfaces if not f.is_reference] if nodes is None else []
    elif isinstance(interfaces, str):
        interfaces = [interfaces]
    series = []
    for name in interfaces:
        if name not in names:
            raise ModelError(f"plot_deflection: body {body!r} has no interface {name!r}; interfaces: {names}")
        mm = np.asarray(data.interface(name).modal_map, dtype=float)[:3]
        series.append((name, view.modal @ mm.T))
    if nodes is not None:
        idx = resolve_nodes(data, nodes, what=f"plot_deflection({body!r})")
        u = np.einsum("kdm,tm->tkd", np.asarray(data.mode_shapes, dtype=float)[idx], view.modal)
        series += [(f"node {int(k)}", u[:, j]) for j, k in enumerate(idx)]
    if not series:
        raise ModelError(f"plot_deflection: nothing to plot for body {body!r}: give interfaces= (of {names}) or nodes=")
    if ax is None:
        if path is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        else:
            from matplotlib.figure import Figure

            ax = Figure(figsize=(7, 4), layout="constrained").subplots()
    u = unit_symbols(sol.meta.get("units", "SI"))
    for label, d in series:
        for c in comp:
            ax.plot(sol.t, d[:, c], label=f"{label} {'xyz'[c]}")
    ax.set_xlabel(f"t [{u['T']}]")
    ax.set_ylabel(f"{body}: elastic displacement, body frame [{u['L']}]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(path, dpi=120)
    return ax
