#!/usr/bin/env python3
"""A small, deliberately misbehaving MCP server (stdio, handshake era) for the tests.

Tools: `ok_tool` (answers, and carries vendor fields a proxy must keep), `broken` (no
inputSchema: malformed), `die` (the process exits mid-call), `hang` (never answers),
`garbage` (prints a non-JSON line, then answers). Flags: `--garbage-only` answers every
request with garbage; `--exit-at-start` exits before reading anything.
"""
import json
import os
import sys

TOOLS = [
    {
        "name": "ok_tool",
        "description": "Answers politely",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
        "x-vendor": {"tier": "gold", "nested": [1, 2, {"k": None}]},
    },
    {"name": "broken", "description": "Has no inputSchema"},
    {"name": "die", "description": "Exits mid-call", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answers", "inputSchema": {"type": "object"}},
    {"name": "garbage", "description": "Prints garbage first", "inputSchema": {"type": "object"}},
]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if "--exit-at-start" in sys.argv:
        sys.stderr.write("misbehaving server: exiting at start\n")
        sys.exit(2)
    garbage_only = "--garbage-only" in sys.argv
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg or "method" not in msg:
            continue
        if garbage_only:
            sys.stdout.write("<html>this is not JSON-RPC</html>\n")
            sys.stdout.flush()
            continue
        rid, method = msg["id"], msg["method"]
        params = msg.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "misbehaving", "version": "0.0.1"},
            }})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            name = params.get("name")
            if name == "die":
                sys.stderr.write("misbehaving server: dying mid-call\n")
                sys.stderr.flush()
                os._exit(3)
            elif name == "hang":
                continue
            elif name == "garbage":
                sys.stdout.write("Traceback (most recent call last): not JSON\n")
                send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "after garbage"}]}})
            elif name == "ok_tool":
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "content": [{"type": "text", "text": "ok: " + str(params.get("arguments", {}).get("q"))}],
                    "structuredContent": {"a": "ok"},
                    "isError": False,
                }})
            else:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "Unknown tool: %s" % name}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
