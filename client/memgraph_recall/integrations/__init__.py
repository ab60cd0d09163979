"""Recall for agent frameworks: the MCP server (`mcp_server`, extra `[mcp]`) and the LangChain
retriever (`langchain`, extra `[langchain]`). Nothing here is imported by the base install."""
