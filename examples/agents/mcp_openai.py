#!/usr/bin/env python3
"""fibon.agent/v1: the MCP Python SDK (Streamable HTTP) and the `openai` client in a loop."""
import asyncio, json, os, sys

from mcp import Client
from mcp.shared.exceptions import MCPError
from openai import AsyncOpenAI

SYSTEM = "Answer from the tools' results only. If a tool fails, say so; never guess."


async def main(request):
    llm = AsyncOpenAI(base_url=os.environ.get("OPENAI_BASE_URL"),
                      api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": request["input"]}]
    failure, trace = None, []
    async with Client(request["tools"]["mcp_url"]) as mcp:
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                   "parameters": t.input_schema}}
                 for t in (await mcp.list_tools()).tools]
        for _ in range(8):
            reply = (await llm.chat.completions.create(
                model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), messages=messages,
                **({"tools": tools} if tools else {}))).choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                args = json.loads(call.function.arguments or "{}")
                trace.append({"tool": call.function.name, "arguments": args})
                try:
                    result = await mcp.call_tool(call.function.name, args)
                    text = "\n".join(c.text for c in result.content if c.type == "text")
                    if result.is_error or not text.strip():
                        failure = failure or ("TOOL_ERROR" if result.is_error else "EMPTY_RESULT",
                                              text or f"`{call.function.name}` returned nothing")
                except MCPError as e:  # the gateway's faults: data.fault, or -32602 for a missing tool
                    data = e.error.data if isinstance(e.error.data, dict) else {}
                    code = data.get("fault") or ("TOOL_NOT_FOUND" if e.error.code == -32602 else "TOOL_ERROR")
                    text = f"error {code}: {e.error.message}"
                    failure = failure or (code, e.error.message)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    answer = reply.content or ""
    if failure:
        return {"status": "error", "error": {"code": failure[0], "message": failure[1]}, "output": answer}
    return {"status": "ok", "output": answer, "trace": trace}


print(json.dumps(asyncio.run(main(json.load(sys.stdin)))))
