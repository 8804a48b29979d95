"""Alias scheme, header normalisation and section resolution (docs/protocol.md#rules), including its quirks; label
resolution as the authors' audit pipeline does it (docs/protocol.md "Section labels")."""

from hypothesis import given
from hypothesis import strategies as st

from sandbox.sections import LABEL_METHODS, alias, alias_index, label_norm, norm, resolve, resolve_label

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


# ---------------------------------------------------------------- label resolution (docs/protocol.md "Section labels")

METHOD_HEADERS = ["1 Introduction", "2 Related Work", "3 Method", "4 Experiments", "Apdx_A: Proofs"]
METHOD_BODIES = [
    "We begin. Our results follow.",
    "Prior work exists.",
    "We first give an overview of the model. 3.2 Frequency-Domain Decomposition We split the signal into bands, "
    "which preserves phase.",
    "Experiments use three seeds.",
    "The proofs follow.",
]


def test_label_norm_follows_the_pipeline():
    assert label_norm("III-B Spectral Gating") == "spectral gating"
    assert label_norm("IIIB Spectral Gating") == "spectral gating"  # the pipeline's roman pattern; `norm` keeps it
    assert norm("IIIB Spectral Gating") == "iiib spectral gating"
    assert label_norm("Apdx_A.1: Proof of Lemma 2") == "proof of lemma 2"


def test_each_step_in_order_with_its_method():
    h, b = METHOD_HEADERS, METHOD_BODIES
    assert resolve_label("3 method", h, b) == (2, "exact")
    assert resolve_label("Method", h, b) == (2, "normalised")
    assert resolve_label("Proof", h, b) == (4, "substring")  # raw substring, label in header
    assert resolve_label("4 Experiments and Analysis", h, b) == (3, "substring")  # header in label
    assert resolve_label("Method – Overview", h, b) == (2, "substring")  # normalised only: "method" ⊂ "method overview"
    assert resolve_label("Related Work Discussion", h, b) == (1, "substring")
    assert resolve_label("Work Related Overview", h, b) == (1, "word_overlap")  # 2 of 3 words in the header
    assert resolve_label("3.2 Frequency-Domain Decomposition", h, b) == (2, "body_heading")
    assert resolve_label("frequency domain decomposition", h, b) == (2, "body_heading")  # normalised label
    assert resolve_label("signal into bands", h, b) == (2, "body_text")  # in prose: counts, not heading-like
    assert resolve_label("Nothing Like It", h, b) == (None, "unresolved")
    assert resolve_label("  ", h, b) == (None, "unresolved")


def test_ambiguous_substring_falls_through_and_short_labels_stay_out_of_bodies():
    headers = ["3 Method", "3.1 Method Details", "4 Results"]
    bodies = ["Meth is discussed.", "x", "y"]
    assert resolve_label("Meth", headers, bodies) == (None, "unresolved")  # two headers; "meth" < 5 characters
    assert resolve_label("Results Method", headers, ["", "", ""]) == (None, "unresolved")  # 1 of 2 words each


def test_word_overlap_needs_two_words_and_sixty_percent():
    headers = ["1 Spectral Gating Networks", "2 Other"]
    assert resolve_label("Gating Spectral Analysis", headers, ["", ""]) == (0, "word_overlap")  # 2/3
    assert resolve_label("Gating Filters Bands Analysis", headers, ["", ""]) == (None, "unresolved")  # 1/4


def test_a_heading_like_occurrence_beats_an_earlier_mention():
    headers = ["1 Introduction", "3 Method", "4 Results"]
    bodies = [
        "We describe the frequency-domain decomposition in detail later.",
        "Overview.\n3.2 Frequency-Domain Decomposition\nWe decompose.",
        "x",
    ]
    assert resolve_label("Frequency-Domain Decomposition", headers, bodies) == (1, "body_heading")
    prose_only = ["See the frequency-domain decomposition.", "It uses a frequency-domain decomposition too.", "x"]
    assert resolve_label("Frequency-Domain Decomposition", headers, prose_only) == (0, "body_text")
    both_headings = ["a. 3.2 Frequency-Domain Decomposition We", "b\n3.2 Frequency-Domain Decomposition\nc", "x"]
    assert resolve_label("3.2 Frequency-Domain Decomposition", headers, both_headings) == (0, "body_heading")


