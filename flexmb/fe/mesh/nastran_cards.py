"""Nastran bulk-data cards with their continuations, in small-field (8 characters), large-field (16
characters, name ending in ``*``) and free-field (commas) format.

A card's data fields are returned in logical order: the 8 data fields of its first line (fields 2-9),
then 8 per continuation (a large-field card's pair of physical lines counts as one logical line of 8).
A continuation is a line that starts with ``+``, ``*`` or ``,`` or whose first field is blank; ``$``
starts a comment. Reading stops at ``ENDDATA`` and starts after ``BEGIN BULK`` when there is one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from flexmb.errors import MeshImportError

__all__ = ["Card", "bulk_cards", "nastran_float", "nastran_int"]


@dataclass(frozen=True)
class Card:
    """One bulk card: its name (upper case, without ``*``), the line it starts on and its data
    fields (strings, stripped; "" for blank)."""

    name: str
    line: int
    fields: tuple[str, ...]
    last: int = 0  #: line number of its last continuation

    def get(self, i: int) -> str:
        """Data field ``i`` (0 = field 2 of the card, the id of an element), "" beyond the end."""
        return self.fields[i] if i < len(self.fields) else ""


def nastran_float(s: str, default: float = float("nan")) -> float:
    """A Nastran real: plain, or with the exponent shorthand ``7.8-9`` / ``2.1+11``; ``default`` if blank."""
    s = s.strip()
    if not s:
        return default
    try:
        return float(s.replace("D", "E").replace("d", "e"))
    except ValueError:
        m = re.fullmatch(r"([+-]?[0-9.]+)([+-][0-9]+)", s)
        if m is None:
            raise
        return float(f"{m.group(1)}e{m.group(2)}")


def nastran_int(s: str, default: int | None = None) -> int | None:
    """A Nastran integer, ``default`` if blank."""
    s = s.strip()
    return default if not s else int(s)


def _split(line: str, large: bool) -> tuple[str, list[str], bool]:
    """(first field, data fields, free format) of one physical line."""
    text = line.split("$", 1)[0].rstrip("\n").rstrip()
    if "," in text[:80]:
        parts = [p.strip() for p in text.split(",")]
        head, data = parts[0], parts[1:]
        if len(data) >= 9:  # 8 data fields and a continuation marker, possibly more (lenient)
            data = data[:8] + data[9:]
        return head, data, True
    text = text.expandtabs(8)
    head = text[:8].strip()
    width = 16 if large else 8
    body = text[8:72]
    return head, [body[j : j + width].strip() for j in range(0, len(body), width)], False


def _pad8(data: list[str]) -> list[str]:
    n = max(8, -(-len(data) // 8) * 8)
    return data + [""] * (n - len(data))


def bulk_cards(path: Path, names: tuple[str, ...] | None = None) -> list[Card]:
    """The bulk cards of ``path`` (only ``names`` if given), with their continuations joined."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    start = next((i + 1 for i, s in enumerate(lines) if s.strip().upper().startswith("BEGIN BULK")), 0)
    cards: list[Card] = []
    name, first_line, last_line, fields, large = "", 0, 0, [], False
    half: list[str] | None = None  # first physical line of a large-field logical line

    def close() -> None:
        if name and (names is None or name in names):
            cards.append(Card(name, first_line, tuple(fields + (_pad8(half) if half is not None else [])), last_line))

    for no, raw in enumerate(lines[start:], start=start + 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("$"):
            continue
        if stripped.upper().startswith("ENDDATA"):
            break
        cont_marker = raw[:1] in ("+", "*", ",")
        line_large = raw[:8].rstrip().endswith("*") or (cont_marker and raw[:1] == "*") or (large and cont_marker)
        head, data, free = _split(raw, line_large)
        if cont_marker or (not free and not head):
            if not name:
                raise MeshImportError(f"{path.name}, line {no}: a continuation line with no card before it.")
            last_line = no
            if large and not free:
                part = (data + [""] * 4)[:4]
                if half is None:
                    half = part
                else:
                    fields.extend(half + part)
                    half = None
            else:
                if half is not None:
                    fields.extend(_pad8(half))
                    half = None
                fields.extend(_pad8(data))
            continue
        close()
        name, first_line, last_line, half = head.upper().rstrip("*"), no, no, None
        large = head.endswith("*")
        if large and not free:
            fields, half = [], (data + [""] * 4)[:4]
        else:
            fields = _pad8(data)
    close()
    return cards
