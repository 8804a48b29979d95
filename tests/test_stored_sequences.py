"""The tool sequences as the store keeps them (JSON text) read into stats' codes by the reports layer."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stats.ngrams import TOOLS

NAMES = st.one_of(
    st.sampled_from(TOOLS),
    st.sampled_from(['bo"gus', 'x\\"read_section', '"think"', "é", "read_section\\"]),
    st.text(max_size=6),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(NAMES, max_size=8)), max_size=8))
def test_encoding_stored_json_equals_encoding_the_names(seqs):
    """The fast path (codes substituted in the JSON text) and the names give the same arrays, whatever the
    names hold (quotes, backslashes, tool names inside other strings)."""
    import json

    from stats.ngrams import Encoded
    from workbench.service.reports.run import encoded_sequences

    texts = [None if s is None else json.dumps(s, ensure_ascii=bool(len(s) % 2)) for s in seqs]
    fast = encoded_sequences(texts)
    slow = Encoded.of([s or [] for s in seqs])
    assert (
        fast.n == slow.n and fast.codes.tolist() == slow.codes.tolist() and fast.owner.tolist() == slow.owner.tolist()
    )
