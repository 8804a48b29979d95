"""The judges read the scaling study's answer tags as well as ours, and a verdict left unread is counted, never
silently a "keep the leader"."""

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.judges import parse_choice, parse_judgment
from storage import Store
from tests.openai_server import FakeOpenAI, text_reply
from workbench.cli import main


def test_both_pairwise_tags_are_read_the_last_deciding():
    assert parse_choice("<ranking>2</ranking>") is True and parse_choice("<ranking> 1 </ranking>") is False
    assert parse_choice("<choice>2</choice>") is True and parse_choice("<choice>1</choice>") is False
    assert parse_choice("Format: <ranking>1</ranking>. My answer: <ranking>2</ranking>") is True
    assert parse_choice("<ranking>2</choice>") is None  # mismatched tags are not a verdict
    assert parse_choice("both are fine") is None
    assert parse_judgment("Format <judgment>Correct</judgment> … so: <judgment>Wrong</judgment>") is False


@given(st.text(alphabet="<>/rankigchoe12 ", max_size=40))
def test_a_pairwise_verdict_is_a_well_formed_tag_or_nothing(text):
    value = parse_choice(text)
    if value is not None:
        assert f"<ranking>{1 + value}</ranking>".replace(" ", "") in text.replace(" ", "") or (
            f"<choice>{1 + value}</choice>" in text.replace(" ", "")
        )


def _judge_brain(pairwise_reply: str):
    def brain(req, n):
        system = req["messages"][0]["content"]
        if "<judgment>" in system:
            return text_reply("Checked. <judgment>Correct</judgment>")
        return text_reply(pairwise_reply)

    return brain


def _parallel(db, srv_url, *extra):
    return main(
        [
            "--batch",
            "scale",
            "parallel",
            "--agent",
            "random",
            "--k",
            "1,2,4",
            "--run",
            "p",
            "--db",
            str(db),
            "--quiet",
            "--limit",
            "8",
            "--format",
            "json",
            "--orders",
            "1",
            "--judge",
            "openai/judge-model",
            "--judge-base-url",
            srv_url,
            *extra,
        ]
    )


def test_the_studys_ranking_tag_makes_bump_sort_pick_the_last_sample(tmp_path, capsys):
    """Under `--orders 1` the samples meet in their own order; a judge always answering `<ranking>2</ranking>` lets
    every challenger win, so pairwise at k = K is the last sample's correctness, item by item."""
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(_judge_brain("The second agent read the gold section. <ranking>2</ranking>")) as srv:
        assert _parallel(db, srv.url) == 0
    rep = json.loads(capsys.readouterr().out)
    store = Store(db, readonly=True)
    rows = store.trajectories(store.run("p")["id"])
    by_item: dict[str, dict[int, bool]] = {}
    for t in rows:
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = bool(t["correct"])
    picks = {"last": {}, "first": {}}
    for k in (2, 4):
        blocks = list(itertools.combinations(range(4), k))  # C(4, k) ≤ 256: every k-subset, in the samples' order
        for rule, pick in (("last", max), ("first", min)):
            picks[rule][k] = sum(v[pick(b)] for v in by_item.values() for b in blocks) / (len(by_item) * len(blocks))
    assert picks["last"] != picks["first"]  # the data tells the last sample from the first
    for k in (2, 4):
        assert next(r for r in rep["per_k"] if r["k"] == k)["pairwise"] == pytest.approx(picks["last"][k])
    verdicts = [r[0] for r in store.conn.execute("SELECT verdict FROM judgments WHERE kind = 'pairwise'")]
    assert verdicts and all(v == 1 for v in verdicts)
    (judge,) = rep["judges"]
    assert judge["pairwise"] == len(verdicts) and judge["pairwise_unparsed"] == 0
    store.close()


