"""The documentation: the CLI reference is what the argument parser generates, every command the CLI dispatches has
its section, every relative link (and its anchor) in the README and the docs resolves, and the site builds with
`mkdocs build --strict` offline."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_what_the_parser_generates():
    from workbench.cli.parser import build_parser

    generated = _generator().render(build_parser())
    assert (DOCS / "cli.md").read_text() == generated, "docs/cli.md is stale: run `python docs/gen_cli.py`"


def test_every_dispatched_command_and_every_flag_has_its_place_in_the_reference():
    from workbench.cli import COMMANDS
    from workbench.cli.parser import build_parser

    page = (DOCS / "cli.md").read_text()
    headings = set(re.findall(r"^#{2,4} `([^`]+)`$", page, flags=re.M))
    assert set(COMMANDS) <= headings, f"commands without a section: {sorted(set(COMMANDS) - headings)}"
    for path, _, sub in _generator().commands(build_parser()):
        section = page.split(f"`{' '.join(path)}`\n", 1)[1].split("\n#", 1)[0]
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in section or f", {flag}" in section, f"{' '.join(path)} {flag} not documented"


def test_the_commands_page_names_every_flag_of_every_command():
    """docs/commands.md is the hand-written overview beside the generated reference: a flag the parser takes and
    the overview never names (`scale parallel --scores`, `serve-mcp --token-env`) is a feature a reader of it
    never learns of."""
    from workbench.cli.parser import build_parser

    page = (DOCS / "commands.md").read_text()
    missing = [
        f"{' '.join(path)} {flag}"
        for path, _, sub in _generator().commands(build_parser())
        for action in sub._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help" and not re.search(re.escape(flag) + r"(?![\w-])", page)
    ]
    assert not missing, f"flags docs/commands.md never names: {missing}"


def test_the_generator_escapes_markdown_outside_code_spans():
    escape = _generator()._escape
    assert escape("a * b_c <x> `d_*<`") == "a \\* b\\_c &lt;x> `d_*<`"


# ---------------------------------------------------------------- links


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where a bracket is code, not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc gives a heading (its default `slugify`), markup removed first."""
    text = re.sub(r"[`*]", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading of the README: lowercase, punctuation dropped, each space a hyphen (not
    collapsed: "Prompts (`--prompts F`)" is `prompts---prompts-f`)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    """The anchors of a page's headings: GitHub's for the README (read there), the toc's for the docs (the site)."""
    slug = _github_slug if page == ROOT / "README.md" else _slug
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", _prose_keep_code_spans(page.read_text()), flags=re.M)}


def _prose_keep_code_spans(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _links() -> list[tuple[Path, str]]:
    return [(page, target) for page in _pages() for target in LINK.findall(_prose(page.read_text()))]


def test_the_link_checker_sees_the_links():
    links = _links()
    assert any(page.name == "README.md" for page, _ in links)
    assert any("#" in target for _, target in links)
    assert _slug("Any MCP agent (`serve-mcp`)") == "any-mcp-agent-serve-mcp"
    assert _github_slug("Prompts (`--prompts FILE.toml`)") == "prompts---prompts-filetoml"


def _broken(page: Path, target: str) -> str | None:
    """Why a link of `page` does not resolve, or None when it does (http(s) and mailto are not followed)."""
    if re.match(r"^[a-z]+:", target):
        return None
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    if not dest.exists():
        return f"{page.relative_to(ROOT)}: {target} → no such file"
    if anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
        return f"{page.relative_to(ROOT)}: {target} → no heading #{anchor}"
    return None


def test_the_link_checker_tells_a_broken_link():
    readme = ROOT / "README.md"
    assert _broken(readme, "docs/metrics.md") is None
    assert _broken(readme, "docs/nowhere.md") is not None
    assert _broken(DOCS / "index.md", "protocol.md#parity") is None
    assert _broken(DOCS / "index.md", "protocol.md#no-such-heading") is not None


def test_every_relative_link_resolves():
    broken = [why for page, target in _links() if (why := _broken(page, target))]
    assert not broken, "\n".join(broken)


CITATION = re.compile(r"docs/([\w/-]+\.md)(?:#([\w-]+)| \"([^\"]+)\")?")


def _citations() -> list[tuple[str, str, str]]:
    """(file, page, anchor or '') for every docs page a comment, docstring or message of the code cites."""
    sources = [ROOT / "pyproject.toml"]
    for package in ("sandbox", "stats", "storage", "workbench", "themes", "bench", "tests"):
        sources += sorted((ROOT / package).rglob("*.py"))
    found = []
    for source in sources:
        for page, anchor, title in CITATION.findall(source.read_text()):
            found.append((source.relative_to(ROOT).as_posix(), page, anchor or (_slug(title) if title else "")))
    return found


def test_the_code_cites_pages_and_sections_that_exist():
    citations = _citations()
    assert len(citations) > 20  # the scan sees the code's citations
    for source, page, anchor in citations:
        if source == "tests/test_docs.py":
            continue
        assert (DOCS / page).is_file(), f"{source} cites docs/{page}: no such page"
        if anchor:
            assert anchor in _anchors(DOCS / page), f"{source} cites docs/{page}#{anchor}: no such heading"


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    listed = set(re.findall(r":\s+(\S+\.md)\s*$", nav, flags=re.M))
    assert pages == listed, f"not in the nav: {sorted(pages - listed)}; in the nav, missing: {sorted(listed - pages)}"


# ---------------------------------------------------------------- the site


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs-material is not installed (pip install -e '.[docs]')",
)
def test_the_site_builds_strict_and_offline(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
    commands = (tmp_path / "site" / "commands" / "index.html").read_text()
    assert "<code>run --data builtin|DIR" in commands and "\\|" not in commands  # docs/hooks.py at work


def test_the_hook_unescapes_pipes_only_in_code_spans_of_table_cells():
    spec = importlib.util.spec_from_file_location("hooks", DOCS / "hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = "<p><code>a\\|b</code></p><td>x\\|y <code>st\\|mt</code></td>"
    assert hooks.unescape_pipes(html) == "<p><code>a\\|b</code></p><td>x\\|y <code>st|mt</code></td>"


# ---------------------------------------------------------------- the screens' keys

SCREEN_PAGES = {
    "runs.RunsScreen": "runs.md",
    "launch.LaunchScreen": "launch.md",
    "live.LiveScreen": "live.md",
    "trajectories.RunScreen": "run.md",
    "stepper.StepperScreen": "stepper.md",
    "compare.CompareScreen": "compare.md",
    "compare.SplitStepperScreen": "compare.md",
    "panel.PanelScreen": "panel.md",
    "scaling.ScalingScreen": "scaling.md",
    "study_form.StudyForm": "scaling.md",
    "items.ItemsScreen": "items.md",
    "itemview.ItemScreen": "items.md",
    "audit.AuditScreen": "audit.md",
    "play.PlayScreen": "play.md",
    "dialogs.LeaveModal": "play.md",  # leaving a half-played item: y next item, l the session
    "play_setup.PlaySetupScreen": "play.md",
    "leaderboard.LeaderboardScreen": "leaderboard.md",
    "campaign.CampaignScreen": "campaign.md",
}
# modals and pickers whose keys are cancel/confirm only, and the help screen itself (it lists every key)
NO_PAGE = {
    "dialogs.ConfirmModal",
    "dialogs.DatasetModal",
    "dialogs.ExportModal",
    "dialogs.NameModal",
    "compare.RunPairModal",
    "panel.PanelPickModal",
    "help.HelpScreen",
}
KEY_WORDS = {
    "slash": "/",
    "question_mark": "?",
    "dollar_sign": "$",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "right": "→",
    "left": "←",
    "down": "↓",
    "up": "↑",
    "escape": "esc",
    "f2": "F2",
    "f3": "F3",
    "f4": "F4",
}


def _screens():
    """(module.class, class) of every screen and modal in workbench/tui/screens that declares key bindings."""
    import importlib
    import inspect
    import pkgutil

    from textual.screen import Screen

    import workbench.tui.screens as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"workbench.tui.screens.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, Screen) and cls.__dict__.get("BINDINGS"):
                yield f"{info.name}.{name}", cls


def test_every_screen_has_a_page_that_lists_its_keys():
    missing = []
    for ident, cls in _screens():
        if ident in NO_PAGE:
            continue
        assert ident in SCREEN_PAGES, f"{ident} has keys but no page under docs/screens/ (add it to SCREEN_PAGES)"
        page = (DOCS / "screens" / SCREEN_PAGES[ident]).read_text()
        for binding in cls.__dict__["BINDINGS"]:
            keys = [KEY_WORDS.get(k.strip(), k.strip()) for k in binding.key.split(",")]
            if not any(f"`{k}`" in page for k in keys) and not any(f"| {k} " in page for k in keys):
                missing.append(f"{SCREEN_PAGES[ident]}: {ident} {binding.key} ({binding.description})")
    assert not missing, "keys the pages do not list:\n" + "\n".join(missing)


# ---------------------------------------------------------------- the screenshots


def test_the_screenshot_script_drives_the_app_to_each_screen(tmp_path: Path, monkeypatch):
    """`docs/screenshots.py` over a small store (6 items): each picture is of the screen it names, with its data.
    The Live shot (a 2,400-episode run caught in flight) is left to the script itself."""
    spec = importlib.util.spec_from_file_location("screenshots", DOCS / "screenshots.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for var, name in (("AGENTHOP_CACHE", "cache"), ("AGENTHOP_CONFIG", "config.toml"), ("AGENTHOP_STATE", "s.toml")):
        monkeypatch.setenv(var, str(tmp_path / name))
    monkeypatch.chdir(tmp_path)
    script.make_runs(tmp_path / "runs.sqlite", limit=6)
    expected = {
        "runs": "heuristic-s1",
        "stepper": "turn 5 ·",  # four steps on (`l`) from the first turn
        "compare": "McNemar",
        "panel": "Navigator",
        "scaling": "plateau",
    }
    for name, word in expected.items():
        svg = asyncio.run(script.shoot(name, tmp_path, (140, 40), out=tmp_path)).read_text()
        assert word in svg.replace("&#160;", " "), f"{name}.svg does not show {word!r}"
    assert "store: runs.sqlite" in (tmp_path / "runs.svg").read_text().replace("&#160;", " ")


def test_the_suites_time_is_stated_with_the_load_it_was_measured_under():
    """A time without the machine's load misleads by a factor of three (issue 44, item 20): 3 minutes on 2 idle
    cores, 8½ beside other work. The README and the development page say the same."""
    said = [
        " ".join(page.read_text(encoding="utf-8").split()) for page in (ROOT / "README.md", DOCS / "development.md")
    ]
    for text in said:
        assert "about 3 minutes on 2 otherwise idle cores, about 8½ minutes when other work shares the 2 cores" in text
