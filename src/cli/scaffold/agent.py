#!/usr/bin/env python3
"""An example fibon.agent/v1 command agent (docs/agent-protocol.md): the request on stdin,
the response on stdout. It looks up each city the question names with the session's
`get_weather` tool and answers from the results, or fails explicitly when the tool does.
Replace the marked part with your model."""
import json
import sys
import urllib.error
import urllib.request

request = json.load(sys.stdin)
tools_url = request["tools"]["http_url"]


def fail(code, message):
    # An explicit, machine-readable failure: what the contract asks for under a fault.
    print(json.dumps({"status": "error", "error": {"code": code, "message": message},
                      "output": f"I cannot answer reliably: {message}"}))
    sys.exit(0)


with urllib.request.urlopen(tools_url) as r:
    tools = {t["name"] for t in json.load(r)["tools"]}
if "get_weather" not in tools:
    fail("TOOL_NOT_FOUND", "the tool `get_weather` is not available")

# Your model would choose the calls; this example takes the capitalised words after the first.
words = [w.strip("?,.!") for w in request["input"].split()[1:]]
cities = [w for w in words if w[:1].isupper()]
results, trace = [], []
for city in cities:
    call = urllib.request.Request(f"{tools_url}/get_weather", method="POST",
                                  data=json.dumps({"city": city}).encode(),
                                  headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(call) as r:
            result = json.load(r)
    except urllib.error.HTTPError as e:  # 403, 404, 504, 503…: {"error": {"code", "message"}}
        err = json.load(e)["error"]
        fail(err["code"], err["message"])
    text = "\n".join(p["text"] for p in result["content"] if p.get("type") == "text")
    if result.get("isError") or not text.strip():
        fail("EMPTY_RESULT", f"`get_weather` returned nothing for {city}")
    results.append(text)
    trace.append({"tool": "get_weather", "arguments": {"city": city}})

# Your model would answer from `results`; this example quotes them.
print(json.dumps({"output": "\n".join(results), "status": "ok", "trace": trace}))
