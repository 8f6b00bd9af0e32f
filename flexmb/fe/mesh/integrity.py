"""Structural completeness of mesh files: a file cut anywhere is read in full or refused.

Each check reads the raw file before the format parser and raises :class:`MeshImportError` naming
the file, the line (or byte position) and what was expected. What each format offers:

- Gmsh ``.msh`` (ASCII v2/v4): every ``$Section`` must be closed by ``$EndSection``; ``$Nodes``
  and ``$Elements`` must be present and hold the number of lines their headers declare (v2:
  ``1 + n``; v4: ``1 + blocks + 2 n_nodes`` and ``1 + blocks + n_elements``). Binary files: the
  last line must close a section.
- VTK XML ``.vtu``: the XML must be well formed (a cut file is not) and the points and cells read
  must match ``NumberOfPoints``/``NumberOfCells`` (checked after parsing, :func:`check_vtu_counts`).
  With raw appended data the file must end with ``</VTKFile>``.
- Nastran bulk data: the deck must end with ``ENDDATA``.
- Abaqus ``.inp`` (no end marker, no counts): the last line must end with a newline (else it may
  be cut mid-number: ``0.05`` read as ``0.0``); element records must have exactly ``1 + nodes``
  numbers; a file that ends in its ``*NODE``/``*ELEMENT`` data with nodes no element uses, or a
  list line ending with a comma, is refused (see :mod:`flexmb.fe.mesh.abaqus`). A cut exactly at the
  end of a line *after* the element data (between two complete set definitions, or before the
  ``*MATERIAL`` block) leaves a shorter valid input that no reader can tell from a complete one.
"""
from __future__ import annotations

import re
from pathlib import Path

from flexmb.errors import MeshImportError

_FIX = "The file is truncated or damaged: re-export it from the mesher or copy it again."


def _lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def check_gmsh(path: Path) -> None:
    """Sections closed, ``$Nodes``/``$Elements`` present with their declared line counts."""
    with open(path, "rb") as f:
        head = f.read(256)
    m = re.match(rb"\s*\$MeshFormat\s*\r?\n\s*(\S+)\s+(\d)", head)
    if m is None:
        raise MeshImportError(
            f"{path.name}, line 1: expected '$MeshFormat' followed by 'version file-type data-size'; "
            "this is not a Gmsh .msh file (or its start is damaged)."
        )
    version, binary = m.group(1).decode(errors="replace"), m.group(2) == b"1"
    if binary:
        with open(path, "rb") as f:
            data = f.read()
        tail = data.rstrip().rsplit(b"\n", 1)[-1].strip()
        if not tail.startswith(b"$End"):
            raise MeshImportError(
                f"{path.name}, byte {len(data)} (end of file): expected a closing '$End...' line, found "
                f"{tail[-40:]!r}. {_FIX}"
            )
        for sec in (b"$Nodes", b"$Elements"):
            if b"\n" + sec not in data or b"$End" + sec[1:] not in data:
                raise MeshImportError(f"{path.name}: no complete {sec.decode()} section. {_FIX}")
        return
    lines = _lines(path)
    open_name, open_line, body = None, 0, []
    sections: dict[str, tuple[int, list[str]]] = {}
    for no, raw in enumerate(lines, start=1):
        s = raw.strip()
        if open_name is None:
            if not s:
                continue
            if not s.startswith("$") or s.startswith("$End"):
                raise MeshImportError(f"{path.name}, line {no}: expected a '$Section' line, found {s[:40]!r}. {_FIX}")
            open_name, open_line, body = s[1:], no, []
            continue
        if s == "$End" + open_name:
            sections.setdefault(open_name, (open_line, body))
            open_name = None
        elif s.startswith("$") and open_name not in ("Comments",) and (
            s.startswith("$End") or s[1:] in ("Nodes", "Elements", "MeshFormat", "PhysicalNames", "Entities")
        ):
            raise MeshImportError(
                f"{path.name}, line {no}: found {s[:40]!r} while section ${open_name} (opened at line {open_line}) "
                f"is not closed; expected '$End{open_name}'. {_FIX}"
            )
        else:
            body.append(s)
    if open_name is not None:
        raise MeshImportError(
            f"{path.name}, line {len(lines)} (end of file): section ${open_name} opened at line {open_line} is not "
            f"closed by '$End{open_name}'. {_FIX}"
        )
    for need in ("Nodes", "Elements"):
        if need not in sections:
            raise MeshImportError(f"{path.name}: no ${need} section (expected after line {len(lines)}). {_FIX}")
    v4 = version.startswith("4")
    for name in ("Nodes", "Elements"):
        first, body = sections[name]
        body = [b for b in body if b]
        try:
            header = [int(float(t)) for t in body[0].split()] if body else []
            if v4:
                n_blocks, n_items = header[0], header[1]
                per_node = 2 if version != "4" and not version.startswith("4.0") else 1  # 4.1: tags, then coords
                expected = 1 + n_blocks + (per_node if name == "Nodes" else 1) * n_items
            else:
                n_items = header[0]
                expected = 1 + n_items
        except (ValueError, IndexError) as exc:
            raise MeshImportError(
                f"{path.name}, line {first + 1}: cannot read the ${name} header {body[:1]!r} ({exc}). {_FIX}"
            ) from exc
        if len(body) != expected:
            raise MeshImportError(
                f"{path.name}, ${name} at line {first}: the header declares {n_items} "
                f"{name.lower()}, i.e. {expected} data lines, but the section has {len(body)}. {_FIX}"
            )


