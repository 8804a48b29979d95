"""The workbench: the `agenthop-tui` entry point, the reports layer, config and the Textual app."""
