"""Edges: OpenAI, Chroma, the local ONNX model and the SQLite ledger, each behind a Protocol of ``agent.ports``."""
