"""The body step of label resolution (`sections._body_section`) finds a label's occurrences without compiling a
pattern for the common ASCII label and section: it must resolve every label exactly as the regular expressions
the rule is written in (docs/protocol.md "Section labels"), kept here as the reference."""

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import release, sections, synth
from sandbox.sections import _heading_like, label_norm


def reference_body_section(label: str, bodies: list[str]) -> tuple[int | None, str]:
    """The body step as the rule states it: both patterns compiled, scanned section by section."""
    normed = label_norm(label)
    patterns = []
    if len(normed) >= 5:
        raw = r"\s+".join(re.escape(w) for w in label.split())
        loose = r"[\s:\-–—]+".join(re.escape(w) for w in normed.split())
        patterns = [re.compile(p, re.IGNORECASE) for p in dict.fromkeys((raw, loose))]
    first_plain = None
    for i, body in enumerate(bodies):
        for pattern in patterns:
            for m in pattern.finditer(body):
                if _heading_like(body, m.start(), m.end()):
                    return i, "body_heading"
                if first_plain is None:
                    first_plain = i
    return (first_plain, "body_text") if first_plain is not None else (None, "unresolved")


def release_labels(root) -> list[tuple[str, list[str], list[str]]]:
    """(label, headers, bodies) of every label of a release whose paper has text."""
    papers = {}
    for lineno, obj in release.json_lines(root / release.PAPERS_FILE):
        arx, _, secs = release.check_paper(obj, root / release.PAPERS_FILE, lineno)
        papers[arx] = ([h or "" for h, _ in secs], [t for _, t in secs])
    out = []
    for _, obj in release.json_lines(root / release.LABELS_FILE):
        for lab in release.label_rows(obj):
            if lab.get("arxiv_id") in papers and isinstance(lab.get("section"), str):
                out.append((lab["section"], *papers[lab["arxiv_id"]]))
    return out


@pytest.fixture(scope="module")
def mid_release(tmp_path_factory):
    """A release of the paper preset's shape (long sections, many references) at a seventh of its size: the full
    one takes longer to generate than a test may (the paper-sized check is in docs/performance.md)."""
    preset = replace(synth.PRESETS["paper"], items=150, papers=1070)
    return synth.generate(tmp_path_factory.mktemp("mid") / "release", seed=3, preset=preset)


@pytest.mark.parametrize("which", ["builtin", "mid"])
def test_every_label_of_a_release_resolves_as_the_patterns_resolve_it(which, demo_dir, request):
    root = demo_dir if which == "builtin" else request.getfixturevalue("mid_release")
    labels = release_labels(root)
    body_step = 0
    for label, headers, bodies in labels:
        want = reference_body_section(label, bodies)
        assert sections._body_section(label, bodies) == want, label
        resolved = sections.resolve_label(label, headers, bodies)
        if resolved[1].startswith("body"):
            body_step += 1
            assert resolved == want
    assert len(labels) > 100 and body_step > 20  # the body step is really exercised


# Text near the edges of the ASCII matcher: case, whitespace re counts as \s (\x1c-\x1f too), the loose pattern's
# separators, non-ASCII letters whose case folds onto ASCII (Kelvin sign, long s, dotted I), numbering and stops.
ALPHABET = st.sampled_from([*"abAB kK:-.\n\t\x1c\x0b1I", "\u212a", "\u017f", "\u0130", "\u2013", "é"])
WORDS = st.text(ALPHABET, min_size=0, max_size=12)


@settings(max_examples=400, deadline=None)
@given(label=WORDS, bodies=st.lists(st.text(ALPHABET, max_size=60), max_size=4))
def test_the_body_step_agrees_with_the_patterns_on_any_text(label, bodies):
    assert sections._body_section(label, bodies) == reference_body_section(label, bodies)


@settings(max_examples=300, deadline=None)
@given(label=WORDS, before=st.text(ALPHABET, max_size=20), after=st.text(ALPHABET, max_size=20), data=st.data())
def test_a_label_planted_in_a_body_is_found_as_the_patterns_find_it(label, before, after, data):
    """Random bodies rarely hold the label: here each holds it, its case and spacing shuffled."""
    words = label.split()
    seps = [data.draw(st.sampled_from(["", " ", "  ", "\n", " - ", ": ", "\x1c", "–"])) for _ in words]
    planted = "".join(
        data.draw(st.sampled_from([w, w.upper(), w.lower()])) + s for w, s in zip(words, seps, strict=True)
    )
    bodies = [before + planted + after, planted.strip()]
    assert sections._body_section(label, bodies) == reference_body_section(label, bodies)


@pytest.mark.parametrize(
    "label, body",
    [
        ("Band Gating", "3.3 BandGating Each band is gated."),  # words run together: no match
        ("Band Gating", "3.3 Band\x1cGating Each band."),  # \x1c is whitespace to re
        ("Band: Gating", "3.3 band -: gating\nEach band."),  # the loose form's separators
        ("Band Gating", "Band Gating and band gating. Band Gating\nNext."),  # the heading-like one wins
        ("Band Gating", "BAND GATINGS are used"),  # a plain occurrence
        ("Kelvin Scale", "The \u212aelvin Scale\nIt"),  # a non-ASCII section: the pattern decides
        ("bandgating", "bandbandgating gating"),  # a retry inside a failed candidate
    ],
)
def test_hand_made_cases_resolve_as_the_patterns_resolve_them(label, body):
    bodies = ["Intro text.", body]
    got = sections._body_section(label, bodies)
    assert got == reference_body_section(label, bodies)
