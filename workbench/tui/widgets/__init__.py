"""The TUI's reusable widgets and renderables, used by several screens; they never import a screen."""
