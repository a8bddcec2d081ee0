#!/usr/bin/env python3
"""fibon.agent/v1: the OpenAI Agents SDK, its tools from the cell's MCP URL (Streamable HTTP)."""
import asyncio, json, os, sys

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

failures = []  # (code, message) of every failed call this agent saw


class Watched(MCPServerStreamableHttp):
    """The gateway's MCP tools; a failed call is noted, then handled by the SDK as usual."""

    async def call_tool(self, tool_name, arguments, meta=None):
        try:
            result = await super().call_tool(tool_name, arguments, meta)
        except Exception as e:  # JSON-RPC errors: an unknown tool, TIMEOUT, SERVER_DOWN…
            cause = getattr(e, "__cause__", None) or e
            data = getattr(getattr(cause, "error", None), "data", None)
            code = data.get("fault", "TOOL_ERROR") if isinstance(data, dict) else "TOOL_ERROR"
            failures.append((code, f"`{tool_name}` failed: {cause}"))
            raise
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error or not text.strip():
            failures.append(("TOOL_ERROR" if result.is_error else "EMPTY_RESULT",
                             text or f"`{tool_name}` returned nothing"))
        return result


async def main(request):
    set_tracing_disabled(True)  # no export of traces to OpenAI
    llm = AsyncOpenAI(base_url=os.environ.get("OPENAI_BASE_URL"),
                      api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    async with Watched(params={"url": request["tools"]["mcp_url"], "timeout": 30},
                       cache_tools_list=False, name="fibon") as server:
        agent = Agent(name=request["skill"], mcp_servers=[server],
                      instructions="Answer from the tools' results only. If a tool fails, say so.",
                      model=OpenAIChatCompletionsModel(os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), llm))
        result = await Runner.run(agent, request["input"], max_turns=8)
    answer = str(result.final_output or "")
    if failures:
        code, message = failures[0]
        return {"status": "error", "error": {"code": code, "message": message}, "output": answer}
    return {"status": "ok", "output": answer}


print(json.dumps(asyncio.run(main(json.load(sys.stdin)))))