def test_unparsed_pairwise_verdicts_are_counted_and_shown(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(_judge_brain("Both look fine to me.")) as srv:
        assert _parallel(db, srv.url) == 0
    rep = json.loads(capsys.readouterr().out)
    (judge,) = rep["judges"]
    store = Store(db, readonly=True)
    stored = store.conn.execute("SELECT COUNT(*) FROM judgments WHERE kind = 'pairwise' AND verdict IS NULL").fetchone()
    store.close()
    assert judge["pairwise_unparsed"] == stored[0] == judge["pairwise"] > 0
    with FakeOpenAI(_judge_brain("Both look fine to me.")) as srv:
        assert _parallel(db, srv.url, "--format", "table") == 0
    table = capsys.readouterr().out
    assert "pairwise (unparsed)" in table and f"0 ({stored[0]})" in table


def test_a_misspelt_judge_is_refused_with_the_nearest_word(tmp_path, capsys):
    """`--judge evidnce` is no model: exit 2 with a suggestion, before any run or store is made."""
    from tests.cli_inprocess import batch

    db = tmp_path / "s.sqlite"
    proc = batch(capsys, "scale", "parallel", "--k", "1,2", "--run", "p", "--db", str(db), "--judge", "evidnce")
    assert proc.returncode == 2
    assert "did you mean 'evidence'?" in proc.stderr and "Traceback" not in proc.stderr
    assert not db.exists()
    other = batch(capsys, "scale", "parallel", "--k", "1,2", "--run", "p", "--db", str(db), "--judge", "gpt4")
    assert other.returncode == 2 and "provider/model string" in other.stderr and "did you mean" not in other.stderr


def test_the_study_form_says_the_same_of_a_misspelt_judge():
    import pytest

    from workbench.service.launch import LaunchRequest
    from workbench.service.scaling import StudyRequest, plan_study
    from workbench.service.scaling.sequential import ScalingInputError

    with pytest.raises(ScalingInputError, match="did you mean 'none'"):
        plan_study(StudyRequest("parallel", LaunchRequest(name="p"), judge="nnoe"))


def _evidence(db, k, *extra):
    return (
        "scale",
        "parallel",
        "--agent",
        "random",
        "--k",
        k,
        "--run",
        "p",
        "--db",
        str(db),
        "--limit",
        "4",
        "--format",
        "json",
        *extra,
    )


def test_judging_a_finished_run_shows_its_progress_and_extending_k_keeps_the_trials(tmp_path, capsys):
    """After "already done" the judging says how far it is (stderr, not --quiet); a larger K asked without
    --judge-trials keeps the trial section, read from the stored trial verdicts (the new samples' counted as not
    stored, never asked for)."""
    from tests.cli_inprocess import batch

    db = tmp_path / "s.sqlite"
    first = batch(capsys, *_evidence(db, "1,2", "--judge-trials", "2", "--quiet"))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["judge_trials"]["trials"] == 2
    again = batch(capsys, *_evidence(db, "1,2", "--judge-trials", "2"))
    assert "already done" in again.stderr
    lines = [line for line in again.stderr.splitlines() if line.startswith("judging 'p'")]
    assert lines[-1] == "judging 'p' (evidence#trial1): 4/4 items" and any("(evidence): 4/4" in x for x in lines)
    store = Store(db, readonly=True)
    before = store.conn.execute("SELECT COUNT(*) FROM judgments WHERE judge = 'evidence#trial1'").fetchone()[0]
    store.close()
    wider = batch(capsys, *_evidence(db, "1,2,3", "--quiet"))
    assert wider.returncode == 0, wider.stderr
    trials = json.loads(wider.stdout)["judge_trials"]
    assert trials is not None and trials["trials"] == 2
    store = Store(db, readonly=True)
    after = store.conn.execute("SELECT COUNT(*) FROM judgments WHERE judge = 'evidence#trial1'").fetchone()[0]
    store.close()
    assert after == before  # the recorded trial was read, not asked again
    # the third sample of each item has no trial-1 verdict: counted, and no per-k spread over incomplete trials
    assert trials["verdicts_missing"] >= 4 and trials["per_k"] is None
    assert trials["agreement"]["samples"] == 4 * 3


def test_verdicts_stored_unparsed_are_read_again_from_their_replies(tmp_path, capsys):
    """A store judged before the study's tags were read holds `<ranking>2</ranking>` replies as unparsed verdicts:
    reading the run again parses the stored replies (no judge is asked), and the numbers are the parsed ones."""
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(_judge_brain("<ranking>2</ranking>")) as srv:
        assert _parallel(db, srv.url) == 0
        parsed = json.loads(capsys.readouterr().out)
        store = Store(db)
        store.conn.execute("UPDATE judgments SET verdict = NULL")  # what the tag-blind parser stored
        store.conn.commit()
        store.close()
        asked = len(srv.requests)
        assert _parallel(db, srv.url) == 0
        assert len(srv.requests) == asked  # every verdict was in the store
    again = json.loads(capsys.readouterr().out)
    assert [r["pairwise"] for r in again["per_k"]] == [r["pairwise"] for r in parsed["per_k"]]
    (judge,) = again["judges"]
    assert judge["pairwise_unparsed"] == 0 and judge["unparsed"] == 0
