"""The launch form's model: its fields in (`LaunchFields`), the launch service's RunSpec or the problems by field
out, with the notes a person reads before Start (a resume, a cost estimate).

`validate` is pure but for what it may read cheaply (a QA file, the store's lock and prices): the RunSpec is the
launch service's (`workbench.service.launch`), as `--batch run` gets it for the same choices; a field's problem is
said in the form's words. `LaunchForm` keeps what the form holds between keystrokes: its fields, whether the person
typed the name (until then it follows the choices, as `--batch run` names the run), the stored runs a name would
resume and the cost estimates already read.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.service import agents
from workbench.service.launch import LaunchError, LaunchRequest, default_run_name, run_spec
from workbench.tui.flag_words import in_form_words
from workbench.tui.forms.cost_notes import llm_notes
from workbench.tui.forms.launch_fields import FIELD_IDS, LABELS, LaunchFields, form_request
from workbench.tui.forms.resume import resume_refusal, unchecked_resume_notes
from workbench.tui.forms.slicing import slice_episodes


@dataclass
class Validation:
    spec: Any  # the launch service's RunSpec, or None
    errors: dict[str, str]
    notes: list[str]


def release_problem(text: str) -> str | None:
    """What is wrong with the release field: a release directory, or a Hub release (`hf:OWNER/NAME[@REVISION]`,
    fetched when the run starts: only its form is checked here, nothing is asked of the Hub); None when usable."""
    from workbench.service.datasets import check_hub_spec, check_release_dir, is_hub
    from workbench.service.errors import DatasetError

    text = text.strip()
    if not text:
        return "release directory: a path (or hf:OWNER/NAME) is needed"
    try:
        if is_hub(text):
            check_hub_spec(text)
        else:
            check_release_dir(Path(text).expanduser())
    except DatasetError as exc:
        return f"release directory: {exc}"
    return None


def default_name(
    agent: str, dataset_kind: str, path: str, existing: set[str], model: str = "", ablation: str = "full", seed: int = 0
) -> str:
    """The name `--batch run` gives the same run (the launch service's), made unique among `existing`."""
    dataset = "builtin" if dataset_kind == "builtin" else path.strip()
    request = LaunchRequest(dataset=dataset, agent=agent, model=model or None, ablation=ablation, seed=seed)
    return default_run_name(request, existing)


def fields_name(v: LaunchFields, existing: set[str]) -> str:
    """The default name of the run `v` describes (a seed that is no number: 0), unique among `existing`."""
    try:
        seed = int(v.seed.strip() or 0)
    except ValueError:
        seed = 0
    return default_name(v.agent, v.dataset_kind, v.path, existing, v.model, v.ablation, seed)


def validate(
    v: LaunchFields,
    existing: set[str],
    llm_ok: bool | None = None,
    cache_dir: Path | None = None,
    store_path: Path | None = None,
    options: dict[str, Any] | None = None,
    notes_memo: dict | None = None,
    stored: dict[str, Any] | None = None,
    keys: tuple[str, str] = ("r", "d"),
) -> Validation:
    """A RunSpec for the form's fields, or what is wrong with them (field → message).

    With `cache_dir`, item ids and the slice are checked against the dataset's QA file when it can be read
    without importing anything (the built-in benchmark once generated, a release directory, a Hub release once in
    the Hub's cache); `options` are agent options the form has no field for (a relaunched run's; None for a new
    run); `store_path` is where the cost estimate looks for earlier runs of the model, `notes_memo` a dict that
    keeps estimates between keystrokes. `stored` is the stored run named like the form's name, if any: a
    configuration the runner would refuse to resume is refused here, pointing at the Runs screen's rename and
    delete `keys`. The RunSpec is the launch service's (`workbench.service.launch`), as `--batch run` gets it for
    the same choices."""
    errors = _choice_errors(v, agents.llm_available() if llm_ok is None else llm_ok)
    request = form_request(v, options, errors)
    spec = _spec(request, existing, errors)
    name = v.name.strip()
    resumable = bool(stored and stored.get("identity"))
    notes = unchecked_resume_notes(name, existing, resumable, errors)
    if errors:
        return Validation(None, errors, notes)
    refusal = resume_refusal(spec, name, existing, stored if resumable else None, store_path, keys, notes)
    if refusal:
        return Validation(None, refusal, notes)
    episodes, problem = slice_episodes(spec, cache_dir)
    if problem:
        errors["ids" if request.ids else "question_type"] = problem
        return Validation(None, errors, notes)
    if spec.agent == "llm":
        notes += llm_notes(spec, request.max_tokens_total, episodes, name not in existing, store_path, notes_memo)
    return Validation(spec, {}, notes)


def _choice_errors(v: LaunchFields, llm_ok: bool) -> dict[str, str]:
    """Field → message for a release directory that cannot be used and an LLM agent this build lacks."""
    errors: dict[str, str] = {}
    problem = release_problem(v.path) if v.dataset_kind != "builtin" else None
    if problem:
        errors["path"] = problem
    if v.agent == "llm" and not llm_ok:
        errors["agent"] = "agent: the LLM agent is not available in this build (sandbox.agents.llm is missing)"
    return errors


def _spec(request: LaunchRequest, existing: set[str], errors: dict[str, str]) -> Any:
    """The launch service's RunSpec of `request`, or None with the service's problems in `errors` (by form
    field, in the form's words; a field's own earlier message is kept)."""
    try:
        return run_spec(request, existing, names=LABELS)
    except LaunchError as exc:
        for key, message in exc.problems.items():
            errors.setdefault(FIELD_IDS.get(key, key), in_form_words(message, LABELS))
        return None


class LaunchForm:
    """The launch form between keystrokes: its fields (a new run's defaults, or a relaunched run's values), the run
    names it must not take for a new run (`existing`), and the agent `options` without a field (a relaunched run's;
    None for a new run: the service adds the model's defaults and `[[pricing]]`).

    `stored_run` reads the stored run of a name (None when there is none); it is asked once per name, when the
    form's name is one of `existing`, to compare what starting would resume."""

    def __init__(
        self,
        existing: Collection[str],
        fields: LaunchFields | None = None,
        options: dict[str, Any] | None = None,
        *,
        llm_ok: bool | None = None,
        stored_run: Callable[[str], dict[str, Any] | None] | None = None,
    ):
        self.existing = set(existing)
        self.llm_ok = agents.llm_available() if llm_ok is None else llm_ok
        self.options = None if options is None else dict(options)
        self.stored_run = stored_run
        self._stored: dict[str, dict[str, Any] | None] = {}
        self._notes_memo: dict = {}
        fields = fields or LaunchFields()
        self.name_typed = bool(fields.name)  # a given name (a relaunched run's) stays
        self.fields = fields if fields.name else replace(fields, name=fields_name(fields, self.existing))

    def set(self, key: str, value: str) -> None:
        """Field `key` now holds `value`. Until the person types a name of their own, the name follows the other
        choices (agent, data, model, ablation, seed), as `--batch run` would name the run."""
        self.fields = replace(self.fields, **{key: value})
        if key == "name":
            self.name_typed = value != fields_name(self.fields, self.existing)
        elif not self.name_typed:
            self.fields = replace(self.fields, name=fields_name(self.fields, self.existing))

    def stored(self, name: str) -> dict[str, Any] | None:
        """The stored run the form's name would resume (read once per name), for `validate` to compare."""
        if name not in self.existing or self.stored_run is None:
            return None
        if name not in self._stored:
            self._stored[name] = self.stored_run(name)
        return self._stored[name]

    def check(
        self, cache_dir: Path | None = None, store_path: Path | None = None, keys: tuple[str, str] = ("r", "d")
    ) -> Validation:
        """`validate` of the form's fields as they are now (the Runs screen's rename and delete `keys` as bound)."""
        return validate(
            self.fields,
            self.existing,
            self.llm_ok,
            cache_dir=cache_dir,
            store_path=store_path,
            options=self.options,
            notes_memo=self._notes_memo,
            stored=self.stored(self.fields.name.strip()),
            keys=keys,
        )
