"""The general-agent setting's blocks (docs/general-setting.md): what a report shows of a run's setting, its
out-of-domain tool use, and the comparison with its plain counterpart, as `workbench.service.reports.offdomain`
and `workbench.service.reports.general` fill them; a run report and a comparison carry them."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from workbench.service.records.ratio import Pair

if TYPE_CHECKING:  # stats' record type by name only: importing stats at run time would load numpy
    from stats.ngrams import TransitionMatrix


class TokenSplit(TypedDict):
    """Estimated tokens (characters / 4) of the protocol's seven tools and of the setting's extra tools."""

    protocol: int
    extra: int


class SettingShown(TypedDict):
    """What a report shows of a run's general-agent setting (`sandbox.extra_tools.registry.setting_record`, None
    where the record lacks the field): where the tools come from, how many, how described, their cost, the
    order seed, the registry's size and its tokens in the prompt."""

    source: str | None
    count: int | None
    detail: str | None
    cost: int | None
    seed: int | None
    registry_size: int | None
    tool_block_tokens: TokenSplit | None
    schema_tokens: TokenSplit | None
    tokens_estimated: bool | None


class OffDomainMeasures(TypedDict):
    """A run's out-of-domain tool use (`reports.offdomain.offdomain_measures`): the share of calls to the extra
    tools (with its Wilson interval), of trajectories with one, of points and turns; by tool and by item."""

    setting: SettingShown
    share: float | None
    share_counts: Pair
    share_interval: list[float] | None
    trajectories_with_any: Pair
    points: Pair
    points_per_trajectory: float | None
    turns: Pair
    turns_per_trajectory: float | None
    per_tool: dict[str, int]
    per_item: dict[str, list[int]]  # item → [out-of-domain calls, calls]
    rejected: int


class PlainRow(TypedDict):
    """One axis of a run against its plain counterpart (a compare row's values, its Δ, interval and McNemar p)."""

    axis: str
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    n: int | None


class AgainstPlain(TypedDict):
    plain: str
    run: str
    n_common: int
    rows: list[PlainRow]


class GeneralBlock(OffDomainMeasures):
    """What `report` adds for a run in the general-agent setting: its measures, the comparison with its plain
    counterpart (None: none in the store) and its transitions with the out-of-domain calls as one `other` tool."""

    against_plain: AgainstPlain | None
    transitions: TransitionMatrix
