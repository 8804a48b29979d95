"""The Textual workbench: screens and widgets. Imported only by `workbench.app` (never on the --batch path)."""
