"""The TUI's screens: each module one screen (or modal) of the workbench and the helpers only it uses."""
