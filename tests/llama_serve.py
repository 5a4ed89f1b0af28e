"""The process ``tests.llama_server`` starts: llama.cpp's own HTTP server (``llama-server``'s code, in the
``xllamacpp`` wheel) on one GGUF model, listening on 127.0.0.1 until it is killed.

Run as a script by path (``python tests/llama_serve.py MODEL PORT N_CTX [TEMPLATE]``): it imports nothing of the
project, so a test process never runs xllamacpp itself (on a CPU without the AVX2 the wheel was built for, its
llama.cpp code dies of SIGILL, and would take pytest with it). ``TEMPLATE`` is the name of one of llama.cpp's
built-in chat templates (``gemma``); without it the server uses the template in the GGUF file's metadata, through
its Jinja engine.
"""

from __future__ import annotations

import sys
import threading


def main(argv: list[str]) -> None:
    import xllamacpp

    model, port, n_ctx, *template = argv
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = int(port)
    params.n_ctx = int(n_ctx)
    params.n_parallel = 1  # one slot: the whole context is one request's, as ``llama-server -np 1``
    params.cpuparams.n_threads = 1  # small, single-threaded and seeded: the same prompt gets the same reply
    params.cpuparams_batch.n_threads = 2
    params.sampling.seed = 7
    # llama-cpp-python's server default, not llama.cpp's 0.8 (the agent sends no temperature): at 0.8 SmolLM2-135M
    # rambled past 256 tokens where at 0.2 it ends a short answer by itself.
    params.sampling.temp = 0.2
    if template:
        params.chat_template = template[0]
        params.use_jinja = False  # a built-in template is a name, not Jinja source
    server = xllamacpp.Server(params)
    print(f"listening at {server.listening_address}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
