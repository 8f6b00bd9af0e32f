"""Import of stiffness and mass matrices exported by FE tools, in flexmb's DOF order.

Formats:

- Abaqus ``*MATRIX GENERATE`` / ``*MATRIX OUTPUT, FORMAT=MATRIX INPUT`` files (``job_STIF1.mtx``,
  ``job_MASS1.mtx``): one entry per line, ``row node, row dof, column node, column dof, value``,
  node labels as in the input file, DOFs 1-6. Abaqus writes one triangle of a symmetric matrix;
  lower, upper and full storage are all accepted.
- Matrix Market files (``scipy.io.mmread``) with a DOF map in CSV: matrix row (1-based) -> node
  id, dof (1-6).

Node coordinates come from a mesh (an Abaqus ``.inp`` or any file :func:`flexmb.fe.mesh.read_mesh`
reads, or an FEMesh). Output DOF order is flexmb's node-major ``[ux0, uy0, uz0, ux1, ...]`` over the
mesh's nodes. Rotational DOFs (4-6) are dropped with a logged note when they carry no entries (or
only zeros); if they carry stiffness or mass the import is refused, because flexmb's solid bodies
have translational DOFs only.
"""
from __future__ import annotations

import csv
import logging
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import MeshImportError
from flexmb.fe.mesh.femesh import FEMesh
from flexmb.fe.mesh.readers import read_mesh

__all__ = ["read_abaqus_matrices", "read_dof_map", "read_matrix_market", "read_mtx_entries"]

logger = logging.getLogger(__name__)

_Entries = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]


def read_mtx_entries(path: str | Path) -> _Entries:
    """Entries of an Abaqus ``FORMAT=MATRIX INPUT`` matrix file.

    Returns
    -------
    row_node, row_dof, col_node, col_dof : ndarray of int, shape (nnz,)
    value : ndarray of float, shape (nnz,)

    Raises
    ------
    MeshImportError
        Naming the file and line of the first malformed entry; a 3-column (``FORMAT=COORDINATE``)
        file is refused with the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise MeshImportError(f"matrix file {str(path)!r} does not exist.")
    rows: list[list[float]] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, start=1):
            s = line.strip()
            if not s or s.startswith(("*", "#", "%")):
                continue
            parts = [p for p in s.replace(",", " ").split() if p]
            if len(parts) == 3:
                raise MeshImportError(
                    f"{path.name}, line {no}: 3 columns (FORMAT=COORDINATE, global equation numbers); flexmb needs "
                    "node labels: export with *MATRIX OUTPUT, FORMAT=MATRIX INPUT, or use read_matrix_market with a "
                    "DOF map."
                )
            if len(parts) != 5:
                raise MeshImportError(
                    f"{path.name}, line {no}: expected 'node, dof, node, dof, value', got {s[:60]!r} "
                    "(truncated or not a *MATRIX OUTPUT file)."
                )
            try:
                rows.append([float(p) for p in parts])
            except ValueError as exc:
                raise MeshImportError(f"{path.name}, line {no}: cannot read numbers from {s[:60]!r}.") from exc
    if not rows:
        raise MeshImportError(f"{path.name}: no matrix entries found.")
    a = np.array(rows)
    ints = a[:, :4]
    if np.any(ints != np.round(ints)):
        raise MeshImportError(f"{path.name}: node labels and DOFs must be integers.")
    ints = ints.astype(np.int64)
    return ints[:, 0], ints[:, 1], ints[:, 2], ints[:, 3], a[:, 4]


def read_dof_map(path: str | Path) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Row -> (node id, dof) map of a Matrix Market export, from CSV.

    Accepted layouts: a header naming the columns ``node`` and ``dof`` (and optionally ``row``,
    1-based); or no header with two columns ``node, dof`` (one line per matrix row, in order) or
    three columns ``row, node, dof``.

    Returns
    -------
    node : ndarray of int, shape (n_rows,)
    dof : ndarray of int, shape (n_rows,)
        Indexed by the 0-based matrix row.
    """
    path = Path(path)
    if not path.is_file():
        raise MeshImportError(f"DOF map {str(path)!r} does not exist.")
    with open(path, newline="") as f:
        table = [[c.strip() for c in r] for r in csv.reader(f) if r and any(c.strip() for c in r)]
    if not table:
        raise MeshImportError(f"{path.name}: empty DOF map.")
    header = [c.lower() for c in table[0]]
    if "node" in header and "dof" in header:
        body = table[1:]
        cols = {name: header.index(name) for name in ("row", "node", "dof") if name in header}
    else:
        body = table
        cols = {"node": 0, "dof": 1} if len(table[0]) == 2 else {"row": 0, "node": 1, "dof": 2}
    try:
        data = {k: np.array([int(float(r[i])) for r in body], dtype=np.int64) for k, i in cols.items()}
    except (ValueError, IndexError) as exc:
        raise MeshImportError(f"{path.name}: DOF map rows must be integers in columns {sorted(cols)} ({exc}).") from exc
    n = len(body)
    row = data["row"] - 1 if "row" in data else np.arange(n)
    if sorted(row.tolist()) != list(range(n)):
        raise MeshImportError(f"{path.name}: the DOF map must list every matrix row 1..{n} exactly once.")
    node = np.empty(n, dtype=np.int64)
    dof = np.empty(n, dtype=np.int64)
    node[row] = data["node"]
    dof[row] = data["dof"]
    return node, dof


