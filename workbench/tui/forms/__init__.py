"""Plain form models behind the TUI's screens: fields in, a request and problems by field out; no Textual."""
