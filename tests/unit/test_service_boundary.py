"""The front ends, the app and the chat use the memory service through its named methods, and send named tasks to
the memory thread: none reads the service's ledger (its forget journal, machine registry and records are methods
of the service) or its vector index (its count, warm-up and a forget's vectors are methods too), and no lambda
goes to ``MemoryWorker.call`` or to the selectors, where a reader would have to work out what it does on which
thread. Nor does a front end set the chat engine's state: it asks the engine (``use_model``, ``pause``); nor read
it: it reads the engine's ``status()`` snapshot, or calls a method of the engine."""

from __future__ import annotations

import ast

from tests.source_trees import modules


def _own(node: ast.Attribute) -> bool:
    """``self.ledger`` is an object's own (the service's, an adapter's); ``paths.ledger`` is the ledger's file."""
    return isinstance(node.value, ast.Name) and (node.value.id == "self" or node.value.id.endswith("paths"))


def test_no_module_reads_the_ledger_of_a_service() -> None:
    reached = [f"{module.name}:{node.lineno} {ast.unparse(node)}" for module in modules() for node in module.nodes
               if isinstance(node, ast.Attribute) and node.attr in {"ledger", "_ledger"} and not _own(node)]
    assert reached == []


# ``item.index`` there is an OpenAI embedding's place in its batch, a field of the library's reply, not an index.
_NOT_AN_INDEX = {("agent/adapters/openai_embedder.py", "item.index")}


def test_no_module_reads_the_index_of_a_service() -> None:
    """Any ``x.index`` but the object's own and ``list.index(...)``: a call's function is a method, not the index."""
    reached = []
    for module in modules():
        methods = {id(node.func) for node in module.nodes if isinstance(node, ast.Call)}
        reached += [f"{module.name}:{node.lineno} {ast.unparse(node)}" for node in module.nodes
                    if isinstance(node, ast.Attribute) and node.attr in {"index", "_index"} and id(node) not in methods
                    and not _own(node) and (module.name, ast.unparse(node)) not in _NOT_AN_INDEX]
    assert reached == []


def test_no_lambda_is_sent_to_the_memory_thread() -> None:
    sent = [f"{module.name}:{node.lineno} {ast.unparse(node)}" for module in modules() for node in module.nodes
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in {"call", "pick_all"}
            and any(isinstance(arg, ast.Lambda) for arg in node.args)]
    assert sent == []


def test_no_front_end_sets_an_attribute_of_the_chat_engine() -> None:
    set_ = [f"{module.name}:{node.lineno} {ast.unparse(node)}" for module in modules()
            if module.name.startswith(("agent/ui/", "agent/cli/")) for node in module.nodes
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
            and "engine" in ast.unparse(node.value).split(".")]
    assert set_ == []


def _engine_methods() -> set[str]:
    """The public methods of ``ChatEngine``: functions of its class that are neither private nor properties."""
    [engine] = [node for module in modules() if module.name == "agent/app/chat_engine.py" for node in module.nodes
                if isinstance(node, ast.ClassDef) and node.name == "ChatEngine"]
    return {node.name for node in engine.body if isinstance(node, ast.FunctionDef)
            and not node.name.startswith("_") and not node.decorator_list}


def test_no_front_end_reads_an_attribute_of_the_chat_engine() -> None:
    """``engine.status().model``, ``engine.switch(...)``: never ``engine.model`` nor ``engine._session``."""
    methods = _engine_methods()
    assert {"status", "begin", "switch"} <= methods
    read = [f"{module.name}:{node.lineno} {ast.unparse(node)}" for module in modules()
            if module.name.startswith(("agent/ui/", "agent/cli/")) for node in module.nodes
            if isinstance(node, ast.Attribute) and ast.unparse(node.value).split(".")[-1] == "engine"
            and node.attr not in methods]
    assert read == []
