"""The commands about datasets: `synth`, `items`, `audit`, `import-reference`, `import-inspect`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workbench.cli.context import _held, _items_store, _open_store, _writing, open_data
from workbench.cli.errors import ExitCode, UsageError


def cmd_import_reference(args: argparse.Namespace) -> int:
    from workbench.cli.progress import Progress
    from workbench.service import paths
    from workbench.service.datasets import dataset_key
    from workbench.service.reference_import import import_reference, load_logs
    from workbench.service.stores import open_store

    corpus = open_data(args.data, args.quiet)
    _check_tags(args)
    load_logs(Path(args.dir), corpus, args.model, force=args.force)  # refused before the store exists
    store = _held(open_store(paths.new_store_path(args.db)))
    progress = Progress(args.run_name, quiet=args.quiet)
    try:
        summary = import_reference(
            Path(args.dir),
            corpus,
            store,
            args.run_name,
            model=args.model,
            dataset=dataset_key(args.data),
            on_event=progress.update,
            force=args.force,
            family=args.family,
            tier=args.tier,
        )
    finally:
        progress.close()
    return _print_imported(summary.as_dict(), args.format)


INSPECT_EXTRA = "needs the inspect extra: pip install 'agenthop-workbench[inspect]' (inspect-ai)"


def cmd_import_inspect(args: argparse.Namespace) -> int:
    """Inspect logs of the agenthop task as a run, replayed through our sandbox (docs/inspect.md)."""
    try:
        from workbench.service.inspect.log_import import import_inspect, read_logs
    except ImportError as exc:
        raise UsageError(f"import-inspect {INSPECT_EXTRA} ({exc})") from None
    from workbench.cli.progress import Progress
    from workbench.service import paths
    from workbench.service.datasets import dataset_key
    from workbench.service.stores import open_store

    _check_tags(args)
    data = args.data or _logged_dataset(args.logs)
    corpus = open_data(data, args.quiet)
    prompts = None
    if args.prompts:
        from workbench.service.prompts import load

        prompts = load(args.prompts)
    logs = read_logs([Path(p) for p in args.logs], corpus, prompts)  # refused before the store exists
    store = _held(open_store(paths.new_store_path(args.db)))
    progress = Progress(args.run_name, quiet=args.quiet)
    try:
        summary = import_inspect(
            logs,
            corpus,
            store,
            args.run_name,
            dataset=dataset_key(data),
            on_event=progress.update,
            family=args.family,
            tier=args.tier,
        )
    finally:
        progress.close()
    return _print_imported(summary.as_dict(), args.format)


def _logged_dataset(logs: list[str]) -> str:
    """The dataset the first log names (its task's `data`), for an import without --data."""
    from workbench.service.inspect.log_import import logged_dataset

    return logged_dataset(Path(logs[0]))


def _check_tags(args: argparse.Namespace) -> None:
    """An import's --family / --tier, refused (exit 2) before anything is read or written when malformed."""
    from workbench.service import families

    for key, problem in (
        ("family", args.family and families.family_problem(args.family)),
        ("tier", args.tier and families.tier_problem(args.tier)),
    ):
        if problem:
            raise UsageError(f"--{key}: {problem}")


def _print_imported(result: dict[str, Any], fmt: str) -> int:
    """What an import brought in (reference logs or Inspect logs alike): JSON, or the plain lines."""
    if fmt == "json":
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    else:
        sys.stdout.write(_import_text(result))
    return ExitCode.OK


def _import_text(result: dict[str, Any]) -> str:
    """The import summary for a person: `key: value` lines, mappings as `k v · k v`, lists of set-aside files one
    per line (JSON has the same keys as data)."""
    lines = []
    for key, value in result.items():
        if key == "examples":
            continue
        if isinstance(value, list):
            lines.append(f"{key}: {len(value)}")
            lines += ["  " + _readable(entry) for entry in value]
        else:
            lines.append(f"{key}: {_readable(value)}")
    lines += ["  mismatch: " + _readable(example) for example in result.get("examples") or []]
    return "".join(line + "\n" for line in lines)


def _readable(value: Any) -> str:
    """A value as plain words, not a Python repr: {'budget': 30} → 'budget 30', [a, b] → 'a, b', None → '—'."""
    if isinstance(value, dict):
        return " · ".join(f"{k} {_readable(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_readable(v) for v in value) + "]"
    return "—" if value is None else str(value)


def cmd_audit(args: argparse.Namespace) -> int:
    """`audit show | export | label | undo | verdict`: the review sheet, the corrected release, or one record."""
    if args.audit_command == "label" and args.action != "remove" and args.relevance is None:
        raise UsageError(f"--action {args.action} needs --relevance direct or supporting")
    corpus = open_data(args.data, getattr(args, "quiet", False))
    if args.audit_command == "show":
        _audit_show(args, corpus)
    elif args.audit_command == "export":
        _audit_export(args, corpus)
    else:
        _audit_record(args, corpus)
    return ExitCode.OK


def _audit_show(args: argparse.Namespace, corpus) -> None:
    """The item's review sheet with its labels as edited so far, when a store exists (none is created)."""
    from workbench.service import audit, paths
    from workbench.service.stores import open_store

    path = paths.store_path(args.db)
    store = open_store(path, readonly=True) if path.exists() else None
    try:
        print(json.dumps(audit.evidence(corpus, args.item, store), indent=2, ensure_ascii=False))
    finally:
        if store is not None:
            store.close()


def _audit_export(args: argparse.Namespace, corpus) -> None:
    """The corrected release written to `--out`, and its counts."""
    from workbench.service import audit

    store = _open_store(args.db)
    with _writing(args.out):
        counts = audit.write_corrected(corpus, store, Path(args.out))
    print(json.dumps({"out": args.out, **counts}))


def _audit_record(args: argparse.Namespace, corpus) -> None:
    """A label edit (checked against the item as it stands), an undo or a verdict, stored; what it did."""
    from workbench.service import audit, paths

    path = paths.store_path(args.db)
    audit.evidence(corpus, args.item)  # an unknown item fails before the store is touched
    if args.audit_command == "label":
        done = audit.record_edit(
            corpus, path, args.item, args.reviewer, args.action, args.arxiv_id, args.section, args.relevance
        )
    elif args.audit_command == "undo":
        done = audit.undo_edit(corpus, path, args.item, args.reviewer, args.edit)
    else:
        audit.record_verdict(corpus.fingerprint, path, args.item, args.reviewer, args.verdict, args.note, _checks(args))
        done = f"verdict {args.verdict}"
    print(json.dumps({"item": args.item, "recorded": args.audit_command, "done": done}, ensure_ascii=False))


def _checks(args: argparse.Namespace) -> dict[str, bool | None]:
    """The verdict's three checks from their flags (`--question-ok yes`): yes / no, or None when not given."""
    from workbench.service.audit import CHECKS

    return {key: None if getattr(args, key) is None else getattr(args, key) == "yes" for key in CHECKS}


def cmd_items(args: argparse.Namespace) -> int:
    from workbench.cli.render.items import print_item, print_items
    from workbench.service import items
    from workbench.service.datasets import dataset_key

    flt = items.ItemFilter(
        kind=args.kind, depth=args.depth, reasoning=args.reasoning, tier=args.tier, right=args.right, text=args.text
    )
    if args.show and (flt.active() or args.sort != "file" or args.reverse):
        raise UsageError("--show ITEM_ID takes no filters or sort")
    store = _items_store(args.db)
    corpus = open_data(args.data, getattr(args, "quiet", False))
    if args.show:
        detail, tree = items.item_detail(corpus, args.show, store)
        print_item(detail, tree, args.format)
        return ExitCode.OK
    spec = dataset_key(args.data)
    view = items.browse(corpus, spec, store)
    flt = items.check_filter(flt, view.rows)
    rows = items.sort_rows(items.filter_rows(view.rows, flt), args.sort, args.reverse)
    print_items(view, rows, flt, args.format)
    return ExitCode.OK


def cmd_synth(args: argparse.Namespace) -> int:
    from workbench.service.datasets import generate_benchmark
    from workbench.service.errors import NotEnoughPapers

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} exists and is not empty")
    try:  # built in memory, written to a hidden sibling and renamed: a failure leaves nothing under `out`
        generate_benchmark(out, seed=args.seed, preset=args.preset, items=args.items, papers=args.papers)
    except NotEnoughPapers as exc:
        raise UsageError(
            f"{exc.papers} papers are too few for {exc.wanted} items (only {exc.built} could be "
            f"built): try --papers {exc.suggested_papers}"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    print(json.dumps({"out": str(out), "preset": args.preset, "seed": args.seed}))
    return ExitCode.OK
