"""Metrics and tests as pure functions over plain records and numpy arrays. No I/O."""
