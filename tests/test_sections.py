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
