"""`flexmb modes`: normal modes or a Craig-Bampton flexible body of an FE mesh (solids, shells, beams,
point masses, springs), with VTU output."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from flexmb.errors import FlexmbError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mesh", metavar="MESH", type=Path, help="FE mesh (.msh, .inp, .bdf, .vtu, ...)")
    parser.add_argument(
        "--material", nargs=3, type=float, metavar=("E", "NU", "RHO"),
        help="isotropic material for the whole mesh (Pa, -, kg/m^3), replacing every material of the file "
             "(element-set ones included); default: the materials in the file",
    )
    parser.add_argument("--fix", nargs="+", metavar="SET", default=[], help="clamp these node sets (fixed-base modes)")
    parser.add_argument(
        "--interface", nargs="+", metavar="SET", default=[],
        help="Craig-Bampton interface frames on these node sets (the first is the reference); writes the "
             "flexible-body .npz file",
    )
    parser.add_argument("--kind", choices=("rigid", "average"), default="rigid",
                        help="interface coupling: rigid (RBE2-like) or average (RBE3-like) (default rigid)")
    parser.add_argument("-n", "--n-modes", type=int, default=10, help="number of (fixed-interface) modes (default 10)")
    parser.add_argument("--out", metavar="DIR", type=Path, default=None,
                        help="write mode shapes (VTU + .pvd) and the flexible-body file here")
    parser.add_argument("--allow-unassembled", action="store_true",
                        help="compute the modes even when the file also holds elements flexmb does not assemble "
                             "(quadratic shells and beams, connectors, rigid elements, ...: named with their counts in "
                             "the element table): a partial model")
    parser.add_argument("--no-geometric", action="store_true",
                        help="skip geometric stiffness and preloads in the flexible-body file (faster)")


def _table(freqs, title: str, first: int = 1) -> str:
    lines = [title, f"{'mode':>5}  {'frequency [Hz]':>16}"]
    lines += [f"{k:>5}  {f:>16.6g}" for k, f in enumerate(freqs, start=first)]
    return "\n".join(lines)


def _first(freqs) -> float | None:
    return float(freqs[0]) if len(freqs) else None


#: what each assembled element type is, for the summary table
_KINDS = {"triangle": "MITC3 shell", "quad": "MITC4 shell", "line": "Timoshenko beam"}


def element_table(mesh) -> str:
    """The elements of ``mesh`` by type with their counts, assembled ones first, then what the file
    held that flexmb does not assemble (named with counts: left out with --allow-unassembled)."""
    rows = [(t, len(c), "solid") for t, c in mesh.cells.items()]
    rows += [(t, len(c), _KINDS[t]) for t, c in (*mesh.shells.items(), *mesh.beams.items())]
    for name, label in (("point_masses", "point mass"), ("springs", "spring")):
        value = getattr(mesh, name, None)
        if value is not None and len(value):
            rows.append((name.replace("_", " "), len(value), label))
    lines = [f"{'elements':<18} {'count':>8}  kind"]
    lines += [f"{t:<18} {n:>8}  {k}" for t, n, k in rows]
    lines += [f"{e.type:<18} {e.count:>8}  {e.kind}, NOT assembled (left out)"
              for e in getattr(mesh, "unassembled", ()) if e.structural]
    return "\n".join(lines)


def _interfaces(body, mesh) -> str:
    """One phrase per interface: kind, node count, and how its nodes' rotations are coupled."""
    rot = mesh.dof_map.per_node == 6
    out = []
    for f in body.interfaces:
        n_rot = int(rot[f.nodes].sum())
        how = ("" if not n_rot else
               f", rotations of {n_rot} node(s) tied to the frame" if f.kind == "rigid" else
               f", translations only ({n_rot} node(s) keep free rotations)")
        out.append(f"{f.name} ({f.kind}, {len(f.nodes)} node(s){how})")
    return "; ".join(out)


def _report(note: dict, asked: int, got: int) -> None:
    """Plausibility line, unit warning and a warning when fewer modes came back than asked."""
    print(f"plausibility: {note['note']}")
    if note["warning"]:
        print(f"WARNING: {note['warning']}")
    if got < asked:
        print(f"WARNING: {asked} modes asked, {got} returned: the mesh has too few degrees of freedom "
              "(or extra zero-frequency modes); refine it for more modes.")


