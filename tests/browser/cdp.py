#!/usr/bin/env python3
"""Loads a page in headless Chromium over the DevTools protocol (on a pipe: no port, no
network) and prints, as one JSON object, what the page logged and fetched and the values of
the expressions given — for tests/html.rs, the screenshot in docs/ and benches/html.

  cdp.py PAGE [--hash H] [--eval JS]... [--screenshot OUT.png] [--size WxH]

Each --eval is run in order after the page is ready (`document.body.dataset.ready`); an
expression may return a promise. Output: {"console": [...], "exceptions": [...],
"requests": [every URL the page asked for], "results": [...], "ready_ms": N}.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no chromium on PATH (.ci/run installs Debian's `chromium`)")


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="fibon-cdp-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [chromium(), "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-default-apps", "--disable-extensions",
             "--user-data-dir=" + self.profile, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=open(os.environ.get("CDP_LOG", os.devnull), "w"))
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        while True:
            m = self.read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def read(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m.get("method") == method:
                return m
        while time.monotonic() < deadline:
            m = self.read(deadline - time.monotonic())
            self.events.append(m)
            if m.get("method") == method:
                return m
        raise TimeoutError(method)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--hash", default="")
    ap.add_argument("--eval", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--size", default="1400x900")
    a = ap.parse_args()
    url = "file://" + os.path.abspath(a.page) + (("#" + a.hash) if a.hash else "")
    width, height = (int(x) for x in a.size.split("x"))
    b = Browser()
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            b.send(domain + ".enable", session=s)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=s)
        b.events.clear()
        b.send("Page.navigate", {"url": url}, session=s)
        b.wait_event("Page.loadEventFired")

        def evaluate(expr):
            r = b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                            "awaitPromise": True}, session=s)
            if "exceptionDetails" in r:
                return {"exception": r["exceptionDetails"].get("exception", {}).get("description")
                        or r["exceptionDetails"].get("text")}
            return r["result"].get("value")

        ready = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready = evaluate("document.body && document.body.dataset.ready === '1' ? Number(document.body.dataset.readyMs) : null")
            if ready is not None:
                break
            time.sleep(0.05)
        results = [evaluate(e) for e in a.eval]
        if a.screenshot:
            shot = b.send("Page.captureScreenshot", {"format": "png"}, session=s)
            import base64
            with open(a.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        # Let late console messages and requests arrive.
        time.sleep(0.2)
        evaluate("0")
        console, exceptions, requests = [], [], []
        for m in b.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.consoleAPICalled":
                console.append({"type": p.get("type"), "text": " ".join(
                    str(x.get("value", x.get("description", ""))) for x in p.get("args", []))})
            elif m.get("method") == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                exceptions.append(d.get("exception", {}).get("description") or d.get("text"))
            elif m.get("method") == "Log.entryAdded":
                e = p.get("entry", {})
                console.append({"type": e.get("level"), "text": e.get("text"), "source": e.get("source")})
            elif m.get("method") == "Network.requestWillBeSent":
                requests.append(p.get("request", {}).get("url"))
        print(json.dumps({"console": console, "exceptions": exceptions, "requests": requests,
                          "results": results, "ready_ms": ready}))
    finally:
        b.close()


if __name__ == "__main__":
    main()
