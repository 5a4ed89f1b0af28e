"""The packaged model converted to int8: same meaning as the packaged file, cached once, and never a reason to fail."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from agent.adapters import local_model
from agent.adapters.local_embedder import LocalEmbedder, default_model_files
from agent.adapters.local_model import CONVERSION, convert, fold_weight_casts, prepared_model

pytestmark = pytest.mark.usefixtures("model_cache")

SENTENCES = [
    "I can't eat peanuts, they make me very sick.",
    "What snack should I bring to the hiking trip?",
    "My sister moved to Berlin last spring to work as a nurse.",
    "We are planning a trip to Japan with friends from college.",
    "Melanie painted a sunrise over the lake last weekend.",
    "(8 May 2023) Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
]


def packaged_only(tmp_path: Path) -> LocalEmbedder:
    """An embedder on the packaged file as it is (a model directory is never converted)."""
    model, tokenizer = default_model_files()
    directory = tmp_path / "packaged"
    directory.mkdir()
    (directory / "model.onnx").symlink_to(model)
    (directory / "tokenizer.json").symlink_to(tokenizer)
    return LocalEmbedder(directory)


def cached_file(cache: Path) -> Path:
    (found,) = (cache / "agent").glob(f"*-{CONVERSION}-ort*.onnx")
    return found


def test_the_converted_model_computes_in_int8(local_embedder: LocalEmbedder, model_cache: Path) -> None:
    local_embedder.embed(["hello"])
    ops = {node.op_type for node in onnx.load(str(cached_file(model_cache))).graph.node}
    assert {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"} <= ops, "integer products, fused as a load would fuse them"
    assert "Cast" in {node.op_type for node in onnx.load(str(default_model_files()[0])).graph.node}


def test_the_converted_model_means_what_the_packaged_one_means(local_embedder: LocalEmbedder, tmp_path: Path) -> None:
    """The conversion's numbers are checked here, on the real model, with tolerances it holds on every CPU: the
    integer products onnxruntime picks differ by CPU (VNNI or not), and the cosines measured were 0.991 at worst
    both here (AVX-512 VNNI) and under ``qemu-x86_64 -cpu Haswell`` (AVX2 without VNNI), the similarities moving by
    0.028 and 0.024 at most."""
    converted = np.array(local_embedder.embed(SENTENCES))
    packaged = np.array(packaged_only(tmp_path).embed(SENTENCES))
    assert (converted * packaged).sum(axis=1).min() > 0.97
    # The similarities between sentences, which decide what is recalled, move by hundredths at most.
    assert np.abs(converted @ converted.T - packaged @ packaged.T).max() < 0.05
    peanuts, snack, berlin = converted[0], converted[1], converted[2]
    assert peanuts @ snack > berlin @ snack


def test_a_second_start_uses_the_cache_without_converting(
    local_embedder: LocalEmbedder, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_embedder.embed(["hello"])

    def no_conversion(*args: object, **kwargs: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(local_model.subprocess, "run", no_conversion)
    again = LocalEmbedder(cache_dir=model_cache / "agent")
    assert again.embed(["hello"]) == local_embedder.embed(["hello"])


def test_a_damaged_cached_file_is_dropped_and_the_packaged_file_used(
    local_embedder: LocalEmbedder, model_cache: Path, tmp_path: Path
) -> None:
    local_embedder.embed(["hello"])
    cache = tmp_path / "cache"
    (cache / "agent").mkdir(parents=True)
    damaged = cache / "agent" / cached_file(model_cache).name
    damaged.write_bytes(cached_file(model_cache).read_bytes()[:4096])
    local_model.note_converted(damaged, cache / "agent")  # the file the conversion wrote, yet it will not load

    vector = LocalEmbedder(cache_dir=cache / "agent").embed(SENTENCES[:1])

    assert vector == packaged_only(tmp_path).embed(SENTENCES[:1])
    assert not damaged.exists()


def test_a_cache_that_cannot_be_written_leaves_the_packaged_file_in_use(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache should be")
    source = default_model_files()[0]

    assert prepared_model(source, blocked / "agent") == source
    assert LocalEmbedder(cache_dir=blocked / "agent").embed(SENTENCES[:1]) == packaged_only(tmp_path).embed(
        SENTENCES[:1]
    )


def test_a_failed_conversion_leaves_the_packaged_file_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crashed(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], -9, "", "")

    monkeypatch.setattr(local_model.subprocess, "run", crashed)
    source = default_model_files()[0]
    assert prepared_model(source, tmp_path / "cache") == source
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [local_model.DIGESTS], "no model file"


def weight_only_int8_model() -> onnx.ModelProto:
    """y = x @ (int8 weight * per-column scale), stored the way the packaged model stores its weights."""
    rng = np.random.default_rng(7)
    weight = rng.integers(-127, 128, size=(8, 4)).astype(np.int8)
    scale = rng.uniform(0.001, 0.02, size=(1, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(weight, "w_q"), numpy_helper.from_array(scale, "w_scale")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(["y"], {"x": x})[0])


def test_folding_the_casts_keeps_the_function_and_drops_the_int8_copy() -> None:
    model = weight_only_int8_model()
    x = np.random.default_rng(1).normal(size=(2, 8)).astype(np.float32)
    before = run(model, x)

    assert fold_weight_casts(model.graph) == 1

    assert [node.op_type for node in model.graph.node] == ["MatMul"]
    assert [init.name for init in model.graph.initializer] == ["w"]
    np.testing.assert_allclose(run(model, x), before, rtol=1e-6)


def test_convert_writes_an_integer_model_and_refuses_one_without_int8_weights(tmp_path: Path) -> None:
    """The shape of the conversion, on a toy: what it computes is checked on the real model (above). The toy's
    numbers are no measure of it: on a CPU with AVX2 but no VNNI onnxruntime multiplies uint8 by int8 in pairs
    summed to 16 bits, which saturate on the toy's extreme random weights (54% off there; 1% here), while the real
    model stays at a cosine of 0.99."""
    tmp_path = tmp_path / "models"
    tmp_path.mkdir()
    source, target = tmp_path / "tiny.onnx", tmp_path / "tiny-int8.onnx"
    onnx.save(weight_only_int8_model(), str(source))
    convert(source, target)
    converted = onnx.load(str(target)).graph
    assert {node.op_type for node in converted.node} == {"DynamicQuantizeMatMul"}
    weights = {init.name: numpy_helper.to_array(init) for init in converted.initializer}
    assert {array.dtype for array in weights.values() if array.ndim == 2} == {np.dtype(np.int8)}, "int8 weights"
    x = np.random.default_rng(1).normal(size=(2, 8)).astype(np.float32)
    assert run(onnx.load(str(target)), x).shape == (2, 4)

    plain = onnx.load(str(source))
    fold_weight_casts(plain.graph)
    onnx.save(plain, str(source))
    with pytest.raises(ValueError, match="nothing to convert"):
        convert(source, tmp_path / "again.onnx")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny-int8.onnx", "tiny.onnx"]


def test_the_command_line_reports_a_failure_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert local_model.main([str(tmp_path / "missing.onnx"), str(tmp_path / "out.onnx")]) == 1
    assert local_model.main([]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "missing.onnx" in lines[0]


def test_cached_names_follow_the_bytes_of_the_source(tmp_path: Path) -> None:
    first, second = tmp_path / "a.onnx", tmp_path / "b" / "a.onnx"
    second.parent.mkdir()
    shutil.copyfile(default_model_files()[1], first)
    shutil.copyfile(first, second)
    assert local_model.cached_model_path(first, tmp_path) == local_model.cached_model_path(second, tmp_path)
    second.write_text("other bytes")
    assert local_model.cached_model_path(first, tmp_path) != local_model.cached_model_path(second, tmp_path)


def test_a_source_is_hashed_once_while_it_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "model.onnx"
    shutil.copyfile(default_model_files()[1], source)
    cache = tmp_path / "cache"
    named = local_model.cached_model_path(source, cache)
    assert json.loads((cache / local_model.DIGESTS).read_text())[str(source)][-1].startswith(named.name.split("-")[1])

    def hashed(*args: object) -> None:
        raise AssertionError("hashed again")

    monkeypatch.setattr(local_model.hashlib, "sha256", hashed)
    assert local_model.cached_model_path(source, cache) == named
    monkeypatch.undo()
    source.write_text("other bytes")
    assert local_model.cached_model_path(source, cache) != named, "a changed file is hashed again"


@pytest.mark.parametrize("notes", [b"{not json", b"[1, 2]", b'{"x": 3}', b"\xff\xfe"])
def test_a_damaged_note_of_digests_costs_a_hash_and_is_written_again(tmp_path: Path, notes: bytes) -> None:
    source = tmp_path / "model.onnx"
    shutil.copyfile(default_model_files()[1], source)
    expected = local_model.cached_model_path(source, tmp_path / "clean")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / local_model.DIGESTS).write_bytes(notes)
    assert local_model.cached_model_path(source, cache).name == expected.name
    assert str(source) in json.loads((cache / local_model.DIGESTS).read_text())


def test_a_note_of_digests_that_cannot_be_written_costs_only_the_hash(tmp_path: Path) -> None:
    source = tmp_path / "model.onnx"
    shutil.copyfile(default_model_files()[1], source)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache should be")
    assert local_model.cached_model_path(source, blocked / "agent").name == \
        local_model.cached_model_path(source, tmp_path / "clean").name
