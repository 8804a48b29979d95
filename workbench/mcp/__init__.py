"""The MCP front end: `serve-mcp`, the sandbox as an MCP server (`server`)."""
