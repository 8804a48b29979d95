"""The error, API-error, prompt-with-cache and cache-hit figures of `stats.axes`, against brute force on random
hand-made records (issue 22: a failure is never hidden, and cache reads are shown beside the protocol's count)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stats import axes

record = st.fixed_dictionaries(
    {
        "termination": st.sampled_from(axes.TERMINATIONS),
        "api_errors": st.integers(0, 6) | st.none(),
        "prompt_tokens": st.integers(0, 5000),
        "cache_read_tokens": st.integers(0, 5000),
        "cache_creation_tokens": st.integers(0, 500),
        "kind": st.sampled_from(["st", "mt"]),
    }
)


@settings(max_examples=100, deadline=None)
@given(st.lists(record, min_size=1, max_size=30))
def test_against_brute_force(records):
    resource = axes.four_axes(records)["resource"]
    n = len(records)
    assert resource["error_rate"].as_list() == [sum(r["termination"] == "error" for r in records), n]
    assert resource["api_error_rate"].as_list() == [sum(bool(r["api_errors"]) for r in records), n]
    sent = [r["prompt_tokens"] + r["cache_read_tokens"] + r["cache_creation_tokens"] for r in records]
    assert resource["avg_prompt_tokens"].as_list() == [sum(sent), n]
    assert resource["cache_hit_rate"].as_list() == [sum(r["cache_read_tokens"] for r in records), sum(sent)]
    # an episode that ended in error by a refusal met an API error; the API error rate is never the smaller
    # when every error ending came from one
    if all(r["api_errors"] for r in records if r["termination"] == "error"):
        assert resource["api_error_rate"].num >= resource["error_rate"].num


def test_the_interval_terms_agree_with_the_rates():
    records = [
        {"termination": "error", "api_errors": 1},
        {"termination": "answer", "api_errors": 2},
        {"termination": "answer", "api_errors": 0},
    ]
    table = axes.Table.of(records)
    num, den = axes.ratio_terms(table)["api_error_rate"]
    assert list(num) == [1, 1, 0] and list(den) == [1, 1, 1]
