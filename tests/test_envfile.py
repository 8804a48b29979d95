"""`--env-file`: a `.env` read with python-dotenv's grammar (quotes, `export`, trailing comments); set variables win."""

from __future__ import annotations

import os

import pytest

from workbench.service.config import ConfigFileError
from workbench.service.envfile import load_env_file


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("AH_QUOTED", "AH_EXPORTED", "AH_PLAIN", "AH_SET", "AH_EMPTY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_quoted_value_with_trailing_comment_keeps_only_the_value(tmp_path, clean_env):
    env = tmp_path / ".env"
    env.write_text("AH_QUOTED=\"abc\" # the key\nexport AH_EXPORTED='x y'\nAH_PLAIN=plain # note\n# AH_NOT=1\n")
    names = load_env_file(env)
    assert sorted(names) == ["AH_EXPORTED", "AH_PLAIN", "AH_QUOTED"]
    assert os.environ["AH_QUOTED"] == "abc"
    assert os.environ["AH_EXPORTED"] == "x y"
    assert os.environ["AH_PLAIN"] == "plain"
    assert "AH_NOT" not in os.environ


def test_variables_already_set_win(tmp_path, clean_env):
    clean_env.setenv("AH_SET", "from-shell")
    env = tmp_path / ".env"
    env.write_text("AH_SET=from-file\nAH_EMPTY=\n")
    assert load_env_file(env) == ["AH_EMPTY"]
    assert os.environ["AH_SET"] == "from-shell"
    assert os.environ["AH_EMPTY"] == ""


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigFileError, match="no such file"):
        load_env_file(tmp_path / "absent.env")
