"""The impacts of a run as records (``Solution.events``) and their plot.

A run with contacts or impulses stores ``extra["events/table"]`` (one row per contact and impact:
:data:`flexmb.dynamics.impact.march.EVENT_COLUMNS`) and ``extra["events/joint_impulse"]`` (per impact,
``(nj, 6)``: force [N s]; moment [N m s] about B's origin; frame A components), the contact names in
``meta["contact_names"]``; they are saved and loaded with the solution.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: the table's columns (the same as flexmb.dynamics.impact.march.EVENT_COLUMNS; results do not import the engine)
COLUMNS = ("t", "contact", "P", "P_t", "v_minus", "v_plus", "loss", "T_minus", "T_plus", "impact")


def event_list(sol) -> list[dict]:
    """One dict per contact and impact, in time order: ``t`` [s], ``contact`` (name; None for a prescribed
    impulse alone), ``normal_impulse``, ``tangential_impulse`` [N s] (0: frictionless), ``v_minus``,
    ``v_plus`` (normal velocity before and after [m/s]), ``energy_lost`` [J], ``kinetic_energy_before``,
    ``kinetic_energy_after`` [J] (the whole impact's), ``impact`` (its number, from 1),
    ``joint_impulse`` ``{joint: (force (3,), moment (3,))}`` and ``node`` (the FE node of a contact at
    nodes, one row per node; None otherwise)."""
    table = sol.extra.get("events/table")
    if table is None:
        return []
    names = sol.meta.get("contact_names", [])
    nodes = sol.meta.get("contact_nodes", [-1] * len(names))  # the FE node of a contact point (-1: none)
    joints = sol.extra.get("events/joint_impulse", np.zeros((0, 0, 6)))
    out = []
    for row in np.asarray(table):
        r = dict(zip(COLUMNS, row.tolist()))
        k, i = int(r["contact"]), int(r["impact"]) - 1
        jimp = {n: (joints[i, j, :3].copy(), joints[i, j, 3:].copy()) for j, n in enumerate(sol.joint_names)} \
            if i < len(joints) else {}
        out.append(dict(t=r["t"], contact=names[k] if k >= 0 else None,
                        node=int(nodes[k]) if k >= 0 and nodes[k] >= 0 else None, normal_impulse=r["P"],
                        tangential_impulse=r["P_t"], v_minus=r["v_minus"], v_plus=r["v_plus"], energy_lost=r["loss"],
                        kinetic_energy_before=r["T_minus"], kinetic_energy_after=r["T_plus"], impact=i + 1,
                        joint_impulse=jimp))
    return out


def plot_events(sol, path: str | Path | None = None, ax: Any = None) -> Any:
    """The kinetic energy over time with the impacts marked (the jump ``T- -> T+`` at each) and the energy
    each lost; returns the axes (matplotlib, imported here)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.plot(sol.t, sol.kinetic_energy, lw=1, label="kinetic energy (nodes, before the jumps)")
    ev = event_list(sol)
    if ev:
        t = np.array([e["t"] for e in ev])
        ax.vlines(t, [e["kinetic_energy_after"] for e in ev], [e["kinetic_energy_before"] for e in ev], colors="C3",
                  label="impact: T- -> T+")
    unit = "J"
    ax.set_xlabel("t [s]")
    ax.set_ylabel(f"energy [{unit}]")
    ax.legend()
    if path is not None:
        ax.figure.savefig(path, dpi=120)
    return ax
