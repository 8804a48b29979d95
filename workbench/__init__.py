"""The workbench, in floors: `cli`, `tui` and `mcp` (the front ends), `service` (the application layer),
`views` (shared wording)."""
