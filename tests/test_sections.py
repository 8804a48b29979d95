"""Alias scheme, header normalisation and section resolution (reference §2.5), including its quirks."""
from hypothesis import given, strategies as st

from sandbox.sections import alias, alias_index, norm, resolve, resolve_label

HEADERS = ["1 Introduction", "3 Method", "3.1 Method Details", "Apdx_A: Proofs", "Section 5"]


def test_alias_bijective_base26():
    assert [alias(i) for i in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]


@given(st.integers(min_value=0, max_value=18277))
def test_alias_roundtrip(i):
    assert alias_index(alias(i)) == i


def test_norm_strips_numbering_roman_and_appendix_prefixes():
    assert norm("Apdx_B.2: Extra Results") == "extra results"
    assert norm("Apdx: Implementation") == "implementation"
    assert norm("IV-B Details") == "details"
    assert norm("5.3.1. Rating Prediction") == "rating prediction"
    assert norm("3 Method – Overview") == "method overview"
    assert norm("civil engineering") == "engineering"  # the reference's roman-numeral quirk


def test_resolution_order():
    assert resolve("(b)", HEADERS) == 1
    assert resolve("B", HEADERS) == 1
    assert resolve("3 method", HEADERS) == 1  # exact, case-insensitive, before substring ambiguity
    assert resolve("Proofs", HEADERS) == 3  # unique substring
    assert resolve("method", HEADERS) == 1  # normalised exact ("3 Method") wins over substrings
    assert resolve("Meth", HEADERS) is None  # ambiguous substring = not found
    assert resolve("Method Details", HEADERS) == 2
    assert resolve("  ", HEADERS) is None
    assert resolve("B2", HEADERS) is None  # digits never match the alias rule
    assert resolve("ZZ", HEADERS) is None  # out-of-range alias falls through, then nothing matches


def test_single_roman_letters_are_aliases_first():
    headers = [f"H{i}" for i in range(8)] + ["IV Method", "V Results"]
    assert resolve("I", headers) == 8  # the 9th section, not "IV Method"
    assert resolve("IV", headers) == 8  # alias IV is out of range; then the unique raw substring


def test_label_resolution_methods():
    bodies = ["intro", "Overview.\n3.2 Frequency-Domain Decomposition\nWe decompose.", "d", "p", "x"]
    assert resolve_label("3 Method", HEADERS, bodies) == (1, "exact")
    assert resolve_label("Method: Details", HEADERS, bodies) == (2, "normalised")
    assert resolve_label("3.2 Frequency-Domain Decomposition", HEADERS, bodies) == (1, "body_heading")
    assert resolve_label("Nothing Like It", HEADERS, bodies) == (None, "unresolved")


# ---------------------------------------------------------------- the body-heading rule (PROTOCOL §3, step 4)

REVIEW_HEADERS = ["1 Introduction", "3 Method", "4 Results"]
REVIEW_BODIES = [
    "We begin here. The details are in 3.2 Frequency-Domain Decomposition below, and they are good.",
    "Overview.\n3.2 Frequency-Domain Decomposition\nWe decompose because it preserves phase.",
    "Results are good.",
]


def test_prose_mentions_are_not_headings():
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, REVIEW_BODIES) == (1, "body_heading")
    assert resolve_label("Frequency-Domain Decomposition", REVIEW_HEADERS, REVIEW_BODIES) == (1, "body_heading")
    assert resolve_label("decompose", REVIEW_HEADERS, REVIEW_BODIES) == (None, "unresolved")
    assert resolve_label("are good", REVIEW_HEADERS, REVIEW_BODIES) == (None, "unresolved")
    assert resolve_label("Results are good", REVIEW_HEADERS, REVIEW_BODIES) == (None, "unresolved")  # a sentence


