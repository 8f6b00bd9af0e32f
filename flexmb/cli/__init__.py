"""Command-line interface: a thin layer over library functions, one module per subcommand.

Each subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int`` and is imported
lazily, so that ``flexmb --help`` stays fast and a missing optional dependency only affects the
subcommand that needs it.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

#: subcommand name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("flexmb.cli.demo", "run the main example and write results and plots"),
    "validate": ("flexmb.cli.validate", "run validation cases against published references"),
    "info": ("flexmb.cli.info", "summarize an FE mesh: nodes, elements, sets, volume, mass"),
    "modes": ("flexmb.cli.modes", "normal modes / Craig-Bampton reduction of an FE mesh"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flexmb", description="Flexible multibody dynamics.")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # subcommand not available in this install
            p.set_defaults(_unavailable=f"{name}: {exc}")
            continue
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "_unavailable", None):
        sys.stderr.write(f"flexmb {args._unavailable}\n")
        return 2
    return int(args._run(args) or 0)
