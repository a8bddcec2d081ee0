#!/usr/bin/env node
// fibon.agent/v1: the MCP TypeScript SDK (Streamable HTTP client) and the `openai` npm client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import OpenAI from "openai";

const SYSTEM = "Answer from the tools' results only. If a tool fails, say so; never guess.";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const request = JSON.parse(input);

const llm = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY ?? "unused" });
const mcp = new Client({ name: "fibon-example", version: "1.0.0" });
await mcp.connect(new StreamableHTTPClientTransport(new URL(request.tools.mcp_url)));
const tools = (await mcp.listTools()).tools.map((t) => ({
  type: "function",
  function: { name: t.name, description: t.description ?? "", parameters: t.inputSchema },
}));
const messages = [{ role: "system", content: SYSTEM }, { role: "user", content: request.input }];
let failure = null, reply = null;
const trace = [];
for (let step = 0; step < 8; step++) {
  const completion = await llm.chat.completions.create({
    model: process.env.OPENAI_MODEL ?? "gpt-4o-mini", messages, ...(tools.length ? { tools } : {}),
  });
  reply = completion.choices[0].message;
  messages.push(reply);
  if (!reply.tool_calls?.length) break;
  for (const call of reply.tool_calls) {
    const args = JSON.parse(call.function.arguments || "{}");
    trace.push({ tool: call.function.name, arguments: args });
    let text;
    try {
      const result = await mcp.callTool({ name: call.function.name, arguments: args });
      text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
      if (result.isError || !text.trim())
        failure ??= { code: result.isError ? "TOOL_ERROR" : "EMPTY_RESULT", message: text || `\`${call.function.name}\` returned nothing` };
    } catch (e) { // McpError: data.fault (TIMEOUT, SERVER_DOWN…), or -32602 for a missing tool
      const code = e.data?.fault ?? (e.code === -32602 ? "TOOL_NOT_FOUND" : "TOOL_ERROR");
      const message = e.message.replace(/^MCP error -?\d+: /, ""); // the gateway's own words
      failure ??= { code, message };
      text = `error ${code}: ${message}`;
    }
    messages.push({ role: "tool", tool_call_id: call.id, content: text });
  }
}
await mcp.close();
const output = reply?.content ?? "";
console.log(JSON.stringify(failure ? { status: "error", error: failure, output } : { status: "ok", output, trace }));