def _nodes_mesh(nodes: FEMesh | str | Path | None) -> FEMesh | None:
    if nodes is None or isinstance(nodes, FEMesh):
        return nodes
    return read_mesh(nodes)


def _to_flexmb(
    what: str,
    entries: _Entries,
    node_ids: NDArray[np.int64],
) -> sp.csr_array:
    """Entries with node labels -> symmetric (3 n, 3 n) matrix in node-major order over node_ids."""
    rn, rd, cn, cd, v = entries
    for name, d in (("row", rd), ("column", cd)):
        bad = (d < 1) | (d > 6)
        if np.any(bad):
            raise MeshImportError(f"{what}: {name} DOF {int(d[bad][0])} is not in 1..6.")
    rot = (rd > 3) | (cd > 3)
    if np.any(rot):
        if np.any(v[rot] != 0.0):
            k = int(np.flatnonzero(rot & (v != 0.0))[0])
            raise MeshImportError(
                f"{what}: rotational DOF entries are non-zero (e.g. node {int(rn[k])} dof {int(rd[k])}, node "
                f"{int(cn[k])} dof {int(cd[k])}: {v[k]:.6g}); flexmb's solid bodies have translational DOFs "
                "only. Export a solid-element model (no beams, shells or rotational springs)."
            )
        logger.info("%s: %d zero entries on rotational DOFs 4-6 dropped", what, int(rot.sum()))
        rn, rd, cn, cd, v = rn[~rot], rd[~rot], cn[~rot], cd[~rot], v[~rot]
    order = np.argsort(node_ids)
    sorted_ids = node_ids[order]
    if np.any(rn <= 0) or np.any(cn <= 0):
        raise MeshImportError(
            f"{what}: node labels <= 0 (Abaqus internal nodes, e.g. of hybrid elements or Lagrange "
            "multipliers) are not supported; export a model without them."
        )

    def index(ids: NDArray[np.int64]) -> NDArray[np.int64]:
        pos = np.clip(np.searchsorted(sorted_ids, ids), 0, len(sorted_ids) - 1)
        bad = sorted_ids[pos] != ids
        if np.any(bad):
            raise MeshImportError(
                f"{what}: node label(s) {np.unique(ids[bad])[:10].tolist()} are not in the mesh; pass the "
                "mesh (.inp) of the same model."
            )
        return order[pos]

    i = 3 * index(rn) + rd - 1
    j = 3 * index(cn) + cd - 1
    n = 3 * len(node_ids)
    a = sp.coo_array((v, (i, j)), shape=(n, n)).tocsr()
    a.sum_duplicates()
    lower = sp.tril(a, k=-1)
    upper = sp.triu(a, k=1)
    if lower.nnz == 0 or upper.nnz == 0:  # one triangle stored (Abaqus' convention): mirror it
        a = a + (lower + upper).T
    else:
        scale = abs(a).max()
        asym = abs(a - a.T).max()
        if asym > 1e-9 * scale:
            raise MeshImportError(
                f"{what}: both triangles are stored but the matrix is not symmetric "
                f"(max |A - A^T| = {asym:.3g}, max |A| = {scale:.3g}); only symmetric K and M are supported."
            )
    return sp.csr_array(a)


