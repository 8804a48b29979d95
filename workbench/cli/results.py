"""The commands that read stored runs: `runs`, `report`, `compare`, `leaderboard`, `export`, `rename`, `delete`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.cli.context import (
    _current_label_resolution,
    _open_store,
    _report,
    _runs,
    _writable_store,
    _writing,
)
from workbench.cli.errors import ExitCode, UsageError


def cmd_runs(args: argparse.Namespace) -> int:
    from workbench.cli.render.runs import print_runs

    if getattr(args, "runs_command", None) == "tag":
        return _tag(args)
    store = _open_store(args.db)
    print_runs(_runs(store), args.format)
    return ExitCode.OK


def cmd_report(args: argparse.Namespace) -> int:
    panel = args.panel or len(args.names) > 1
    if panel and args.ci:
        raise UsageError(
            "--ci gives intervals for one run's report; a panel has none (compare two runs for paired intervals)"
        )
    if args.external and not panel:
        raise UsageError("--external needs --panel: it correlates the accuracies of several runs with your scores")
    store = _open_store(args.db)
    for name in args.names:
        store.run(name)  # an unknown run is a user's mistake, told before the statistics are loaded
    _current_label_resolution(args.db, args.names)
    from workbench.cli.render.panel import print_panel
    from workbench.cli.render.run import print_report
    from workbench.service import reports

    if panel:
        external = _external_scores(Path(args.external)) if args.external else None
        from workbench.service import paths

        print_panel(reports.panel_report(store, args.names, external, cache_dir=paths.cache_dir()), args.format)
        return ExitCode.OK
    print_report(_report(store, args.names[0], ci=args.ci), args.format)
    return ExitCode.OK


def _external_scores(path: Path) -> dict[str, float]:
    """run,score rows (a header line is allowed) for the Spearman correlation. A file without one (JSON, another
    delimiter, empty) is refused naming the file or its line: it was read as nothing and the panel printed
    without the correlation, silently."""
    import csv

    try:
        rows = list(csv.reader(path.read_text().splitlines()))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    out = {}
    for lineno, row in enumerate(rows, 1):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < 2 or not row[0].strip():
            raise UsageError(f"{path}:{lineno}: expected a run,score row (a CSV file), got {','.join(row)[:40]!r}")
        try:
            out[row[0].strip()] = float(row[1])
        except ValueError:
            if lineno == 1:
                continue
            raise UsageError(f"{path}:{lineno}: field 'score' must be a number, got {row[1]!r}") from None
    if not out:
        raise UsageError(f"{path}: no run,score rows (a CSV file: a run's name and its score on each line)")
    return out


def _tag(args: argparse.Namespace) -> int:
    """`runs tag NAME --family F --tier T`: re-tag a stored run (written only when every value is valid)."""
    from workbench.service.runlist import TagError, tag_run
    from workbench.views.cells import family_cell, tier_cell

    store = _writable_store(args.db)
    try:
        tagged = tag_run(store, args.name, args.family, args.tier)
    except TagError as exc:
        raise UsageError(str(exc)) from None
    print(f"run '{args.name}': family {family_cell(tagged['family'])}, tier {tier_cell(tagged['tier'])}")
    return ExitCode.OK


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete a run. It cannot be undone, so it asks on a terminal and otherwise needs --yes."""
    store = _writable_store(args.db)
    from workbench.service.stores import stored_trajectories
    from workbench.views.cells import held_trajectories

    run = store.run(args.name)
    held = held_trajectories(*stored_trajectories(store, args.name))
    what = f"run '{args.name}' ({held}, status {run['status']})"
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"deleting {what} cannot be undone: add --yes")
        sys.stderr.write(f"delete {what}? [y/N] ")
        sys.stderr.flush()
        if input().strip().lower() not in ("y", "yes"):
            print(f"kept {what}")  # the user's answer, not a failure
            return ExitCode.OK
    from workbench.service.stores import delete_run

    delete_run(store, args.name)  # never under a process that is writing it
    print(f"deleted {what}")
    return ExitCode.OK


def cmd_rename(args: argparse.Namespace) -> int:
    if not args.new.strip():
        raise UsageError("the new name is empty")
    from workbench.service.stores import rename_run

    store = _writable_store(args.db)
    rename_run(store, args.old, args.new)  # refused while a process executes either name
    print(f"renamed run '{args.old}' to '{args.new}'")
    return ExitCode.OK


def cmd_compare(args: argparse.Namespace) -> int:
    from workbench.cli.render.compare import print_compare
    from workbench.service.reports import compare_report

    if args.a == args.b:  # every paired difference would be 0: nothing a reader could take from it
        raise UsageError(f"compare needs two different runs: '{args.a}' is named twice")
    store = _open_store(args.db)
    store.run(args.a), store.run(args.b)
    _current_label_resolution(args.db, [args.a, args.b])
    print_compare(compare_report(store, args.a, args.b), args.format)
    return ExitCode.OK


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from workbench.cli.render.leaderboard import print_leaderboard
    from workbench.service.reports import MIN_COVERAGE, leaderboard

    share = MIN_COVERAGE if args.min_coverage is None else args.min_coverage
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"--min-coverage is a share between 0 and 1, got {share:g}")
    store = _open_store(args.db)
    _current_label_resolution(args.db, [r["name"] for r in store.runs() if r["kind"] == "eval"])
    print_leaderboard(leaderboard(store, min_coverage=share), args.format)
    return ExitCode.OK


def _export_inspect(store, args: argparse.Namespace) -> int:
    """`export RUN --format inspect --out FILE.eval`: the run as an Inspect log (docs/inspect.md)."""
    from workbench.cli.data import INSPECT_EXTRA

    if not args.out:
        raise UsageError("--format inspect: --out FILE.eval (or FILE.json) is required: an Inspect log is a file")
    try:
        from workbench.service.inspect.log_export import export_inspect
    except ImportError as exc:
        raise UsageError(f"export --format inspect {INSPECT_EXTRA} ({exc})") from None
    from workbench.service import paths
    from workbench.service.datasets import open_dataset

    run = store.run(args.name)
    corpus, _ = open_dataset(run["dataset"], paths.cache_dir())
    with _writing(args.out):
        n = export_inspect(store, args.name, corpus, Path(args.out))
    sys.stderr.write(f"wrote {n} samples to {args.out}\n")
    return ExitCode.OK


def cmd_export(args: argparse.Namespace) -> int:
    store = _open_store(args.db)
    if args.format == "jsonl":
        from workbench.service.stores import export_run

        with _writing(args.out):
            n = export_run(store, args.name, Path(args.out) if args.out else sys.stdout, all_attempts=args.all_attempts)
        if args.out:
            sys.stderr.write(f"wrote {n} trajectories to {args.out}\n")
        return ExitCode.OK
    from workbench.service import paths
    from workbench.service.datasets import open_dataset, run_dataset

    if args.format == "inspect":
        return _export_inspect(store, args)
    from workbench.service.summary import agenthop_summary

    run = store.run(args.name)
    corpus, _ = open_dataset(run_dataset(run), paths.cache_dir())
    summary = agenthop_summary(store, args.name, corpus)
    for warning in summary.get("workbench_warnings", []):
        sys.stderr.write(f"warning: {warning}\n")
    text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    if args.out:
        from workbench.service.stores import atomic_text

        with _writing(args.out), atomic_text(Path(args.out)) as fh:
            fh.write(text)
        sys.stderr.write(f"wrote {args.out}\n")
    else:
        sys.stdout.write(text)
    return ExitCode.OK
