#!/usr/bin/env python3
"""A scripted `fibon.judge/v1` command judge for the tests.

argv[1] is the judge's name. $FIBON_TEST_SCORES is JSON: {judge: {candidate text: answer}},
where an answer is {"dim": score, ..., "conflict": true?}, or "fail" (exit 1), or
"garbage" (not JSON), or "offscale" (a score of 7.3). Every request is appended, one JSON
line, to $FIBON_TEST_LOG with the judge's name.
"""
import json
import os
import sys

name = sys.argv[1]
req = json.load(sys.stdin)
log = os.environ.get("FIBON_TEST_LOG")
if log:
    with open(log, "a") as f:
        f.write(json.dumps({"judge": name, "request": req}) + "\n")
table = json.loads(os.environ.get("FIBON_TEST_SCORES", "{}"))
answer = table.get(name, {}).get(req["candidate"], table.get(name, {}).get("*"))
if answer == "fail" or answer is None:
    sys.stderr.write("scripted judge: no answer for this candidate\n")
    sys.exit(1)
if answer == "garbage":
    print("<html>not json</html>")
    sys.exit(0)
if answer == "offscale":
    answer = {d["id"]: 7.3 for d in req["dimensions"]}
conflict = bool(answer.pop("conflict", False)) if isinstance(answer, dict) else False
print(json.dumps({
    "scores": {d: {"score": s, "reason": "%s says %s" % (name, s)} for d, s in answer.items()},
    "hard_fact_conflict": conflict,
}))