def test_heading_like_needs_a_start_and_a_capitalised_continuation():
    headers = ["1 Introduction", "3 Method"]
    lower = ["x", "Overview. 3.2 Frequency-Domain Decomposition is described below."]
    assert resolve_label("3.2 Frequency-Domain Decomposition", headers, lower) == (1, "body_text")
    mid = ["x", "as in our 3.2 Frequency-Domain Decomposition We split."]
    assert resolve_label("3.2 Frequency-Domain Decomposition", headers, mid) == (1, "body_text")
    numbered = ["x", "Overview: IV-B Spectral Gating Networks. Gates are learnt."]
    assert resolve_label("Spectral Gating Networks", headers, numbered) == (1, "body_heading")


HEADER_WORDS = st.text(alphabet=st.characters(codec="ascii", categories=("Lu", "Ll", "Nd")), min_size=1, max_size=8)
HEADER = st.builds(
    lambda prefix, words: prefix + " ".join(words),
    st.sampled_from(["", "3 ", "3.2 ", "IV-B ", "II ", "Apdx_A.1: ", "Apdx: "]),
    st.lists(HEADER_WORDS, min_size=1, max_size=4),
)


@given(st.lists(HEADER, min_size=1, max_size=8, unique_by=lambda h: h.strip().lower()), st.data())
def test_any_header_label_resolves_to_itself_exactly(headers, data):
    k = data.draw(st.integers(min_value=0, max_value=len(headers) - 1))
    assert resolve_label(headers[k], headers, [""] * len(headers)) == (k, "exact")


LABEL_WORDS = st.sampled_from(["Frequency", "Domain", "Decomposition", "Spectral", "Gating", "Kernel", "Pooling"])
PROSE_WORDS = st.sampled_from(
    [
        "we",
        "the",
        "in",
        "see",
        "below",
        "our",
        "approach",
        "and",
        "are",
        "good",
        "results",
        "details",
        "follow",
        "as",
        "shown",
    ]
)
NUMBERING = st.sampled_from(["", "3.2 ", "5.3.1. ", "IV-B ", "II ", "Apdx_A.1: ", "Apdx: "])
HEADER_POOL = ["1 Introduction", "2 Related Work", "3 Method", "4 Experiments", "5 Conclusion", "Apdx_A: Proofs"]


@st.composite
def inline_cases(draw):
    """A subsection title (label words never occur in the headers, so the header steps never fire) written inline
    in one section's paragraph, running on into capitalised text; other sections mention it in prose only."""
    title = " ".join(draw(st.lists(LABEL_WORDS, min_size=2, max_size=4, unique=True)))
    label = draw(NUMBERING) + title
    n = draw(st.integers(min_value=1, max_value=6))
    k = draw(st.integers(min_value=0, max_value=n - 1))
    prose = lambda: " ".join(draw(st.lists(PROSE_WORDS, min_size=1, max_size=5)))  # noqa: E731
    bodies = []
    for i in range(n):
        if i == k:
            bodies.append(f"{prose().capitalize()}. {label} We split the signal. {prose()}.")
        else:
            bodies.append(draw(st.sampled_from([f"{prose()} {title.lower()} {prose()}.", f"{prose()}."])))
    return label, title, HEADER_POOL[:n], bodies, k


@given(inline_cases())
def test_an_inline_subsection_title_resolves_to_its_section(case):
    label, title, headers, bodies, k = case
    assert resolve_label(label, headers, bodies) == (k, "body_heading")
    assert resolve_label(title, headers, bodies) == (k, "body_heading")


@given(inline_cases())
def test_the_method_is_always_a_known_step(case):
    label, _, headers, bodies, _ = case
    assert resolve_label(label.split()[-1], headers, bodies)[1] in (*LABEL_METHODS, "unresolved")
