"""FE-matrix import: Abaqus MATRIX INPUT files and Matrix Market + DOF map, against own assembly."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from flexmb.errors import MeshImportError
from flexmb.fe.elements.assembly import assemble_mass, assemble_stiffness
from flexmb.fe.mesh.matrices import read_abaqus_matrices, read_matrix_market
from flexmb.fe.mesh import read_mesh

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def model():
    """Two-material two-hexahedron model with non-contiguous node ids 1..12 and an unused node 99."""
    mesh = read_mesh(DATA / "two_materials.inp", drop_unused_nodes=True)
    return mesh, assemble_stiffness(mesh), assemble_mass(mesh)


def _write_mtx(path, mat, node_ids, triangle="lower", rotational=None, rng=None):
    """Abaqus FORMAT=MATRIX INPUT: 'node, dof, node, dof, value' with one triangle (or full)."""
    a = sp.coo_array(mat)
    keep = {"lower": a.row >= a.col, "upper": a.row <= a.col, "full": np.ones(a.nnz, bool)}[triangle]
    r, c, v = a.row[keep], a.col[keep], a.data[keep]
    lines = [f"{node_ids[i // 3]}, {i % 3 + 1}, {node_ids[j // 3]}, {j % 3 + 1}, {x:.17e}" for i, j, x in zip(r, c, v)]
    if rotational is not None:  # entries on DOF 5 of the first node
        lines.append(f"{node_ids[0]}, 5, {node_ids[0]}, 5, {rotational:.17e}")
    if rng is not None:
        rng.shuffle(lines)
    Path(path).write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("triangle", ["lower", "upper", "full"])
def test_abaqus_mtx_round_trip(model, tmp_path, triangle):
    mesh, k, m = model
    rng = np.random.default_rng(0)
    _write_mtx(tmp_path / "job_STIF1.mtx", k, mesh.node_ids, triangle, rng=rng)
    _write_mtx(tmp_path / "job_MASS1.mtx", m, mesh.node_ids, triangle, rng=rng)
    got_mesh, k2, m2 = read_abaqus_matrices(tmp_path / "job_STIF1.mtx", tmp_path / "job_MASS1.mtx", mesh)
    assert got_mesh is mesh
    assert abs(k2 - k).max() <= 1e-15 * abs(k).max()
    assert abs(m2 - m).max() <= 1e-15 * abs(m).max()
    # without coordinates: the order is that of the sorted node labels (here the same)
    ids, k3, _ = read_abaqus_matrices(tmp_path / "job_STIF1.mtx", tmp_path / "job_MASS1.mtx")
    assert np.array_equal(ids, mesh.node_ids) and abs(k3 - k).max() <= 1e-15 * abs(k).max()


def test_abaqus_mtx_with_inp_path_reorders_to_mesh(model, tmp_path):
    mesh, k, m = model
    _write_mtx(tmp_path / "K.mtx", k, mesh.node_ids)
    _write_mtx(tmp_path / "M.mtx", m, mesh.node_ids)
    full, k2, m2 = read_abaqus_matrices(tmp_path / "K.mtx", tmp_path / "M.mtx", DATA / "two_materials.inp")
    assert full.n_nodes == 13  # node 99 kept by read_mesh: zero rows
    assert k2.shape == (39, 39) and abs(k2[36:, :]).sum() == 0
    assert abs(k2[:36, :36] - k).max() <= 1e-15 * abs(k).max()


def test_rotational_dofs_dropped_when_zero_refused_when_stiff(model, tmp_path, caplog):
    mesh, k, m = model
    _write_mtx(tmp_path / "K.mtx", k, mesh.node_ids, rotational=0.0)
    _write_mtx(tmp_path / "M.mtx", m, mesh.node_ids)
    with caplog.at_level(logging.INFO, logger="flexmb.fe.mesh.matrices"):
        _, k2, _ = read_abaqus_matrices(tmp_path / "K.mtx", tmp_path / "M.mtx", mesh)
    assert "rotational DOFs 4-6 dropped" in caplog.text
    assert abs(k2 - k).max() <= 1e-15 * abs(k).max()
    _write_mtx(tmp_path / "K.mtx", k, mesh.node_ids, rotational=1.0e6)
    with pytest.raises(MeshImportError, match=r"rotational DOF entries are non-zero \(e.g. node 1 dof 5"):
        read_abaqus_matrices(tmp_path / "K.mtx", tmp_path / "M.mtx", mesh)


def test_abaqus_mtx_errors(model, tmp_path):
    mesh, k, m = model
    (tmp_path / "coord.mtx").write_text("1 1 2.0\n")
    with pytest.raises(MeshImportError, match="FORMAT=COORDINATE"):
        read_abaqus_matrices(tmp_path / "coord.mtx", tmp_path / "coord.mtx", mesh)
    _write_mtx(tmp_path / "K.mtx", k, mesh.node_ids)
    text = (tmp_path / "K.mtx").read_text()
    (tmp_path / "trunc.mtx").write_text(text[: len(text) // 2].rsplit(",", 1)[0] + "\n")
    with pytest.raises(MeshImportError, match=r"trunc.mtx, line \d+: expected 'node, dof, node, dof, value'"):
        read_abaqus_matrices(tmp_path / "trunc.mtx", tmp_path / "K.mtx", mesh)
    (tmp_path / "alien.mtx").write_text("1, 1, 1, 1, 1.0\n777, 1, 777, 1, 1.0\n")
    with pytest.raises(MeshImportError, match=r"node label\(s\) \[777\] are not in the mesh"):
        read_abaqus_matrices(tmp_path / "alien.mtx", tmp_path / "K.mtx", mesh)
    (tmp_path / "unsym.mtx").write_text("1, 1, 2, 1, 1.0\n2, 1, 1, 1, 2.0\n1, 1, 1, 1, 5.0\n")
    with pytest.raises(MeshImportError, match="not symmetric"):
        read_abaqus_matrices(tmp_path / "unsym.mtx", tmp_path / "K.mtx", mesh)


@pytest.mark.parametrize("layout", ["header", "two_columns", "three_columns"])
def test_matrix_market_with_dof_map(model, tmp_path, layout):
    """Rows in a scrambled (tool-specific) order, mapped back through the CSV DOF map."""
    mesh, k, m = model
    rng = np.random.default_rng(1)
    perm = rng.permutation(k.shape[0])  # tool row r holds flexmb DOF perm[r]
    scipy.io.mmwrite(tmp_path / "K_mm.mtx", sp.coo_array(k[perm][:, perm]), symmetry="symmetric")
    scipy.io.mmwrite(tmp_path / "M_mm.mtx", sp.coo_array(m[perm][:, perm]), symmetry="general")
    node = mesh.node_ids[perm // 3]
    dof = perm % 3 + 1
    rows = np.arange(1, perm.size + 1)
    if layout == "header":
        body = "dof,row,node\n" + "\n".join(f"{d},{r},{n}" for r, n, d in zip(rows, node, dof))
    elif layout == "two_columns":
        body = "\n".join(f"{n},{d}" for n, d in zip(node, dof))
    else:
        order = rng.permutation(perm.size)  # rows listed out of order
        body = "\n".join(f"{rows[i]},{node[i]},{dof[i]}" for i in order)
    (tmp_path / "dofs.csv").write_text(body + "\n")
    _, k2, m2 = read_matrix_market(tmp_path / "K_mm.mtx", tmp_path / "M_mm.mtx", tmp_path / "dofs.csv", mesh)
    assert abs(k2 - k).max() <= 1e-14 * abs(k).max()
    assert abs(m2 - m).max() <= 1e-14 * abs(m).max()


def test_matrix_market_errors(model, tmp_path):
    mesh, k, m = model
    scipy.io.mmwrite(tmp_path / "K_mm.mtx", sp.coo_array(k), symmetry="symmetric")
    (tmp_path / "short.csv").write_text("1,1\n1,2\n")
    with pytest.raises(MeshImportError, match="does not match the DOF map's 2 rows"):
        read_matrix_market(tmp_path / "K_mm.mtx", tmp_path / "K_mm.mtx", tmp_path / "short.csv", mesh)
    (tmp_path / "bad_mm.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1\n")
    (tmp_path / "three.csv").write_text("1,1\n1,2\n1,3\n")
    with pytest.raises(MeshImportError, match="bad_mm.mtx: not a readable Matrix Market file"):
        read_matrix_market(tmp_path / "bad_mm.mtx", tmp_path / "bad_mm.mtx", tmp_path / "three.csv")
