"""The agent's own words: a provider's reasoning kept apart from its content, from the wire to the store."""

from __future__ import annotations

import asyncio
import json
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec
from sandbox.words import ANSWER, THINKING, Words, merge_reasoning, reasoning_span, split_words
from storage import Store
from storage.schema import MIGRATIONS
from tests.conftest import G
from tests.openai_server import FakeOpenAI, Reply, completion, tool_reply
from tests.test_llm_agent import FAST

texts = st.text(alphabet=st.sampled_from("ab [thinking]\n[answer]é"), max_size=60) | st.none()


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_a_merged_text_splits_back_into_its_reasoning_and_content(content, reasoning):
    text = merge_reasoning(content, reasoning)
    words = split_words(text, reasoning_span(text, reasoning))
    if reasoning and content:
        assert words == Words(reasoning, content)
    elif reasoning:
        assert words == Words(reasoning, "")
    else:  # even content that itself reads "[thinking] … [answer] …" stays content
        assert words == Words("", content or "")


def test_steps_stored_before_the_span_fall_back_to_the_logged_marks():
    assert split_words(f"{THINKING}why{ANSWER}what", None) == Words("why", "what")
    assert split_words("just text", None) == Words("", "just text")
    assert split_words(f"{THINKING}why{ANSWER}what", 0) == Words("", f"{THINKING}why{ANSWER}what")


def test_an_agent_s_own_text_that_is_not_a_merge_has_no_reasoning_span():
    assert reasoning_span("content only", "some reasoning") == 0 and reasoning_span(None, "r") == 0


REASONING = "The seed cites [b]two[/b] papers;\nI should list the gold one's sections first."


def brain(req, n):
    """Reasoning with content and a call, then reasoning alone with a call, then a plain submit."""

    def call(name, args, content, reasoning):
        msg = {
            "role": "assistant",
            "content": content,
            "reasoning_content": reasoning,
            "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            ],
        }
        return Reply(body=completion(msg))

    if n == 0:
        return call("list_sections", {"paper_id": G}, "Listing the sections.", REASONING)
    if n == 1:
        return call("read_section", {"paper_id": G, "section": "A"}, None, "Only thinking here.")
    return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))


def test_a_provider_s_reasoning_is_stored_apart_from_its_content(mini_corpus, tmp_path):
    with FakeOpenAI(brain) as srv:
        store = Store(tmp_path / "s.sqlite")
        spec = RunSpec(
            name="thinker",
            dataset="t",
            agent="llm",
            model="openai/test-model",
            workers=1,
            retry=FAST,
            attempt_backoff_s=0,
            agent_options={"base_url": srv.url},
            limit=1,
            caps=Caps(),
        )
        asyncio.run(Runner(spec, mini_corpus, store).run())
    (traj,) = store.trajectories(store.run("thinker")["id"])
    said = [split_words(s["text"], s["reasoning_chars"]) for s in store.steps(traj["id"]) if s["kind"] == "assistant"]
    assert said == [Words(REASONING, "Listing the sections."), Words("Only thinking here.", ""), Words("", "")]
    # the logged text is still the reference's
    assert store.steps(traj["id"])[0]["text"] == f"{THINKING}{REASONING}{ANSWER}Listing the sections."
    tools = [s for s in store.steps(traj["id"]) if s["kind"] == "tool"]
    assert all(s["reasoning_chars"] is None for s in tools)
    store.close()


def test_a_store_from_before_the_span_opens_and_its_steps_read_as_logged(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for number, migration in enumerate(MIGRATIONS[:7]):
        db.executescript(migration)
        db.execute(f"PRAGMA user_version = {number + 1}")
    db.execute(
        "INSERT INTO runs (id, name, agent, dataset, dataset_fingerprint, caps, config, identity, version, "
        "created_at) VALUES (1, 'old', 'llm', 't', 'f', '{}', '{}', 'i', 'v', 'now')"
    )
    db.execute("INSERT INTO trajectories (id, run_id, item_id) VALUES (1, 1, 'st_0001')")
    db.execute(
        "INSERT INTO steps (trajectory_id, idx, turn, kind, text, points_used, points_left, tokens, rejections)"
        " VALUES (1, 0, 1, 'assistant', ?, 0, 30, 0, 0)",
        (f"{THINKING}old why{ANSWER}old what",),
    )
    db.commit()
    db.close()
    store = Store(path)
    (step,) = store.steps(1)
    assert step["reasoning_chars"] is None
    assert split_words(step["text"], step["reasoning_chars"]) == Words("old why", "old what")
    store.close()
