"""Corrupted-mesh corpus (issue 8, sections 1 and 7): every class of bad mesh input gives a flexmb
error naming the input, the value and the fix -- never a raw traceback from numpy/meshio, never a
silently shorter mesh, never silent NaN.

Counts per input class (each item is one file read or one call, all asserted):

==========================================  =======  ==========================================
class                                        inputs   expected outcome
==========================================  =======  ==========================================
cut shipped mesh, 10 files x 25 positions      250    MeshImportError naming file + line/byte
  (.msh v2.2 and v4.1 (7 files), .inp, .bdf,          and what was expected, or exactly the
  .vtu; evenly spaced, mid-number, line ends)         full mesh (only when the cut drops nothing
                                                      but beam_f4.inp's last empty data line ",")
.inp cut at line ends in *NODE/*ELEMENT         10    MeshImportError (file ends in mesh data)
damaged content (letter in a number,             12    MeshImportError naming file (+ line)
  deleted line, random bytes, empty file,
  wrong format) in .msh/.inp/.bdf/.vtu
non-finite coordinates (.msh, .inp, FEMesh)      3    MeshImportError naming node ids + fix
inverted / zero-volume / all-coincident cell     3    MeshImportError naming element ids + fix
surface-only mesh on the modes path               2    MeshImportError "no solid cells" + fix
flexible-body .npz: cut, random, missing entry    3    MeshImportError naming the file
==========================================  =======  ==========================================

Limitation (documented in :mod:`flexmb.fe.mesh.integrity`): Abaqus input has no end marker and no
counts, so a cut exactly at the end of a line *after* the element data (between two complete set
definitions, or before *MATERIAL) leaves a shorter valid file; those positions are not in the
corpus. Every other position of every format is refused.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from flexmb.errors import FlexmbError, MeshImportError
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh import FEMesh, Material, check_mesh, read_mesh, structured_box

MESHES = Path(__file__).resolve().parents[1] / "flexmb" / "data" / "meshes"
SHIPPED = sorted(p.name for p in MESHES.iterdir() if p.suffix in (".msh", ".inp", ".bdf", ".vtu"))
STEEL = Material(210e9, 0.3, 7850.0, "steel")
N_CUTS = 25


def _cut_positions(data: bytes, n: int = N_CUTS) -> list[int]:
    """n cut positions: 10 evenly spaced, 10 inside numbers (between two digits), 5 just after a
    newline in the first half of the file (inside node/element data); none at the very end."""
    size = len(data)
    even = np.linspace(1, size - 2, 10).astype(int).tolist()
    digits = np.frombuffer(data, dtype=np.uint8)
    isdig = (digits >= ord("0")) & (digits <= ord("9"))
    mid = np.flatnonzero(isdig[1:] & isdig[:-1]) + 1  # cut between two digits: 0.05 -> 0.0
    mid_pick = mid[np.linspace(0, mid.size - 1, 10).astype(int)].tolist()
    nl = np.flatnonzero(digits[: size // 2] == ord("\n")) + 1
    nl_pick = nl[np.linspace(len(nl) // 10, len(nl) - 1, n - 20).astype(int)].tolist()
    out = sorted(set(even + mid_pick + nl_pick))
    for extra in range(1, size):  # top up to exactly n distinct positions
        if len(out) >= n:
            break
        if extra not in out:
            out.append(extra)
    return sorted(out)[:n]


def _same_mesh(a: FEMesh, b: FEMesh) -> bool:
    return (
        np.array_equal(a.points, b.points)
        and a.cells.keys() == b.cells.keys()
        and all(np.array_equal(a.cells[t], b.cells[t]) for t in a.cells)
        and a.node_sets.keys() == b.node_sets.keys()
        and all(np.array_equal(a.node_sets[k], b.node_sets[k]) for k in a.node_sets)
        and a.materials == b.materials
    )


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_mesh_cut_anywhere_is_read_in_full_or_refused(name, tmp_path, capsys):
    data = (MESHES / name).read_bytes()
    full = read_mesh(MESHES / name)
    path = tmp_path / name
    positions = _cut_positions(data)
    assert len(positions) == N_CUTS
    refused = 0
    for pos in positions:
        path.write_bytes(data[:pos])
        try:
            mesh = read_mesh(path)
        except MeshImportError as exc:
            msg = str(exc)
            assert msg.startswith(name), (pos, msg)  # names the file
            assert re.search(r"line \d+|byte \d+|\$\w+ at line", msg), (pos, msg)  # and where
            assert re.search(r"expected|truncated|not closed|declares", msg), (pos, msg)  # and what
            refused += 1
        else:
            assert _same_mesh(mesh, full), f"{name} cut at byte {pos} of {len(data)} read as a different mesh"
            # only where nothing but an empty data line is lost (beam_f4.inp: the ',' of *SOLID SECTION)
            assert data[pos:].strip(b" ,\r\n") == b"", (pos, data[pos:pos + 40])
    assert refused >= N_CUTS - 1
    assert capsys.readouterr().err == ""  # meshio's warnings go to the log, not the terminal


def test_abaqus_cut_at_line_ends_in_mesh_data_is_refused(tmp_path):
    name = "beam_f4.inp"
    text = (MESHES / name).read_bytes()
    lines = text.splitlines(keepends=True)
    first_nset = next(i for i, s in enumerate(lines) if s.upper().startswith(b"*NSET"))
    picks = np.linspace(4, first_nset - 1, 10).astype(int)  # after *NODE's first line .. last element line
    path = tmp_path / name
    for i in picks:
        path.write_bytes(b"".join(lines[:i]))
        with pytest.raises(MeshImportError, match=rf"{name}, line \d+: .*(truncated|cut|no elements)"):
            read_mesh(path)


def _damage(tmp_path: Path, name: str, fn) -> Path:
    out = tmp_path / f"damaged_{name}"
    out.write_bytes(fn((MESHES / name).read_bytes()))
    return out


DAMAGED = [
    # (shipped file, damage, expected message regex)
    ("beam_f4_v41.msh", lambda d: d.replace(b"0.025", b"0.0x5", 1), r"damaged_beam_f4_v41.msh: cannot read"),
    ("beam_f4_v22.msh", lambda d: d.replace(b"\n5 0.5", b"\n5 O.5", 1), r"damaged_beam_f4_v22.msh: cannot read"),
    ("beam_f4_v41.msh", lambda d: re.sub(rb"\n[^\n]*\n\$EndNodes", b"\n$EndNodes", d), r"\$Nodes at line \d+: the header declares 321"),
    ("beam_f4_v22.msh", lambda d: re.sub(rb"\n[^\n]*\n\$EndElements", b"\n$EndElements", d), r"\$Elements at line \d+: the header declares"),
    ("beam_f4.inp", lambda d: d.replace(b"9, 109, 9, 2,", b"9, 109, 9,", 1), r"line 326: .*record runs to 36 numbers by line 328, expected 21"),
    ("beam_f4.inp", lambda d: d.replace(b"5.0000000000000000e-01", b"5.0000000000O00000e-01", 1), r"line \d+: cannot read numbers"),
    ("beam_f4.bdf", lambda d: d.replace(b"ENDDATA", b"ENDDAT"), r"expected an ENDDATA card"),
    ("beam_f4.vtu", lambda d: d.replace(b"</Points>", b"</Pints>", 1), r"line \d+, column \d+: the XML is not well formed"),
    ("beam_f4.vtu", lambda d: d.replace(b'NumberOfPoints="321"', b'NumberOfPoints="322"'), r"Points/Points: 963 values, expected 966 for NumberOfPoints=322"),
    ("beam_f4_v41.msh", lambda d: bytes(np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8)), r"line 1: expected '\$MeshFormat'"),
    ("beam_f4.inp", lambda d: b"", r"the file is empty"),
    ("beam_f4.vtu", lambda d: (MESHES / "beam_f4.inp").read_bytes(), r"line 1, column 0: the XML is not well formed"),
]


@pytest.mark.parametrize("name, damage, pattern", DAMAGED, ids=[f"{i}-{d[0]}" for i, d in enumerate(DAMAGED)])
def test_damaged_content_raises_mesh_import_error(name, damage, pattern, tmp_path, capsys):
    path = _damage(tmp_path, name, damage)
    with pytest.raises(MeshImportError, match=pattern) as info:
        read_mesh(path)
    assert str(info.value).startswith(path.name)
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------- non-finite and bad cells


def test_nan_coordinates_in_files_and_meshes_are_refused(tmp_path):
    msh = _damage(tmp_path, "beam_f4_v22.msh", lambda d: d.replace(b"\n5 0.5 0 0.05", b"\n5 nan 0 0.05", 1))
    with pytest.raises(MeshImportError, match=r"1 node\(s\) have non-finite coordinates \(ids 5, first: \[nan"):
        read_mesh(msh)
    inp = _damage(tmp_path, "beam_f4.inp", lambda d: d.replace(b"\n5, 5.0000000000000000e-01", b"\n5, inf", 1))
    with pytest.raises(MeshImportError, match=r"non-finite coordinates \(ids 5.*Fix the coordinates"):
        read_mesh(inp)
    box = structured_box((1, 1, 1), (2, 1, 1), material=STEEL)
    pts = box.points.copy()
    pts[3, 1] = np.nan
    with pytest.raises(MeshImportError, match=r"non-finite coordinates \(ids 4,.*fix the coordinates"):
        check_mesh(FEMesh(points=pts, cells=box.cells, materials=box.materials))


@pytest.mark.parametrize("kind, pattern", [
    ("inverted", r"1 inverted hexahedron element\(s\) \(negative Jacobian determinant; ids 2\).*Fix the node ordering"),
    ("flat", r"1 degenerate hexahedron element\(s\) \(zero volume; ids 2\)"),
    ("point", r"1 degenerate hexahedron element\(s\) \(zero volume; ids 2\)"),
])
def test_inverted_and_zero_volume_cells_refused_on_the_modes_path(kind, pattern):
    box = structured_box((2, 1, 1), (2, 1, 1), material=STEEL)
    conn = box.cells["hexahedron"].copy()
    pts = box.points.copy()
    if kind == "inverted":
        conn[1] = conn[1][[4, 5, 6, 7, 0, 1, 2, 3]]  # top and bottom swapped
    elif kind == "flat":
        pts = np.vstack([pts, pts[conn[1, :4]]])  # second cell: top face = bottom face
        conn[1, 4:] = np.arange(len(box.points), len(pts))
    else:
        pts = np.vstack([pts, np.ones((1, 3))])
        conn[1] = len(pts) - 1  # all eight nodes at one point
    mesh = FEMesh(points=pts, cells={"hexahedron": conn}, materials={"*": STEEL})
    with pytest.raises(MeshImportError, match=pattern):
        build_flexible_body(mesh, n_modes=2, geometric=False, preloads=False, stresses=False)


def test_surface_only_mesh_refused_on_the_modes_path(tmp_path):
    box = structured_box((1, 1, 1), (1, 1, 1), material=STEEL)
    surface = FEMesh(points=box.points, cells={}, materials={"*": STEEL})
    with pytest.raises(MeshImportError, match=r"no solid cells .* needs a volume mesh"):
        build_flexible_body(surface, n_modes=2)
    tri = tmp_path / "surface.msh"
    tri.write_text(
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n"
        "$Elements\n1\n1 2 2 1 1 1 2 3\n$EndElements\n"
    )
    from flexmb.cli import main

    assert main(["modes", str(tri), "--material", "210e9", "0.3", "7850"]) == 1


def test_no_flexmb_error_escapes_as_a_foreign_exception(tmp_path):
    """Every corpus input above raises a FlexmbError subclass; format errors are MeshImportError,
    never ModelError (the error hierarchy of flexmb/fe)."""
    assert issubclass(MeshImportError, FlexmbError)
    bad = tmp_path / "bad_material.inp"
    bad.write_text((MESHES / "beam_f4.inp").read_text().replace("2.100000e+11, 0.3", "-1, 0.3"))
    with pytest.raises(MeshImportError, match=r"bad_material.inp, line \d+: .*`E` = -1.0 must be > 0"):
        read_mesh(bad)


def test_damaged_flexible_body_files_raise_mesh_import_error(tmp_path):
    """Corpus class: flexible-body .npz files truncated, random, or missing an entry (3 inputs)."""
    import zipfile

    from flexmb.fe.reduction.body_data import FlexibleBodyData

    body = build_flexible_body(structured_box((1, 0.2, 0.2), (4, 1, 1), material=STEEL), n_modes=2,
                               geometric=False, preloads=False, stresses=False)
    good = body.save(tmp_path / "body.npz")
    data = good.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    (tmp_path / "random.npz").write_bytes(bytes(np.random.default_rng(2).integers(0, 256, 2000, dtype=np.uint8)))
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(tmp_path / "missing.npz", "w") as zout:
        for item in zin.infolist():
            if item.filename != "omega2.npy":
                zout.writestr(item, zin.read(item.filename))
    for name in ("cut.npz", "random.npz", "missing.npz"):
        with pytest.raises(MeshImportError, match=rf"{name}: .*(cannot read|damaged|not a flexible-body file).*"):
            FlexibleBodyData.load(tmp_path / name)
