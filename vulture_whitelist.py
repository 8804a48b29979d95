"""The two names vulture (at 80 % confidence) reports as unused that are unused on purpose, each with its reason.

Run vulture with this file: `vulture --min-confidence 80 sandbox stats storage workbench vulture_whitelist.py`.
"""

# workbench/tui/app.py, WorkbenchApp.notify: the parameter keeps Textual's signature (callers may pass it); every
# toast is drawn as plain text whatever it says, because run names and provider errors are not markup.
markup  # noqa: B018, F821 -- a name for vulture to see used, never run

# workbench/tui/forms/slicing.py, _qa_rows: the file's modification time is part of the lru_cache key (a changed
# file is read again); the body needs only the path.
mtime_ns  # noqa: B018, F821 -- a name for vulture to see used, never run