def test_numbered_heading_with_text_run_on():
    bodies = ["Intro.", "Overview.\n3.2 Frequency-Domain Decomposition We decompose because it preserves phase.", "x"]
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, bodies) == (1, "body_heading")
    prose = ["Intro.", "Overview.\n3.2 Frequency-Domain Decomposition is described below.", "x"]
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, prose) == (None, "unresolved")
    unnumbered = ["Intro.", "Frequency-Domain Decomposition We decompose because it preserves phase.", "x"]
    assert resolve_label("Frequency-Domain Decomposition", REVIEW_HEADERS, unnumbered) == (None, "unresolved")


def test_a_numbered_heading_line_is_preferred_and_ties_are_ambiguous():
    bodies = ["Frequency-Domain Decomposition", "Overview.\n3.2 Frequency-Domain Decomposition\nWe decompose.", "x"]
    assert resolve_label("Frequency-Domain Decomposition", REVIEW_HEADERS, bodies) == (1, "body_heading")
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, bodies) == (1, "body_heading")
    twice = ["a\n3.2 Frequency-Domain Decomposition\nb", "Overview.\n3.2 Frequency-Domain Decomposition\nc", "x"]
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, twice) == (None, "unresolved")
    # the verbatim label beats a line that only equals it up to numbering
    renumbered = ["a\n4.1 Frequency-Domain Decomposition\nb", "Overview.\n3.2 Frequency-Domain Decomposition\nc", "x"]
    assert resolve_label("3.2 Frequency-Domain Decomposition", REVIEW_HEADERS, renumbered) == (1, "body_heading")


# Label words never occur in headers (so steps 1-3 never fire); prose words are lower-case and are not
# roman-numeral-like (norm strips a leading "vi " or "ill ", a quirk of the reference kept on purpose).
LABEL_WORDS = st.sampled_from(["Frequency", "Domain", "Decomposition", "Spectral", "Gating", "Kernel", "Pooling"])
PROSE_WORDS = st.sampled_from(["we", "the", "in", "see", "below", "our", "approach", "and", "a", "are", "good",
                               "results", "details", "follow", "as", "shown"])
NUMBERING = st.sampled_from(["", "3.2 ", "5.3.1. ", "IV-B ", "II ", "Apdx_A.1: ", "Apdx: "])
HEADER_POOL = ["1 Introduction", "2 Related Work", "3 Method", "4 Experiments", "5 Conclusion", "Apdx_A: Proofs"]


@st.composite
def heading_cases(draw):
    title = " ".join(draw(st.lists(LABEL_WORDS, min_size=1, max_size=4, unique=True)))
    label = draw(NUMBERING) + title
    n = draw(st.integers(min_value=1, max_value=5))
    headers = HEADER_POOL[:n]
    prose = lambda k: " ".join(draw(st.lists(PROSE_WORDS, min_size=k, max_size=6)))  # noqa: E731
    bodies = []
    for _ in range(n):  # every body mentions the label in running text, one way or another
        way = draw(st.sampled_from(["mid", "end", "lower_run_on"]))
        if way == "mid":
            line = f"{prose(1)} {label} {prose(1)}."
        elif way == "end":
            line = f"{prose(1)} {label}"
        else:
            line = f"{label} {prose(1)}."
        bodies.append("\n".join([prose(0), line, prose(0)]))
    return label, title, headers, bodies


@given(heading_cases())
def test_prose_mentions_never_resolve(case):
    label, _, headers, bodies = case
    assert resolve_label(label, headers, bodies) == (None, "unresolved")


@given(heading_cases(), st.data())
def test_a_real_heading_line_always_resolves(case, data):
    label, title, headers, bodies = case
    k = data.draw(st.integers(min_value=0, max_value=len(bodies) - 1))
    numbered = label != title
    run_on = numbered and data.draw(st.booleans())
    heading = f"{label} We split the signal." if run_on else label
    lines = bodies[k].split("\n")
    bodies = list(bodies)
    bodies[k] = "\n".join([lines[0], heading, *lines[1:]])
    assert resolve_label(label, headers, bodies) == (k, "body_heading")
    if not run_on:  # a heading alone on its line also serves the label written without its numbering
        assert resolve_label(title, headers, bodies) == (k, "body_heading")