def run(args: argparse.Namespace) -> int:
    from flexmb.fe.elements import assembly as fe
    from flexmb.fe import reduction as red
    from flexmb.fe.mesh.checks import check_mesh, plausibility
    from flexmb.fe.mesh.femesh import Material
    from flexmb.fe.mesh.readers import read_mesh
    from flexmb.fe.mesh.unassembled import require_assembled
    from flexmb.fe.reduction.body_data import build_flexible_body

    if args.fix and args.interface:
        sys.stderr.write("flexmb modes: use either --fix (fixed-base modes) or --interface (Craig-Bampton), not both\n")
        return 2
    if args.n_modes < 1:
        sys.stderr.write(f"flexmb modes: -n {args.n_modes}: ask for at least one mode\n")
        return 2
    # the mesh warnings and the plausibility note are printed here, not repeated through the log handler
    logs = [logging.getLogger(f"flexmb.fe.mesh.{m}") for m in ("checks", "readers")]
    saved_levels = [log.level for log in logs]
    try:
        for log in logs:
            log.setLevel(logging.ERROR)
        material = None if args.material is None else Material(*args.material, name="cli")
        mesh = read_mesh(args.mesh, materials=material, drop_unused_nodes=True)
        for s in args.fix + args.interface:
            if s not in mesh.node_sets:
                sys.stderr.write(
                    f"flexmb modes: node set {s!r} is not in {args.mesh.name}; known sets: "
                    f"{', '.join(sorted(mesh.node_sets)) or 'none'}\n"
                )
                return 2
        structural = bool(mesh.shells or mesh.beams)
        # NaN, inverted, zero-volume or surface-only: error
        for w in check_mesh(mesh, solid_required=not structural):
            print(f"WARNING: {w}")
        require_assembled(mesh, "", args.allow_unassembled, option="--allow-unassembled", rotational=True)
        rotational = mesh.dof_map.has_rotations
        print(f"{args.mesh.name}: {mesh.n_nodes} nodes, {mesh.n_dofs} DOFs"
              + (f" ({int((mesh.dof_map.per_node == 6).sum())} nodes with rotations)" if rotational else ""))
        print(element_table(mesh))
        if args.interface:
            body = build_flexible_body(mesh, interfaces=args.interface, n_modes=args.n_modes,
                                       interface_kind=args.kind, geometric=not args.no_geometric,
                                       preloads=not args.no_geometric, allow_unassembled=args.allow_unassembled)
            print(f"mass {body.mass:.6g}, Craig-Bampton, interfaces {_interfaces(body, mesh)}; reference {body.reference}")
            print(_table(body.frequencies, "reduced-model frequencies (reference interface clamped)"))
            _report(plausibility(mesh, f1=_first(body.frequencies)), args.n_modes, body.settings["n_modes_returned"])
            if args.out is not None:
                pvd = body.to_vtu(args.out)
                path = body.save(args.out / f"{args.mesh.stem}.flexbody.npz")
                print(f"wrote {pvd} and {path}")
            return 0
        from flexmb.fe.reduction.build_checks import refuse_grounded_springs

        if not args.fix:  # a spring to ground holds a floating model: only fixed-base modes keep it
            refuse_grounded_springs(mesh)
        K = fe.assemble_stiffness(mesh)
        M = fe.assemble_mass(mesh)
        dmap = mesh.dof_map if rotational else None
        if args.fix:
            nodes = np.unique(np.concatenate([mesh.node_sets[s] for s in args.fix]))
            basis = red.clamped_modes(K, M, nodes, args.n_modes, dof_map=dmap)
            title = (f"fixed-base modes (clamped: {', '.join(args.fix)}"
                     f"{'; rotations too, where nodes have them' if rotational else ''})")
        else:
            basis = red.free_free_modes(K, M, args.n_modes, points=mesh.points, dof_map=dmap)
            title = (f"free-free elastic modes (after {basis.rigid_modes.shape[1]} zero-frequency modes"
                     f"{f', of which {basis.n_extra_zero_modes} beyond the rigid-body six' if basis.n_extra_zero_modes else ''})")
        print(_table(basis.frequencies, title))
        _report(plausibility(mesh, f1=_first(basis.frequencies)), args.n_modes, basis.n_modes)
        if args.out is not None:
            print(f"wrote {_mode_data(args, mesh, basis, K, M).to_vtu(args.out)}")
        return 0
    except FlexmbError as exc:
        sys.stderr.write(f"flexmb modes: {exc}\n")
        return 1
    finally:
        for log, level in zip(logs, saved_levels):
            log.setLevel(level)


def _mode_data(args, mesh, basis, K, M):
    """The modes of ``basis`` as a FlexibleBodyData (for their VTU files): invariants, stresses of
    solids, shells and beams."""
    from flexmb.fe import reduction as red
    from flexmb.fe.elements import assembly as fe
    from flexmb.fe.reduction.body_data import FlexibleBodyData
    from flexmb.fe.reduction.modal_stress import structural_modal_stresses

    P = basis.shapes
    extra = {}
    if mesh.dof_map.has_rotations:
        inv = red.inertia_invariants_of_dofs(M, mesh.dof_map, mesh.points, P, K)
        sp_, nodes, kinds, forces = structural_modal_stresses(mesh, P)
        extra = dict(modal_point_stresses=sp_, stress_point_nodes=nodes, stress_point_kinds=kinds,
                     modal_beam_forces=forces)
    else:
        inv = red.inertia_invariants(fe.assemble_scalar_mass(mesh), mesh.points, P, K)
    cells = {t: c for t, c in (*mesh.cells.items(), *mesh.shells.items(), *mesh.beams.items())}
    return FlexibleBodyData(
        name=args.mesh.stem, kind=basis.kind, reference=None, frequencies=basis.frequencies,
        omega2=basis.omega2, mode_shapes=basis.nodal_shapes(), mode_rotations=basis.nodal_rotations(),
        interfaces=(), invariants=inv,
        damping=red.modal_damping(basis.omega2), geometric_stiffness=None, preload_stiffness=None,
        modal_stresses=red.modal_stresses(mesh, P) if mesh.cells else None, points=mesh.points, cells=cells,
        units=mesh.units, source=mesh.source, source_checksum=mesh.checksum, settings=basis.settings, **extra,
    )
