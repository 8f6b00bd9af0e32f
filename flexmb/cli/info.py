"""`flexmb info MESH`: summarize an FE mesh (nodes, elements, elements not assembled, sets, bounding box,
volume, mass, checks)."""
from __future__ import annotations

import argparse
import json
import logging
import sys

from flexmb.errors import FlexmbError
from flexmb.fe.mesh.checks import plausibility
from flexmb.fe.mesh.femesh import Material
from flexmb.fe.mesh.checks import check_mesh
from flexmb.fe.mesh.readers import read_mesh


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mesh", metavar="MESH", help="mesh file (.msh, .inp, .bdf/.nas, .vtu/.vtk, .med)")
    parser.add_argument(
        "--material",
        nargs=3,
        type=float,
        metavar=("E", "NU", "RHO"),
        help="isotropic material for the whole mesh (replaces every material of the file, element-set ones "
             "included), e.g. 210e9 0.3 7850",
    )
    parser.add_argument("--units", default=None, help="label of the file's unit system, e.g. SI (not converted)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _format(summary: dict, warnings: list[str]) -> str:
    def row(label: str, text: str) -> str:
        return f"{label:<13s}{text}"

    lo, hi = summary["bounding_box"]["lo"], summary["bounding_box"]["hi"]
    size = [h - low for low, h in zip(lo, hi)]
    unused = f", {summary['n_unused_nodes']} unused" if summary["n_unused_nodes"] else ""
    lines = [
        row("file", str(summary["source"])),
        row("sha256", str(summary["checksum"])),
        row("units", summary["units"] or "not declared (flexmb assumes one consistent system, e.g. SI)"),
        row("nodes", f"{summary['n_nodes']} ({summary['n_dofs']} DOFs{unused})"),
        row("elements", ", ".join(f"{t}: {n}" for t, n in summary["cells"].items()) or "none"),
        row("unassembled", ", ".join(f"{e['type']} ({e['kind']}): {e['count']}" for e in summary["unassembled"])
            or "none"),
        row(
            "bbox",
            f"[{lo[0]:.6g}, {lo[1]:.6g}, {lo[2]:.6g}] .. [{hi[0]:.6g}, {hi[1]:.6g}, {hi[2]:.6g}]"
            f"  (size {size[0]:.6g} x {size[1]:.6g} x {size[2]:.6g})",
        ),
        row("volume", f"{summary['volume']:.6g}"),
    ]
    for name, m in summary["materials"].items():
        where = "whole mesh" if name == "*" else f"set {name}"
        lines.append(row("material", f"{m['name']} on {where}: E = {m['E']:.6g}, nu = {m['nu']:.6g}, rho = {m['rho']:.6g}"))
    if not summary["materials"]:
        lines.append(row("material", "none (pass --material E NU RHO for the mass)"))
    mass = summary["mass"]
    lines.append(row("mass", f"{mass:.6g}" if mass is not None else "unknown (some elements have no material)"))
    for kind in ("node_sets", "element_sets"):
        entries = summary[kind]
        lines.append(row(kind.replace("_", " "), ", ".join(f"{k} ({n})" for k, n in entries.items()) or "none"))
    lines += [row("warning", w) for w in warnings] or [row("checks", "ok")]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    # the warnings are printed below; do not repeat them through the log handler
    logs = [logging.getLogger(f"flexmb.fe.mesh.{m}") for m in ("checks", "readers")]
    levels = [log.level for log in logs]
    try:
        for log in logs:
            log.setLevel(logging.ERROR)
        material = Material(*args.material, name="--material") if args.material else None
        mesh = read_mesh(args.mesh, materials=material, units=args.units)
        warnings = check_mesh(mesh)
        unit_hint = plausibility(mesh)["warning"]  # size and mass are in the summary
        if unit_hint:
            warnings.append(unit_hint)
    except FlexmbError as exc:
        sys.stderr.write(f"flexmb info: {exc}\n")
        return 1
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)
    summary = mesh.summary()
    if args.json:
        sys.stdout.write(json.dumps({**summary, "warnings": warnings}, indent=2) + "\n")
    else:
        sys.stdout.write(_format(summary, warnings) + "\n")
    return 0
