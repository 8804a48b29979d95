"""The general-agent setting: AgentHop's seven tools among out-of-domain tools (sandbox.extra_tools), end to end
through the real CLI, runner, ledger and store, and its measures computed independently on hand-made data."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from sandbox.agents.heuristic import content_words
from sandbox.datasets import open_dataset
from sandbox.extra_tools.builtin import builtin_result, builtin_tools
from sandbox.extra_tools.registry import (
    DETAILS,
    ExtraTool,
    RegistryError,
    estimated_tokens,
    load_file,
    presentation_order,
    select,
)
from sandbox.extra_tools.setting import open_extra_tools, resolve
from sandbox.prompts import TOOL_SCHEMAS, build_prompt
from sandbox.records import TOOL_NAMES, Caps
from stats import ngrams, offdomain
from stats.wilson import wilson
from storage import Store
from tests.cli_inprocess import batch

CATEGORIES = {  # the domains, each with tools of the built-in registry
    "code": ("run_python", "run_javascript", "run_sql"),
    "terminal and files": ("bash", "read_file", "write_file"),
    "web": ("web_search", "fetch_url", "browser_click"),
    "calendar and booking": ("create_calendar_event", "book_flight"),
    "retail": ("get_order_status", "cancel_order", "return_item"),
    "weather": ("get_current_weather",),
    "maps": ("get_directions", "geocode_address"),
    "math": ("calculator", "solve_equation"),
    "email": ("send_email", "search_inbox"),
}


@pytest.fixture(scope="module")
def corpus(shared_cache):
    return open_dataset("builtin", shared_cache)[0]


def _db(tmp_path) -> str:
    return str(tmp_path / "r.db")


# ------------------------------------------------------------------------------------------------ the registry


def test_builtin_registry_covers_the_domains_with_realistic_schemas():
    tools = builtin_tools()
    names = [s["name"] for s, _ in tools]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert not set(names) & set(TOOL_NAMES)
    for domain, wanted in CATEGORIES.items():
        assert set(wanted) <= set(names), domain
    for schema, _ in tools:
        assert len(schema["description"]) >= 30
        params = schema["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["type"] in ("string", "integer", "number", "boolean", "array") and prop["description"]


def test_builtin_results_are_deterministic_and_never_carry_evidence(corpus):
    """Every tool, called with placeholder arguments and with each item's own question as every string argument,
    gives the same text twice and holds none of the words that tell an item's options apart (the words an answer
    could be picked by), nor an option, the question or a paper id."""
    for schema, handler in builtin_tools():
        props = schema["parameters"]["properties"]
        for item in corpus.items:
            opts = [content_words(o) for o in item.options]
            distinctive = set().union(
                *(w - set().union(*(opts[j] for j in range(4) if j != i)) for i, w in enumerate(opts))
            )
            for args in ({k: item.question if p["type"] == "string" else 1 for k, p in props.items()}, {}):
                text = builtin_result(schema["name"], args, handler)
                assert text == builtin_result(schema["name"], dict(reversed(args.items())), handler)
                assert not content_words(text) & distinctive, (schema["name"], item.id)
                assert item.question not in text and item.seed_paper_id not in text
                assert not any(g in text for g in item.gold_paper_ids)


def _write(tmp_path, data) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


GOOD = {
    "type": "function",
    "function": {
        "name": "get_stock_price",
        "description": "Latest price of a stock.",
        "parameters": {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
    },
    "result": "AAPL 187.20 USD",
}


@pytest.mark.parametrize(
    "entry, where",
    [
        (
            {"type": "function", "function": {**GOOD["function"], "name": "other"}, "result": 3},
            "entry 1: field 'result'",
        ),
        (
            {"type": "function", "function": {**GOOD["function"], "name": "read_section"}, "result": "x"},
            "entry 1: field 'function.name': 'read_section' is one of the protocol's seven tools",
        ),
        (
            {"type": "function", "function": {**GOOD["function"], "name": "has space"}, "result": "x"},
            "entry 1: field 'function.name'",
        ),
        (GOOD, "entry 1: field 'function.name': 'get_stock_price' is listed twice"),
        (
            {
                "type": "function",
                "function": {**GOOD["function"], "name": "b", "parameters": {"type": "array"}},
                "result": "x",
            },
            "entry 1: field 'function.parameters'",
        ),
        (
            {"name": "b", "parameters": {"type": "object", "required": "ticker"}, "result": "x"},
            "entry 1: field 'parameters.required'",
        ),
        ("not a tool", "entry 1: expected an object"),
    ],
)
def test_a_bad_file_entry_is_named_by_file_index_and_field(tmp_path, entry, where):
    path = _write(tmp_path, [GOOD, entry])
    with pytest.raises(RegistryError) as exc:
        load_file(path)
    assert str(exc.value).startswith(f"{path}: ") and where in str(exc.value)


def test_a_bad_file_is_refused_by_run_with_exit_2_and_nothing_written(tmp_path, capsys):
    path = _write(tmp_path, '[{"name": "x",\n oops}]')
    db = _db(tmp_path)
    out = batch(capsys, "run", "--data", "builtin", "--run", "x", "--db", db, "--limit", "2", "--extra-tools", path)
    assert out.returncode == 2 and f"{path}: line 2: not JSON" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    store = Store(db)
    assert store.runs() == []


def test_file_registry_canned_results_and_argument_errors(tmp_path, corpus):
    path = _write(tmp_path, [GOOD])
    record = resolve(path, None, "full", 2, 0)
    assert record["source"] == "file" and record["tools"] == ["get_stock_price"] and record["where"] == path

    async def go():
        async with open_extra_tools(record) as xt:
            ok = await xt.call("get_stock_price", {"ticker": "X"})
            missing = await xt.call("get_stock_price", {})
            return ok, missing

    ok, missing = asyncio.run(go())
    assert (ok.text, ok.status) == ("AAPL 187.20 USD", "ok")
    assert missing.status == "error" and missing.text.startswith("Error calling get_stock_price: Missing or invalid")


# ------------------------------------------------------------------------------------------------ the prompt


def test_selection_is_seeded_and_nested_and_the_order_is_recorded():
    tools = [ExtraTool(s["name"], s["description"], s["parameters"]) for s, _ in builtin_tools()]
    eight, sixteen = select(tools, 8, 3), select(tools, 16, 3)
    assert eight == sixteen[:8] and eight == select(tools, 8, 3) and eight != select(tools, 8, 4)
    order = presentation_order([t.name for t in eight], 3)
    assert sorted(order) == sorted([*TOOL_NAMES, *(t.name for t in eight)]) and order != [*TOOL_NAMES]
    with pytest.raises(RegistryError, match="only 50 tools"):
        select(tools, 51, 0)


def test_the_tools_appear_in_the_tool_block_and_schemas_as_the_real_ones_do(corpus):
    record = resolve("builtin", 8, "full", 1, 5)
    item = corpus.items[0]

    async def prompt(detail: str):
        async with open_extra_tools({**resolve("builtin", 8, detail, 1, 5)}) as xt:
            return build_prompt(item, Caps(), extra_tools=xt)

    full = asyncio.run(prompt("full"))
    assert [t["name"] for t in full.tools] == record["order"]
    for schema in TOOL_SCHEMAS:  # the protocol's seven are offered unchanged
        assert schema in full.tools
    assert "You have 15 tools." in full.system and "### Other Tools (1 point each)" in full.system
    for name in record["tools"]:
        schema = next(t for t in full.tools if t["name"] == name)
        assert f"- **{name}**(" in full.system and schema["description"] in full.system
        assert set(schema) == {"name", "description", "parameters"}
    sizes = {}
    for detail in DETAILS:
        shown = asyncio.run(prompt(detail))
        sizes[detail] = estimated_tokens(shown.system + json.dumps(shown.tools))
        extra = [t for t in shown.tools if t["name"] not in TOOL_NAMES]
        if detail == "names":
            assert all("description" not in t for t in extra)
        if detail == "short":
            assert all("\n" not in t["description"] and len(t["description"]) <= 80 for t in extra)
    assert sizes["full"] > sizes["short"] > sizes["names"]
    plain = build_prompt(item, Caps())
    assert plain.tools == tuple(TOOL_SCHEMAS) and "Other Tools" not in plain.system


# ------------------------------------------------------------------------------------------------ runs


def _run(capsys, db, name, *extra, limit="12", code=0):
    out = batch(
        capsys,
        "run",
        "--data",
        "builtin",
        "--agent",
        "heuristic",
        "--run",
        name,
        "--db",
        db,
        "--limit",
        limit,
        "--quiet",
        "--format",
        "json",
        *extra,
    )
    assert out.returncode == code, out.stderr
    return out


def test_the_setting_is_part_of_the_identity_and_its_size_is_recorded(tmp_path, capsys):
    db = _db(tmp_path)
    _run(capsys, db, "g", "--extra-tools", "builtin", "--extra-tools-count", "8", "--extra-tools-detail", "short")
    run = Store(db).run("g")
    setting = run["config"]["extra_tools"]
    assert setting["count"] == 8 and setting["detail"] == "short" and setting["cost"] == 1
    assert setting["tool_block_tokens"]["extra"] > 0 and setting["schema_tokens"]["extra"] > 0
    assert run["identity"]["extra_tools"]["tools"] == setting["tools"]
    assert run["caps"]["costs"][setting["tools"][0]] == 1
    _run(capsys, db, "g", "--extra-tools", "builtin", "--extra-tools-count", "8", "--extra-tools-detail", "short")
    for other in (
        ("--extra-tools-count", "16", "--extra-tools-detail", "short"),
        ("--extra-tools-count", "8"),
        ("--extra-tools-count", "8", "--extra-tools-detail", "short", "--extra-tools-cost", "2"),
        (),
    ):
        flags = ("--extra-tools", "builtin", *other) if other else ()
        out = _run(capsys, db, "g", *flags, code=2)
        assert "exists with a different configuration" in out.stderr


def test_flags_without_a_registry_or_on_a_closed_book_run_are_refused(tmp_path, capsys):
    db = _db(tmp_path)
    assert "need --extra-tools" in _run(capsys, db, "x", "--extra-tools-count", "8", code=2).stderr
    assert (
        "closed-book" in _run(capsys, db, "x", "--extra-tools", "builtin", "--ablation", "closed-book", code=2).stderr
    )
    assert (
        "heuristic agent only" in batch(capsys, "run", "--agent", "random", "--distractible", "0.5", "--db", db).stderr
    )
    assert (
        "only 50 tools" in _run(capsys, db, "x", "--extra-tools", "builtin", "--extra-tools-count", "60", code=2).stderr
    )
    assert Store(db).runs() == []


def test_an_out_of_domain_call_obeys_the_ledger(tmp_path, capsys):
    """At 12 points a call, a 30-point budget pays two; the third is rejected at cost 0, the fourth too, and two
    consecutive rejections end the episode as `budget`."""
    db = _db(tmp_path)
    _run(
        capsys,
        db,
        "costly",
        "--extra-tools",
        "builtin",
        "--extra-tools-count",
        "4",
        "--extra-tools-cost",
        "12",
        "--distractible",
        "1",
        limit="2",
    )
    store = Store(db)
    for t in store.trajectories(store.run("costly")["id"]):
        tools = [s for s in store.steps(t["id"]) if s["kind"] == "tool"]
        assert [(s["status"], s["cost"]) for s in tools] == [("ok", 12), ("ok", 12), ("rejected", 0), ("rejected", 0)]
        assert tools[2]["text"].startswith("REJECTED: Insufficient budget (6 remaining")
        assert t["termination"] == "budget" and t["points_used"] == 24


def test_done_when_the_knob_gives_its_share_and_the_accuracy_delta_has_a_mcnemar_p(tmp_path, capsys):
    """The issue's done-when: on the built-in data, a plain run and a run among 40 built-in tools with the
    distractible heuristic (p = 0.3): the observed out-of-domain share is within the binomial interval of p, and
    `compare` gives the accuracy Δ with its exact McNemar p (checked against scipy)."""
    db = _db(tmp_path)
    p = 0.3
    _run(capsys, db, "plain", "--distractible", str(p), limit="60")
    _run(
        capsys,
        db,
        "general",
        "--distractible",
        str(p),
        "--extra-tools",
        "builtin",
        "--extra-tools-count",
        "40",
        limit="60",
    )
    store = Store(db)
    seqs = [t["tool_sequence"] for t in store.trajectories(store.run("general")["id"])]
    calls = sum(len(s) for s in seqs)
    ood = sum(n not in TOOL_NAMES for s in seqs for n in s)
    assert all(n in TOOL_NAMES for t in store.trajectories(store.run("plain")["id"]) for n in t["tool_sequence"])
    low, high = binomtest(ood, calls).proportion_ci(0.95, method="wilson")
    assert low <= p <= high, (ood, calls)
    rep = json.loads(batch(capsys, "report", "general", "--db", db, "--format", "json").stdout)["general_setting"]
    assert rep["share_counts"] == [ood, calls]
    assert rep["share_interval"] == pytest.approx([low, high])
    assert rep["against_plain"]["plain"] == "plain"
    cmp = json.loads(batch(capsys, "compare", "plain", "general", "--db", db, "--format", "json").stdout)
    acc = cmp["rows"][0]
    a = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("plain")["id"])}
    b = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("general")["id"])}
    only_a = sum(a[i] and not b[i] for i in a)
    only_b = sum(b[i] and not a[i] for i in a)
    assert acc["delta"] == pytest.approx((sum(b.values()) - sum(a.values())) / 60)
    assert acc["p"] == pytest.approx(binomtest(only_a, only_a + only_b).pvalue if only_a + only_b else 1.0)
    assert cmp["general_setting"]["a"] is None and cmp["general_setting"]["b"]["share_counts"] == [ood, calls]
    assert rep["against_plain"]["rows"][0]["delta"] == pytest.approx(acc["delta"])
    text = batch(capsys, "report", "general", "--db", db).stdout
    assert "out-of-domain call share" in text and "accuracy vs plain" in text


# ------------------------------------------------------------------------------------------------ measures


def _calls(*spec):
    return [offdomain.Call(turn, name, status, cost) for turn, name, status, cost in spec]


def test_measures_on_hand_made_trajectories():
    extra = {"x", "y"}
    trajs = [
        {
            "item_id": "a",
            "calls": _calls(
                (1, "x", "ok", 1),
                (2, "get_references", "ok", 1),
                (2, "y", "ok", 1),
                (3, "y", "rejected", 0),
                (4, "submit_answer", "ok", 0),
            ),
        },
        {"item_id": "b", "calls": _calls((1, "read_section", "ok", 5), (2, "submit_answer", "ok", 0))},
        {"item_id": "a", "calls": []},
    ]
    m = offdomain.measures(trajs, extra)
    # brute force, by hand: 3 of 7 calls; 1 of 3 trajectories; points 2 of 8; turns wholly out: t1, t3 of 6
    assert m["share"].as_list() == [3, 7]
    w = wilson(3, 7)
    assert m["share_interval"] == [w.low, w.high]
    assert m["trajectories_with_any"].as_list() == [1, 3]
    assert m["points"].as_list() == [2, 8] and m["points_per_trajectory"].value == pytest.approx(2 / 3)
    assert m["turns"].as_list() == [2, 6]
    assert m["per_tool"] == {"y": 2, "x": 1} and m["per_item"] == {"a": [3, 5], "b": [0, 2]}
    assert m["rejected"] == 1


@pytest.mark.parametrize(
    "significant, delta, share, verdict",
    [
        (True, -0.1, 0.4, "tool confusion"),
        (True, -0.1, 0.02, "context overhead"),
        (False, -0.1, 0.4, "no drop"),
        (True, 0.05, 0.4, "no drop"),
        (None, None, None, "unmeasured"),
    ],
)
def test_the_mechanism_rule(significant, delta, share, verdict):
    assert offdomain.mechanism(significant, delta, share) == verdict


def test_out_of_domain_calls_are_one_other_tool_for_the_ngrams():
    """An out-of-domain call is outside the 49-bigram family and breaks adjacency, whichever tool it was: the
    fingerprint of `ls, X, rs` is the same for every X of the registry."""
    a = ngrams.ngram_counts([["list_sections", "web_search", "read_section"]], 2)["occurrences"]
    b = ngrams.ngram_counts([["list_sections", "calculator", "read_section"]], 2)["occurrences"]
    assert a == b == {}
    assert ngrams.unknown_calls([["web_search", "think", "bash"]]) == 2


def test_registry_table_and_mechanism_in_the_panel(tmp_path, capsys):
    db = _db(tmp_path)
    _run(capsys, db, "p0", "--distractible", "0.6", limit="20")
    _run(capsys, db, "p8", "--distractible", "0.6", "--extra-tools", "builtin", "--extra-tools-count", "8", limit="20")
    panel = json.loads(batch(capsys, "report", "p0", "p8", "--panel", "--db", db, "--format", "json").stdout)
    rows = panel["registry"]["rows"]
    assert [r["run"] for r in rows] == ["p0", "p8"] and rows[0]["mechanism"] == "plain"
    p8 = rows[1]
    assert p8["count"] == 8 and p8["share"] > 0.4
    assert p8["mechanism"] == offdomain.mechanism(p8["p"] < 0.05, p8["delta"], p8["share"])
    assert "registry size" in batch(capsys, "report", "p0", "p8", "--panel", "--db", db).stdout


def test_the_registry_table_sizes_the_tools_and_reads_accuracy_on_the_common_items(tmp_path, capsys):
    """Table 8 as the study defines it, rebuilt from the store: tool tokens = the tool block and the schemas (the seven
    tools and the extras, characters / 4); the plain run is the 'irrelevant tools filtered' level; every accuracy is
    over the items its Δ and p are computed on (the plain run has 20 items, the level 12)."""
    from sandbox.prompts import TOOL_SCHEMAS, TOOLS_BLOCK

    db = _db(tmp_path)
    _run(capsys, db, "p0", "--distractible", "0.6", limit="20")
    _run(capsys, db, "p8", "--distractible", "0.6", "--extra-tools", "builtin", "--extra-tools-count", "8", limit="12")
    panel = json.loads(batch(capsys, "report", "p0", "p8", "--panel", "--db", db, "--format", "json").stdout)
    plain_row, p8_row = panel["registry"]["rows"]
    store = Store(db, readonly=True)

    def first(name):
        return {
            t["item_id"]: bool(t["correct"]) for t in store.trajectories(store.run(name)["id"]) if not t["replicate"]
        }

    plain, level = first("p0"), first("p8")
    common = plain.keys() & level.keys()
    assert len(plain) == 20 and len(common) == 12
    assert p8_row["accuracy"] == [sum(level[i] for i in common), 12]
    assert plain_row["accuracy"] == [sum(plain[i] for i in common), 12]
    assert p8_row["delta"] == pytest.approx((sum(level[i] for i in common) - sum(plain[i] for i in common)) / 12)
    seven = -(-len(TOOLS_BLOCK) // 4) + -(-len(json.dumps(TOOL_SCHEMAS)) // 4)
    setting = store.run("p8")["config"]["extra_tools"]
    assert plain_row["tool_tokens"] == seven and plain_row["detail"] == "irrelevant tools filtered"
    assert p8_row["tool_tokens"] == seven + setting["tool_block_tokens"]["extra"] + setting["schema_tokens"]["extra"]
    assert setting["schema_tokens"]["extra"] > 0  # the schemas are counted, not only the block
    assert p8_row["prompt_tokens"] is None and plain_row["prompt_tokens"] is None  # a scripted agent: not measured
    store.close()
    table = " ".join(batch(capsys, "report", "p0", "p8", "--panel", "--db", db).stdout.split())
    assert "irrelevant tools filtered" in table and f"≈{p8_row['tool_tokens']:,}" in table


def test_the_launch_form_offers_the_same_choices_and_relaunches_them(tmp_path, capsys):
    """The form's fields make the run `--batch run` makes for the same choices, and a stored run in the setting is
    relaunched (resumed) from the form with its setting."""
    from dataclasses import replace

    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields
    from workbench.tui.forms.relaunch import run_values

    values = LaunchFields(
        extra_kind="builtin",
        extra_count="8",
        extra_detail="names",
        extra_cost="2",
        distractible="0.25",
        limit="3",
        name="f",
    )
    form = validate(values, set(), llm_ok=True)
    assert form.errors == {}
    db = _db(tmp_path)
    _run(
        capsys,
        db,
        "f",
        "--extra-tools",
        "builtin",
        "--extra-tools-count",
        "8",
        "--extra-tools-detail",
        "names",
        "--extra-tools-cost",
        "2",
        "--distractible",
        "0.25",
        "--workers",
        "4",
        limit="3",
    )
    stored = Store(db).run("f")
    assert form.spec.identity(stored["identity"]["dataset_fingerprint"]) == stored["identity"]
    again, _options = run_values(stored)
    assert (again.extra_kind, again.extra_count, again.extra_detail, again.distractible) == (
        "builtin",
        "8",
        "names",
        "0.25",
    )
    bad = validate(replace(values, extra_kind="file", extra_source=str(tmp_path / "none.json")), set(), llm_ok=True)
    assert "no such file" in bad.errors["extra_source"]
    assert "distractible" in validate(replace(values, distractible="x"), set(), llm_ok=True).errors


def test_an_llm_sees_the_tools_in_the_recorded_order_and_its_call_is_answered(tmp_path, capsys, monkeypatch):
    """Through the native client against the real local OpenAI-compatible server: the request's tools are the
    seven and the extras in the recorded order (the seven unchanged), the system prompt lists the extras, and a
    call to one is answered by the registry, charged and counted out of domain."""
    from tests.openai_server import FakeOpenAI, tool_reply

    def brain(req, n):
        if n == 0:
            return tool_reply(("get_current_weather", {"location": "Lisbon"}))
        return tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    db = _db(tmp_path)
    with FakeOpenAI(brain) as srv:
        out = batch(
            capsys,
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/test-model",
            "--base-url",
            srv.url,
            "--ids",
            "st_0001",
            "--run",
            "l",
            "--db",
            db,
            "--quiet",
            "--format",
            "json",
            "--extra-tools",
            "builtin",
            "--extra-tools-count",
            "50",
            "--extra-tools-detail",
            "short",
        )
        assert out.returncode == 0, out.stderr
        first = srv.requests[0]
    store = Store(db)
    run = store.run("l")
    setting = run["config"]["extra_tools"]
    sent = [t["function"]["name"] for t in first["tools"]]
    assert sent == setting["order"] and "get_current_weather" in setting["tools"]
    for schema in TOOL_SCHEMAS:
        assert {"type": "function", "function": schema} in first["tools"]
    system = first["messages"][0]["content"]
    assert "You have 57 tools." in system and "- **get_current_weather**(location, units=…) — " in system
    steps = [s for s in store.steps(store.trajectories(run["id"])[0]["id"]) if s["kind"] == "tool"]
    assert (steps[0]["tool_name"], steps[0]["status"], steps[0]["cost"]) == ("get_current_weather", "ok", 1)
    assert "°C" in steps[0]["text"]
    rep = json.loads(batch(capsys, "report", "l", "--db", db, "--format", "json").stdout)["general_setting"]
    assert rep["share_counts"] == [1, 2] and rep["points"] == [1, 1]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([s["name"] for s, _ in builtin_tools()]), args=JSON)
def test_no_arguments_make_a_builtin_tool_raise(name, args):
    """Whatever the agent sends, the call ends as the tool's text or the protocol's `Error calling …`."""
    record = resolve("builtin", None, "full", 1, 0)

    async def go():
        async with open_extra_tools(record) as xt:
            return await xt.call(name, args)

    outcome = asyncio.run(go())
    assert outcome.status in ("ok", "error") and outcome.text
    if outcome.status == "error":
        assert outcome.text.startswith(f"Error calling {name}: ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSON)
def test_a_tools_file_is_loaded_or_refused_in_one_line(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("f") / "t.json"
    path.write_text(json.dumps(data))
    try:
        tools = load_file(path)
    except RegistryError as exc:
        assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
    else:
        assert tools and all(t.canned is not None and t.name not in TOOL_NAMES for t in tools)


def test_transitions_with_one_other_tool_by_brute_force():
    seqs = [
        ["get_references", "web_search", "bash", "read_section", "made_up", "submit_answer"],
        ["list_sections", "calculator", "submit_answer"],
        [],
    ]
    tm = offdomain.transitions_with_other(seqs, {"web_search", "bash", "calculator"})
    names = tm["tools"]
    assert names[-1] == "other" and names[:-1] == list(ngrams.TOOLS)
    want = {
        ("get_references", "other"): 1,
        ("other", "other"): 1,
        ("other", "read_section"): 1,
        ("list_sections", "other"): 1,
        ("other", "submit_answer"): 1,
    }  # made_up breaks read → submit
    got = {(names[i], names[j]): c for i, row in enumerate(tm["counts"]) for j, c in enumerate(row) if c}
    assert got == want
    assert tm["probabilities"][names.index("other")] == pytest.approx([0, 0, 0, 0, 1 / 3, 0, 1 / 3, 1 / 3])
    plain = [["get_references", "list_sections", "read_section", "submit_answer"]]
    seven = offdomain.transitions_with_other(plain, set())
    assert [row[:7] for row in seven["counts"][:7]] == ngrams.transition_matrix(plain)["counts"]


def test_a_scale_tools_level_is_compared_with_its_group_plain_run(tmp_path, capsys):
    db = _db(tmp_path)
    out = batch(
        capsys,
        "scale",
        "tools",
        "--counts",
        "0,8",
        "--detail",
        "names",
        "--run",
        "s",
        "--db",
        db,
        "--limit",
        "6",
        "--quiet",
        "--distractible",
        "0.5",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    table = json.loads(out.stdout)
    assert [r["run"] for r in table["rows"]] == ["s@plain", "s@tools8-names"] and table["plain"] == "s@plain"
    rep = json.loads(batch(capsys, "report", "s@tools8-names", "--db", db, "--format", "json").stdout)
    assert rep["general_setting"]["against_plain"]["plain"] == "s@plain"
    bad = batch(capsys, "scale", "tools", "--counts", "0,8", "--run", "s", "--db", db, "--extra-tools-count", "8")
    assert bad.returncode == 2 and "--counts and --detail" in bad.stderr


def test_a_tools_file_changed_since_the_run_started_is_refused_on_resume(tmp_path, capsys):
    path = _write(tmp_path, [GOOD])
    db = _db(tmp_path)
    _run(capsys, db, "f", "--extra-tools", path, limit="2")
    _run(capsys, db, "f", "--extra-tools", path, limit="2")  # unchanged: resumes
    _write(tmp_path, [{**GOOD, "result": "MSFT 402.10 USD"}])
    out = _run(capsys, db, "f", "--extra-tools", path, limit="2", code=2)
    assert "exists with a different configuration" in out.stderr


def test_report_table_shows_the_items_most_out_of_domain():
    """The per-item out-of-domain shares reach the table, highest share first (not only the JSON)."""
    from workbench.views.general import general_rows

    g = {
        "setting": {"source": "builtin", "count": 8, "detail": "full", "cost": 1, "seed": 0},
        "share_counts": [3, 10],
        "trajectories_with_any": [2, 4],
        "points": [3, 20],
        "points_per_trajectory": 0.75,
        "turns": [3, 8],
        "turns_per_trajectory": 0.75,
        "per_tool": {},
        "per_item": {"a": [1, 4], "b": [2, 2], "c": [0, 4]},
    }
    rows = {r[1]: r[4] for r in general_rows({"general_setting": g})}
    line = rows["items most out of domain"]
    assert line.index("b ") < line.index("a ") and "c " not in line and "2/2" in line and "1/4" in line


def test_the_registry_table_shows_the_measured_first_call_input_of_a_model_run(tmp_path, capsys, monkeypatch):
    """For a model's runs the table carries the input of each trajectory's first call as the server counted it
    (median), rebuilt here from the stored steps; the extras make it larger than the plain run's."""
    from statistics import median

    from tests.openai_server import FakeOpenAI, tool_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def brain(req, n):  # the server counts the request's size: the extra tools' schemas and block show
        size = len(json.dumps(req["messages"])) + len(json.dumps(req.get("tools") or []))
        return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}), prompt_tokens=size // 4, cached=40)

    db = _db(tmp_path)
    with FakeOpenAI(brain) as srv:
        llm = ("--agent", "llm", "--model", "openai/gpt-4.1-mini", "--base-url", srv.url, "--limit", "3", "--quiet")
        assert batch(capsys, "run", "--run", "m0", "--db", db, *llm).returncode == 0
        extra = ("--extra-tools", "builtin", "--extra-tools-count", "16")
        assert batch(capsys, "run", "--run", "m16", "--db", db, *llm, *extra).returncode == 0
    panel = json.loads(batch(capsys, "report", "m0", "m16", "--panel", "--db", db, "--format", "json").stdout)
    rows = {r["run"]: r for r in panel["registry"]["rows"]}
    store = Store(db, readonly=True)
    for name in ("m0", "m16"):
        firsts = []
        for t in store.trajectories(store.run(name)["id"]):
            first = next(s for s in store.steps(t["id"]) if s["kind"] == "assistant")
            usage = first["usage"]
            firsts.append(usage["prompt"] + usage["cache_read"] + usage["cache_creation"])
        assert rows[name]["prompt_tokens"] == median(firsts)
    store.close()
    assert rows["m16"]["prompt_tokens"] > rows["m0"]["prompt_tokens"] + 500  # 16 schemas and their block
