"""The play setup form's model: its values in (field → text, as the screen reads them), a SessionRequest or
per-field errors out, and what the form says about the player's sessions and offers as runs to replay.

The values are plain strings (`mode` is one of MODE_LABELS' keys, `include` is "yes" when ticked); the runs are the
store's run list. The items themselves are chosen when the session opens the corpus
(`workbench.service.play.choose_items`). Text here is unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.rows import RunListRow
from workbench.service.agents import is_human
from workbench.service.datasets import dataset_key
from workbench.service.play import SessionRequest, player_error, session_name

MODE_LABELS = (
    ("a random sample", "random"),
    ("chosen item ids", "ids"),
    ("the items a run got wrong", "wrong"),
    ("only the session's unfinished items", "continue"),
)


def validate_setup(values: dict[str, str]) -> tuple[SessionRequest | None, dict[str, str]]:
    """A SessionRequest for the form's values, or field → what is wrong."""
    errors: dict[str, str] = {}
    player = values.get("player", "").strip()
    if player_error(player):
        errors["player"] = f"player: {player_error(player)}"
    mode = values.get("mode") or "random"
    count, seed = _random_sample(values, errors) if mode == "random" else (0, 0)
    ids = _item_ids(values, errors) if mode == "ids" else ()
    if mode == "wrong" and not values.get("run"):
        errors["run"] = "run: choose the run whose wrong answers you want to play"
    if errors:
        return None, errors
    return _session_request(values, player, mode, ids, count, seed), {}


def checked_setup(values: dict[str, str], runs: Sequence[RunListRow]) -> tuple[SessionRequest | None, dict[str, str]]:
    """`validate_setup`, and "only the unfinished items" of a session that has none is refused here, before
    Start, rather than as "nothing left to play" after it."""
    request, errors = validate_setup(values)
    session = session_of(values)[1]
    if values.get("mode") == "continue" and not has_unfinished(runs, session):
        errors["mode"] = f"items: '{session}' has no unfinished items; choose a random sample"
    return (None if errors else request), errors


def has_unfinished(runs: Sequence[RunListRow], session: str) -> bool:
    """Whether the stored session `session` has items planned and not played yet."""
    return any(r["name"] == session and r["done"] < r["planned"] for r in runs)


def opening_mode(runs: Sequence[RunListRow], player: str, dataset: str) -> str | None:
    """The way of picking items the form opens with when it is not the default: re-opening a session with
    unfinished items resumes it ("continue") before anything new is added."""
    return "continue" if has_unfinished(runs, session_name(player, dataset)) else None


def session_of(values: dict[str, str]) -> tuple[str, str]:
    """(player, session name) as the form would play them."""
    player, dataset = values["player"].strip(), values["dataset"].strip() or "builtin"
    return player, values["name"].strip() or session_name(player or "?", dataset)


def session_lines(runs: Sequence[RunListRow], player: str) -> list[str]:
    """The player's stored sessions, one line each (how far each got), or a line saying there are none."""
    return [
        f"{r['name']}: {r['done']}/{r['planned']} played · {r['status']}"
        + (" · re-opening it serves its unfinished items first" if r["done"] < r["planned"] else "")
        for r in runs
        if r["agent"] == f"human:{player}"
    ] or [f"no sessions of {player} yet; re-opening a session resumes it"]


def offered_runs(runs: Sequence[RunListRow], dataset: str) -> list[str]:
    """The names of the agents' runs on `dataset` (a spec, keyed as runs record it): the runs whose wrong answers
    can be played. A person's session is not offered."""
    key = dataset_key(dataset)
    return [r["name"] for r in runs if r["dataset"] == key and not is_human(r["agent"])]


def _session_request(
    values: dict[str, str], player: str, mode: str, ids: tuple[str, ...], count: int, seed: int
) -> SessionRequest:
    """The request of a valid form: blank dataset, run and session name are the defaults."""
    return SessionRequest(
        player=player,
        dataset=values.get("dataset", "").strip() or "builtin",
        mode=mode,
        ids=ids,
        count=count,
        seed=seed,
        run=values.get("run") or None,
        name=values.get("name", "").strip() or None,
        include_played=values.get("include") == "yes",
    )


def _random_sample(values: dict[str, str], errors: dict[str, str]) -> tuple[int, int]:
    """A random sample's size (at least 1) and seed as typed; 0 for a field that is not a whole number, its
    message in `errors`."""
    for key in ("count", "seed"):
        text = values.get(key, "").strip()
        if not text.isdigit() or (key == "count" and int(text) < 1):
            errors[key] = f"{key}: a whole number" + (" of at least 1" if key == "count" else "")
    count = int(values["count"]) if "count" not in errors else 0
    seed = int(values["seed"]) if "seed" not in errors else 0
    return count, seed


def _item_ids(values: dict[str, str], errors: dict[str, str]) -> tuple[str, ...]:
    """The item ids typed (comma- or space-separated); none typed is an error in `errors`."""
    ids = tuple(i.strip() for i in values.get("ids", "").replace(" ", ",").split(",") if i.strip())
    if not ids:
        errors["ids"] = "ids: one or more item ids, comma-separated (e.g. st_0001, mt_0002)"
    return ids
