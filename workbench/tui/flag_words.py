"""A message worded for the CLI (`--grid: …`, `--extra-tools-count 999: …`) said in a form's words: each `--flag`
the form has a field for becomes the field's label, so a person at the form reads the names on the screen."""

from __future__ import annotations

import re
from collections.abc import Mapping

_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")


def in_form_words(message: str, labels: Mapping[str, str]) -> str:
    """`message` with every `--some-flag` whose `some_flag` is in `labels` replaced by its label (others kept)."""
    return _FLAG.sub(lambda m: labels.get(m.group(1).replace("-", "_"), m.group(0)), message)
