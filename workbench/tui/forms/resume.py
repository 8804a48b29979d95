"""Starting a run under the name of a stored one resumes it: what the launch form says before Start about that
resume — refused, by field, when the store would refuse it (another configuration, another process running it),
or a note of what starting does.

The rule is the store's own (`workbench.service.stores.identity_differences` on the identity the runner builds),
said in the form's words and naming the stored value: "seed differs from the stored run's 0".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.service.datasets import dataset_label
from workbench.tui.forms.launch_fields import FIELD_IDS, LABELS

# identity key (or caps key) → (form field, its label): the launch request's own, named as the form names them
IDENTITY_FIELDS = {
    key: (FIELD_IDS.get(key, key), LABELS[key])
    for key in ("agent", "model", "seed", "ablation", "budget", "max_turns", "max_tokens_total", "prompts")
}


def unchecked_resume_notes(name: str, existing: set[str], resumable: bool, errors: dict[str, str]) -> list[str]:
    """The note for a valid name that exists when the stored run's configuration is not known to compare (not
    `resumable`): starting resumes it or is refused."""
    if "name" in errors or name not in existing or resumable:
        return []
    return [
        f"a run named '{name}' exists: starting resumes it if the configuration matches (otherwise the run is refused)"
    ]


def resume_refusal(
    spec: Any,
    name: str,
    existing: set[str],
    stored: dict[str, Any] | None,
    store_path: Path | None,
    keys: tuple[str, str],
    notes: list[str],
) -> dict[str, str]:
    """Field → message when starting would resume run `name` and cannot: another process runs it, or `stored`
    (the stored run, when its identity is known) has another configuration. Empty when the run can start; then a
    resume gets its note in `notes`."""
    if name not in existing:
        return {}
    busy = busy_elsewhere(store_path, name)
    if busy:
        return {"name": busy}
    if stored is None:
        return {}
    conflicts = resume_conflicts(spec, stored, *keys)
    if not conflicts:
        notes.append(_resume_note(name, stored.get("dataset"), spec.dataset))
    return conflicts


def _resume_note(name: str, stored: str | None, dataset: str) -> str:
    """What starting does to stored run `name`: resume it, on the same files when its `stored` dataset key is not
    the form's."""
    if stored and stored != dataset:
        return (
            f"starting resumes '{name}' if its data holds the same files as the stored run's "
            f"{dataset_label(stored)} (their fingerprints are compared when the run starts)"
        )
    return f"starting resumes '{name}': its finished episodes are kept"


def busy_elsewhere(store_path: Path | None, name: str) -> str | None:
    """Why run `name` cannot start now, if another process is executing it: said in the form, before Start,
    instead of by the runner's refusal after it."""
    from workbench.service.stores import lock_holder

    pid = lock_holder(Path(store_path), name) if store_path is not None else None
    if pid is None or pid == os.getpid():  # this process's own job says so itself
        return None
    return (
        f"name: '{name}' is in progress in another process (pid {pid}); starting it here would be refused: "
        "wait for it to finish, or choose another name"
    )


def resume_conflicts(spec, stored: dict[str, Any], rename_key: str = "r", delete_key: str = "d") -> dict[str, str]:
    """Field → message for each part of `spec` the store would refuse to resume the `stored` run with (the store's
    own rule, `workbench.service.stores.identity_differences`, on the identity the runner builds), naming the
    stored value: "seed differs from the stored run's 0". The data's fingerprint is not known before the dataset
    is opened, so the stored one stands in for it; a different dataset key is reported by its key when keys can
    tell (`datasets_differ_by_key`), else the runner's fingerprint check decides when the run starts. Empty when
    starting resumes the run."""
    from workbench.service.stores import differences_phrase, identity_differences

    identity = stored["identity"]
    rebuilt = spec.identity(identity.get("dataset_fingerprint", ""))
    errors = _dataset_conflict(stored.get("dataset"), spec.dataset)
    other: list[str] = []
    for key in identity_differences(identity, rebuilt):
        if key == "caps":
            old, new = identity.get("caps") or {}, rebuilt.get("caps") or {}
            same_ablation = identity.get("ablation") == rebuilt.get("ablation")  # else the ablation explains it
            other += _caps_conflicts(identity_differences(old, new), old, same_ablation, errors)
        elif key in IDENTITY_FIELDS:
            field_id, label = IDENTITY_FIELDS[key]
            errors[field_id] = f"{label} differs from the stored run's {_shown_identity(key, identity.get(key))}"
        else:
            other.append(key)
    if not errors and not other:
        return {}
    lead = f"{differences_phrase(other)} from the stored run; " if other else ""
    errors["name"] = (
        f"{lead}'{spec.name}' is a stored run with another configuration: keep its values to "
        f"resume it, choose another name, or on Runs rename ({rename_key}) or delete ({delete_key}) it"
    )
    return errors


def _dataset_conflict(stored: str | None, requested: str) -> dict[str, str]:
    """The dataset field's message when the stored run's dataset key and the form's name different data."""
    if not stored or not datasets_differ_by_key(stored, requested):
        return {}
    field_id = "path" if requested != "builtin" else "dataset_kind"
    return {field_id: f"dataset differs from the stored run's {dataset_label(stored)}"}


def _caps_conflicts(
    caps: list[str], old: Mapping[str, int | dict[str, int] | list[str]], same_ablation: bool, errors: dict[str, str]
) -> list[str]:
    """The differing `caps`: one the form has a field for goes in `errors` (field → message, naming the stored run's
    `old` value: its caps as `Caps.as_dict` records them), the others are returned as `caps.NAME` unless the
    ablations differ (the ablation explains them)."""
    other = []
    for cap in caps:
        if cap in IDENTITY_FIELDS:
            field_id, label = IDENTITY_FIELDS[cap]
            errors[field_id] = f"{label} differs from the stored run's {_shown(old.get(cap))}"
        elif same_ablation:
            other.append(f"caps.{cap}")
    return other


def _shown_identity(key: str, value: Any) -> str:
    """A stored identity's value as a conflict names it; a prompts file by its hash's start ("(ours)": none)."""
    if key != "prompts":
        return _shown(value)
    return f"(a file hashed {str(value)[:12]})" if value else "(ours)"


def datasets_differ_by_key(stored: str, requested: str) -> bool:
    """Whether two recorded dataset keys name different data by their keys alone. A run's identity is its data's
    content fingerprint, and a Hub release's is known only once fetched: a key on either side that is a Hub spec
    (`hf:…`, possibly the very files of a release directory, or of another repository's) decides nothing here,
    and the runner compares fingerprints when the run starts, refusing a real difference there."""
    from workbench.service.datasets import is_hub

    return stored != requested and not (is_hub(stored) or is_hub(requested))


def _shown(value: Any) -> str:
    return "none" if value is None or value == "" else str(value)
