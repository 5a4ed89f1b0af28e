"""chromadb imports an OpenTelemetry exporter, and gRPC with it, for telemetry the agent never turns on
(``chroma_index._defer_otlp_exporter``): a stand-in keeps gRPC out of the process, and makes the real exporter the
moment anything asks for it. Each check runs in a fresh interpreter, where chromadb is not imported yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_opening_chromadb_imports_no_grpc() -> None:
    said = run("import sys; from agent.adapters.chroma_index import _chromadb; chromadb = _chromadb(); "
               "print('grpc' in sys.modules, chromadb.__name__)")
    assert said == "False chromadb"


def test_the_exporter_asked_for_is_the_real_one() -> None:
    said = run("import sys; from agent.adapters.chroma_index import _chromadb; _chromadb(); "
               "from chromadb.telemetry.opentelemetry import OTLPSpanExporter as made; "
               "exporter = made(endpoint='http://127.0.0.1:9'); "
               "from opentelemetry.exporter.otlp.proto.grpc import trace_exporter; "
               "print(type(exporter) is trace_exporter.OTLPSpanExporter, 'grpc' in sys.modules, "
               "trace_exporter.__file__.endswith('.py'))")
    assert said == "True True True"
