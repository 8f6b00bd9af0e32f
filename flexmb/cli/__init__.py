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
    "sweep": ("flexmb.cli.sweep", "parameter study of a study file, locally or on a dask cluster"),
}


class _LazySubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are added by importing its module on first use.

    ``flexmb --help`` lists the subcommands from :data:`SUBCOMMANDS` without importing them (nor
    numpy, scipy or the rest of flexmb); the module is imported when the subcommand is parsed.
    """

    _module_name: str | None = None

    def _load(self) -> None:
        name, self._module_name = self._module_name, None
        if name is None:
            return
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # subcommand not available in this install
            self.set_defaults(_unavailable=f"{self.prog.split()[-1]}: {exc}")
            return
        module.add_arguments(self)
        self.set_defaults(_run=module.run)

    def parse_known_args(self, args=None, namespace=None):
        self._load()
        return super().parse_known_args(args, namespace)

    def format_help(self):
        self._load()
        return super().format_help()


def build_parser() -> argparse.ArgumentParser:
    from flexmb import __version__

    parser = argparse.ArgumentParser(prog="flexmb", description="Flexible multibody dynamics.")
    parser.add_argument("--version", action="version", version=f"flexmb {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_LazySubcommandParser)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p._module_name = module_name
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a run failed, 2 bad input)."""
    from flexmb.errors import ConvergenceError, FlexmbError

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
    try:
        return int(args._run(args) or 0)
    except ConvergenceError as exc:  # a run that failed: one line, no traceback (-vv logs more)
        sys.stderr.write(f"flexmb {args.command}: error: {exc}\n")
        return 1
    except FlexmbError as exc:  # bad input: the message names the input, the value and the fix
        sys.stderr.write(f"flexmb {args.command}: error: {exc}\n")
        return 2
    except OSError as exc:  # a file that cannot be read or written
        sys.stderr.write(f"flexmb {args.command}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"flexmb {args.command}: interrupted\n")
        return 130
