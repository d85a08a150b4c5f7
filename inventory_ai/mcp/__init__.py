"""The warehouse tools over the Model Context Protocol (the official `mcp` SDK), for any agent.

- `server.py`: what an MCP client sees and calls: the user's tools, two resources, two prompts.
  Every call goes through `ToolExecutionManager.call_directly` (assistant/manager.py), the same checks as in chat.
- `stdio.py`: `flask --app wsgi mcp`, one client on stdin/stdout as the user of INVENTORY_AI_MCP_TOKEN.
- `http.py`: `/mcp`, Streamable HTTP inside the Flask app (every request with its bearer token).

How to connect a client, what each role sees and how approvals work: docs/mcp.md.
"""
