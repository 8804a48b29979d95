"""The Textual workbench: screens and widgets. Imported only by `workbench.tui.app` (never on the --batch path)."""
