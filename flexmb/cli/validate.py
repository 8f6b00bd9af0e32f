"""`flexmb validate`: run the validation cases and print, save and publish their results table."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from flexmb import validation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cases", nargs="*", metavar="CASE", help="case ids to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases (id, title, source, slow) and exit")
    parser.add_argument("--json", metavar="FILE", type=Path, help="write the results as JSON")
    parser.add_argument("--report", metavar="DIR", type=Path, help="write DIR/report.md with the figures of each case")
    parser.add_argument(
        "--update-readme", action="store_true",
        help="rewrite the marked validation table in README.md and validation/README.md",
    )
    parser.add_argument("--fast", action="store_true", help="shorter runs (cases see ctx.fast = True)")
    parser.add_argument(
        "--cases-dir", metavar="DIR", type=Path, default=None,
        help=f"folder with case_*.py (default: ${validation.ENV_CASES_DIR} or validation/ at the repository root)",
    )


def _list(specs: dict[str, validation.CaseSpec]) -> None:
    if not specs:
        return
    w = max(len(i) for i in specs)
    for spec in specs.values():
        slow = "  [slow]" if spec.slow else ""
        print(f"{spec.id.ljust(w)}  {spec.title}{slow}")
        print(f"{' ' * w}  source: {spec.source or '-'}")
        if spec.load_error:
            print(f"{' ' * w}  cannot load: {spec.load_error}")


def run(args: argparse.Namespace) -> int:
    cases_dir = args.cases_dir if args.cases_dir is not None else validation.default_cases_dir()
    try:
        specs = validation.discover_cases(cases_dir)
    except ValueError as exc:
        sys.stderr.write(f"flexmb validate: {exc}\n")
        return 2
    if args.list:
        if not specs:
            sys.stderr.write(f"flexmb validate: no case_*.py files in {cases_dir}\n")
        _list(specs)
        return 0
    unknown = [c for c in args.cases if c not in specs]
    if unknown:
        sys.stderr.write(
            f"flexmb validate: unknown case id(s): {', '.join(unknown)}. "
            f"Valid ids: {', '.join(specs) or '(none found in ' + str(cases_dir) + ')'}\n"
        )
        return 2
    if not specs:
        sys.stderr.write(f"flexmb validate: no case_*.py files in {cases_dir}; nothing to run\n")

    # figures of batch runs go to files; never open windows
    os.environ.setdefault("MPLBACKEND", "Agg")
    ids = list(dict.fromkeys(args.cases)) or list(specs)
    total = len(ids)

    def progress_line(result: validation.CaseResult) -> None:
        k = ids.index(result.id) + 1
        status = "passed" if result.passed else ("ERROR" if result.error else "FAILED")
        sys.stderr.write(f"[{k}/{total}] {result.id} {status} in {result.seconds:.1f} s\n")

    results = validation.run_cases(
        ids, out_dir=args.report, fast=args.fast, cases_dir=cases_dir, on_result=progress_line
    )

    print(validation.format_table(results))
    failed = [r.id for r in results if not r.passed]
    print()
    summary = f"{len(results) - len(failed)} of {len(results)} cases passed"
    print(summary + (f"; failed: {', '.join(failed)}" if failed else ""))
    if args.json is not None:
        print(f"JSON: {validation.write_json(results, args.json, fast=args.fast)}")
    if args.report is not None:
        print(f"report: {validation.write_report(results, args.report, fast=args.fast)}")
    if args.update_readme:
        if args.cases:
            sys.stderr.write("flexmb validate: note: --update-readme with a subset of cases writes only these cases\n")
        for readme in validation.readme_paths(cases_dir):
            if validation.update_readme(results, readme, fast=args.fast):
                print(f"updated: {readme}")
    return 1 if failed else 0
