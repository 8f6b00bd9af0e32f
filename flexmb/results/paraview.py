"""ParaView output of a :class:`~flexmb.results.solution.Solution`: a ``.pvd`` time series of ``.vtu`` files
(see :meth:`Solution.to_paraview`).

Files (in ``directory``)
------------------------
``{stem}.pvd``
    The collection ParaView opens: one ``<DataSet timestep=t part=k name=... file=...>`` per
    written time and part (part ``k``: the k-th flexible body, then the rigid bodies).
``{body}_{i:05d}.vtu``
    Per flexible body and output time ``i``: its FE mesh (the data's solid cells) deformed through
    the mode shapes, nodes at ``x + R (X0 + scale * Phi_t q)`` (inertial frame; ``frame="body"``:
    ``X0 + scale * Phi_t q``, floating frame), with point data

    * ``displacement`` (3) [m]: the elastic displacement ``R Phi_t q`` in inertial components
      (``Phi_t q`` with ``frame="body"``), not scaled;
    * ``displacement_body`` (3) [m]: ``Phi_t q`` in the body (floating) frame;
    * ``von_mises`` [Pa], when the data has modal stresses: the von Mises stress of
      ``sigma = sum_k q_k sigma_k``, the *linear* modal stress (``sigma_k``: nodal stresses per unit
      modal coordinate of :attr:`FlexibleBodyData.modal_stresses`, element values averaged at the
      nodes; at the nodes of shells and beams the largest of it, the shells' bottom and top surfaces
      and the beams' extreme fibres: :meth:`FlexibleBodyData.von_mises`).  Small-strain stress of the elastic displacement only: no stress from the cubic and
      quartic (geometric stiffening) terms or from the inertial preloads.
``rigid_{i:05d}.vtu``
    The rigid bodies at output time ``i`` as frames: per body a triad of three lines of length
    ``triad`` [m] from its reference point along its body axes x, y, z (inertial frame); cell data
    ``axis`` (0, 1, 2) and ``body`` (index into the rigid bodies, in the order of
    ``Solution.body_names``), point data ``velocity`` [m/s] and ``angular_velocity`` [rad/s] of the body.

Options
-------
``model``
    The simulated Model (attached to the solution, :meth:`Solution.attach`).
``bodies``
    Names of the bodies to write (default all).
``every``
    Write every k-th output time (``t[0], t[k], ...``) and always the last one.
``scale``
    Magnification of the elastic displacement in the drawn node positions (point data unscaled).
``frame``
    ``"inertial"`` (default) or ``"body"``: each flexible mesh in its floating frame (rigid bodies
    are then not written).
``triad``
    Length of the rigid bodies' axis lines [m] (default: a tenth of the model's size).
``stem``
    Name of the ``.pvd`` file.

The ``.vtu`` files are written with meshio (binary, zlib); meshio has no ``.pvd`` writer, the small
XML collection is written here.  Flexible bodies need their :class:`FlexibleBodyData`: the solution
must know the simulated model (``Solution.attach(model)`` or ``model=``); a rigid-only solution
needs nothing (also after :meth:`Solution.load`).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from flexmb.errors import ModelError

__all__ = ["write_paraview"]

logger = logging.getLogger(__name__)


def _frames(nt: int, every: int) -> list[int]:
    idx = list(range(0, nt, every))
    if nt and idx[-1] != nt - 1:
        idx.append(nt - 1)  # the series always ends at the last output time
    return idx


def write_paraview(sol: Any, directory: str | Path, *, model: Any = None, bodies: Sequence[str] | None = None,
                   every: int = 1, scale: float = 1.0, frame: str = "inertial", triad: float | None = None,
                   stem: str = "solution") -> Path:
    """See :meth:`flexmb.results.solution.Solution.to_paraview`."""
    import meshio

    from flexmb.model.checks import number

    if model is not None:
        sol.attach(model)
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ModelError(f"to_paraview: every={every!r} must be an integer >= 1 (write every k-th output time)")
    scale = number("scale", scale, "to_paraview", unit="")
    if frame not in ("inertial", "body"):
        raise ModelError(f"to_paraview: frame={frame!r}; use 'inertial' (deformed meshes where they are) or 'body' "
                         f"(each flexible body's mesh in its floating frame, rigid bodies not written)")
    if not isinstance(stem, str) or not stem or "/" in stem:
        raise ModelError(f"to_paraview: stem={stem!r} must be a plain file name stem")
    if bodies is None:
        names = list(sol.body_names)
    else:
        names = [bodies] if isinstance(bodies, str) else list(bodies)
        unknown = [n for n in names if n not in sol.body_names]
        if unknown:
            raise ModelError(f"to_paraview: bodies {unknown} unknown; bodies: {list(sol.body_names)}")
    flex = [n for n in names if f"modal/{n}" in sol.extra]
    rigid = [n for n in names if n not in flex] if frame == "inertial" else []
    views = {n: sol.body(n) for n in flex}
    from flexmb.results.flexible_outputs import flexible_element

    elements = {n: flexible_element(views[n], "to_paraview") for n in flex}
    if triad is None:
        triad = _default_triad(sol, [elements[n].data for n in flex])
    else:
        triad = number("triad", triad, "to_paraview", positive=True, unit="m")

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    frames = _frames(sol.nt, every)
    entries: list[tuple[float, int, str, str]] = []
    for part, n in enumerate(flex):  # output only: one mesh per body and written time
        data, view = elements[n].data, views[n]
        X0 = np.asarray(data.points, dtype=float)
        Phi = np.asarray(data.mode_shapes, dtype=float)
        stressed = data.modal_stresses is not None or getattr(data, "modal_point_stresses", None) is not None
        cells = [(ct, np.asarray(c)) for ct, c in data.cells.items()]
        for i in frames:
            q = view.modal[i]
            u = Phi @ q
            if frame == "inertial":
                R = view.rotation[i]
                pts = view.position[i] + (X0 + scale * u) @ R.T
                pdata = {"displacement": u @ R.T, "displacement_body": u}
            else:
                pts = X0 + scale * u
                pdata = {"displacement": u, "displacement_body": u}
            if stressed:  # solids, shells' surfaces and beams' fibres: the largest at each node
                pdata["von_mises"] = data.von_mises(q)
            fname = f"{n}_{i:05d}.vtu"
            meshio.write(directory / fname, meshio.Mesh(pts, cells, point_data=pdata), file_format="vtu",
                         binary=True)
            entries.append((float(sol.t[i]), part, n, fname))
    if rigid:
        idx = np.array([sol.body_names.index(n) for n in rigid])
        nr = idx.size
        lines = (4 * np.arange(nr)[:, None, None] + np.array([[0, 1], [0, 2], [0, 3]])).reshape(-1, 2)
        cdata = {"axis": [np.tile(np.arange(3), nr)], "body": [np.repeat(np.arange(nr), 3)]}
        for i in frames:
            x, R = sol.body_position[i, idx], sol.body_rotation[i, idx]
            pts = np.concatenate([x[:, None], x[:, None] + triad * np.swapaxes(R, 1, 2)], axis=1).reshape(-1, 3)
            pdata = {"velocity": np.repeat(sol.body_velocity[i, idx], 4, axis=0),
                     "angular_velocity": np.repeat(sol.body_angular_velocity[i, idx], 4, axis=0)}
            fname = f"rigid_{i:05d}.vtu"
            meshio.write(directory / fname, meshio.Mesh(pts, [("line", lines)], point_data=pdata, cell_data=cdata),
                         file_format="vtu", binary=True)
            entries.append((float(sol.t[i]), len(flex), "rigid bodies", fname))
    entries.sort(key=lambda e: (e[0], e[1]))
    xml = ['<?xml version="1.0"?>', '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
           "  <Collection>"]
    xml += [f'    <DataSet timestep="{t!r}" group="" part="{p}" name={quoteattr(name)} file={quoteattr(f)}/>'
            for t, p, name, f in entries]
    xml += ["  </Collection>", "</VTKFile>", ""]
    pvd = directory / f"{stem}.pvd"
    pvd.write_text("\n".join(xml))
    logger.info("to_paraview: %d files for %d times (%d flexible, %d rigid bodies) in %s", len(entries), len(frames),
                len(flex), len(rigid), pvd)
    return pvd


def _default_triad(sol: Any, datas: list) -> float:
    """A tenth of the model's size: the larger of the span of the body positions over the run and
    the flexible meshes' bounding-box diagonals [m] (1 when both are zero)."""
    size = 0.0
    if sol.nt and sol.nb:
        P = sol.body_position.reshape(-1, 3)
        size = float(np.linalg.norm(P.max(axis=0) - P.min(axis=0)))
    for d in datas:
        X = np.asarray(d.points, dtype=float)
        size = max(size, float(np.linalg.norm(X.max(axis=0) - X.min(axis=0))))
    return 0.1 * size if size > 0 else 1.0