def _check_coverage(what: str, mat: sp.csr_array, mesh: FEMesh) -> None:
    empty = np.flatnonzero(np.diff(mat.indptr) == 0)
    if empty.size:
        nodes = np.unique(empty // 3)
        logger.warning(
            "%s: %d mesh node(s) have no matrix entries (e.g. ids %s); they get zero rows", what, nodes.size,
            mesh.node_ids[nodes[:10]].tolist(),
        )


def read_abaqus_matrices(
    stiffness: str | Path,
    mass: str | Path,
    nodes: FEMesh | str | Path | None = None,
) -> tuple[FEMesh | NDArray[np.int64], sp.csr_array, sp.csr_array]:
    """Read Abaqus ``*MATRIX GENERATE`` stiffness and mass (``FORMAT=MATRIX INPUT``).

    Parameters
    ----------
    stiffness, mass : path
        ``job_STIF1.mtx`` and ``job_MASS1.mtx``.
    nodes : FEMesh or path, optional
        The model's mesh (normally its ``.inp``) for node coordinates and order.

    Returns
    -------
    mesh_or_ids : FEMesh, or ndarray of int shape (n_nodes,)
        The mesh (matrices follow its node order) or, without ``nodes``, the sorted node labels that
        define the order.
    K, M : scipy.sparse.csr_array, shape (3 n_nodes, 3 n_nodes)
        Symmetric, node-major translational DOFs, units of the FE model.
    """
    mesh = _nodes_mesh(nodes)
    k_entries = read_mtx_entries(stiffness)
    m_entries = read_mtx_entries(mass)
    if mesh is None:
        ids = np.unique(np.concatenate([k_entries[0], k_entries[2], m_entries[0], m_entries[2]]))
    else:
        ids = mesh.node_ids
    k = _to_flexmb(Path(stiffness).name, k_entries, ids)
    m = _to_flexmb(Path(mass).name, m_entries, ids)
    if mesh is not None:
        _check_coverage(Path(stiffness).name, k, mesh)
        return mesh, k, m
    return ids, k, m


def read_matrix_market(
    stiffness: str | Path,
    mass: str | Path,
    dof_map: str | Path,
    nodes: FEMesh | str | Path | None = None,
) -> tuple[FEMesh | NDArray[np.int64], sp.csr_array, sp.csr_array]:
    """Read stiffness and mass from Matrix Market files with a CSV DOF map (see :func:`read_dof_map`).

    Returns the same as :func:`read_abaqus_matrices`.
    """
    node, dof = read_dof_map(dof_map)
    mesh = _nodes_mesh(nodes)
    mats = []
    for p in (stiffness, mass):
        p = Path(p)
        if not p.is_file():
            raise MeshImportError(f"matrix file {str(p)!r} does not exist.")
        try:
            a = sp.coo_array(scipy.io.mmread(str(p)))
        except Exception as exc:  # scipy raises ValueError/IndexError/... on malformed files
            raise MeshImportError(f"{p.name}: not a readable Matrix Market file ({type(exc).__name__}: {exc}).") from exc
        if a.shape != (node.size, node.size):
            raise MeshImportError(f"{p.name}: shape {a.shape} does not match the DOF map's {node.size} rows.")
        entries = (node[a.row], dof[a.row], node[a.col], dof[a.col], np.asarray(a.data, dtype=float))
        mats.append(entries)
    ids = mesh.node_ids if mesh is not None else np.unique(node)
    k = _to_flexmb(Path(stiffness).name, mats[0], ids)
    m = _to_flexmb(Path(mass).name, mats[1], ids)
    if mesh is not None:
        _check_coverage(Path(stiffness).name, k, mesh)
        return mesh, k, m
    return ids, k, m