def check_vtu_xml(path: Path) -> None:
    """Well-formed XML (or, with raw appended data, a file ending with ``</VTKFile>``)."""
    import xml.etree.ElementTree as ET

    data = path.read_bytes()
    if b'encoding="raw"' in data[:4096] or b"<AppendedData" in data and b'encoding="raw"' in data:
        if not data.rstrip().endswith(b"</VTKFile>"):
            raise MeshImportError(
                f"{path.name}, byte {len(data)} (end of file): expected the closing '</VTKFile>' tag. {_FIX}"
            )
        return
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line, col = exc.position
        raise MeshImportError(
            f"{path.name}, line {line}, column {col}: the XML is not well formed ({exc.msg}); "
            f"expected a complete <VTKFile> document. {_FIX}"
        ) from exc
    for k, piece in enumerate(root.iter("Piece")):
        try:
            n_pts, n_cells = int(piece.get("NumberOfPoints", "0")), int(piece.get("NumberOfCells", "0"))
        except ValueError as exc:
            raise MeshImportError(f"{path.name}: Piece {k}: NumberOfPoints/NumberOfCells are not integers. {_FIX}") from exc
        arrays = [("Points", a, 3 * n_pts) for a in piece.findall("Points/DataArray")]
        arrays += [("Cells", a, n_cells) for a in piece.findall("Cells/DataArray") if a.get("Name") in ("offsets", "types")]
        for where, arr, expected in arrays:
            if arr.get("format", "ascii") != "ascii":
                continue  # binary/appended arrays: meshio checks their sizes
            found = len((arr.text or "").split())
            if found != expected:
                raise MeshImportError(
                    f"{path.name}: Piece {k}, {where}/{arr.get('Name')}: {found} values, expected {expected} for "
                    f"NumberOfPoints={n_pts}, NumberOfCells={n_cells}. {_FIX}"
                )


def check_vtu_counts(path: Path, n_points: int, n_cells: int) -> None:
    """Points and cells read must match the ``NumberOfPoints``/``NumberOfCells`` of the pieces."""
    head = path.read_bytes()
    pts = sum(int(v) for v in re.findall(rb'NumberOfPoints="(\d+)"', head))
    cells = sum(int(v) for v in re.findall(rb'NumberOfCells="(\d+)"', head))
    if (pts, cells) != (n_points, n_cells):
        raise MeshImportError(
            f"{path.name}: the file declares NumberOfPoints={pts}, NumberOfCells={cells} but holds {n_points} points "
            f"and {n_cells} cells. {_FIX}"
        )


def check_nastran(path: Path) -> None:
    """The bulk data ends with ``ENDDATA``."""
    lines = _lines(path)
    for line in lines:
        if line[:7].upper() == "ENDDATA" or line.split(",")[0].strip().upper() == "ENDDATA":
            return
    raise MeshImportError(
        f"{path.name}, line {len(lines)} (end of file): expected an ENDDATA card (a complete bulk data deck ends "
        "with it). The file is truncated: re-export it; if it is a complete include fragment, append a line "
        "'ENDDATA'."
    )


def check_last_line(path: Path) -> None:
    """The file's last line ends with a newline (text formats without an end marker)."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        if size == 0:
            raise MeshImportError(f"{path.name}: the file is empty. {_FIX}")
        f.seek(max(0, size - 200))
        tail = f.read()
    if not tail.endswith(b"\n"):
        n_lines = sum(1 for _ in open(path, "rb"))
        last = tail.rsplit(b"\n", 1)[-1].decode(errors="replace")
        if not last.strip():
            return
        raise MeshImportError(
            f"{path.name}, line {n_lines}: the file looks truncated: its last line {last[-50:]!r} does not end "
            "with a newline, so it may be cut inside (a number may be cut: 0.05 read as 0.0); expected complete "
            "lines. Re-export the file; if that line is complete, end the file with a newline."
        )
