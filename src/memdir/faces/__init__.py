"""The ways in: the command line, the MCP and HTTP servers, tool schemas, Anthropic's memory tool."""
