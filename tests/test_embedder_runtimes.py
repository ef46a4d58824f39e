"""The two embedding runtimes on the real bundled model: ONNX Runtime (over the export) and sentence-transformers
give the same vectors and the same token counts; the export is idempotent; the runtime setting fails clearly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neoweave.config import load_settings
from neoweave.embeddings import Embedder, model_directory
from neoweave.embeddings.onnx_export import META_FILE, MODEL_FILE, _install, export, find_export
from neoweave.errors import ConfigError

MODEL = "all-MiniLM-L6-v2"
TEXTS = [
    "q",
    "",
    " ",
    "\n\t",
    "How do I cancel a running task?",
    "Who painted The Scream, and in which year?",
    "Edvard Munch painted The Scream in 1893.",
    "The quick brown fox jumps over the lazy dog. " * 60,  # ~600 tokens: truncated at 256
    "word " * 700,
    "supercalifragilisticexpialidocious" * 20,  # one long word, many word pieces
    "Ünïcödé naïve café déjà vu",
    "日本語のテキストと English が混ざった文章です。",
    "长的中文句子" * 80,  # CJK past the limit
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "emoji 🙂🚀 and symbols ∑ ∫ ≤ ≥ → ©",
    "def f(x):\n    return os.path.join(x, 'y')  # code",
    "<div class=\"note\"><p>HTML &amp; markup</p></div>",
    "https://example.org/path?query=1&b=2#fragment",
    "Say [SEP] or [unk] or [CLS] here",
    "a\x00b\x1fc",
    "non\u00a0breaking\u2009thin space",
    "e\u0301 combining accent",
    "1234567890 3.14159 -42 1e-9",
    "   lead and trail whitespace   ",
    "UPPER CASE SHOUTING TEXT",
    "dash—and “quotes” … ellipsis",
    "Land Bank farmers and the railway mania of the 1840s. " * 12,
    "tab\tand\r\nnew\x0bline",
    "C++ & e-mail: a_b@c.d`~ | pipes || and && ops",
]


@pytest.fixture(scope="module")
def exported() -> Path:
    """The bundled model's export in the default cache (scripts/setup.sh makes it; made here when missing)."""
    return export(MODEL)


@pytest.fixture(scope="module")
def onnx(exported) -> Embedder:
    return Embedder(MODEL, runtime="onnx", batch_size=4).load()  # several batches: order must be restored


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return Embedder(MODEL, runtime="torch").load()


def test_onnx_and_torch_give_the_same_vectors(onnx, torch_embedder):
    assert onnx.runtime_name == "onnx" and torch_embedder.runtime_name == "torch"
    first = np.asarray(onnx.embed(TEXTS))
    second = np.asarray(torch_embedder.embed(TEXTS))
    assert first.shape == second.shape == (len(TEXTS), 384)
    cosines = (first * second).sum(axis=1) / np.linalg.norm(first, axis=1) / np.linalg.norm(second, axis=1)
    worst = int(cosines.argmin())
    print(f"\nworst cosine onnx/torch: 1 - {1 - cosines[worst]:.2e} on text {worst} ({TEXTS[worst][:30]!r}); "
          f"largest component difference {np.abs(first - second).max():.2e}")
    assert cosines.min() >= 1 - 1e-4
    assert np.allclose(np.linalg.norm(first, axis=1), 1, atol=1e-5)
    # one text alone (a query) gives the vector it gets inside a padded batch
    alone = np.asarray([onnx.embed_query(text) for text in TEXTS[:8]])
    assert ((alone * first[:8]).sum(axis=1) >= 1 - 1e-5).all()


def test_token_counts_are_identical_and_the_models_own(onnx, torch_embedder):
    onnx_counts = onnx.count_tokens(TEXTS)
    assert onnx_counts == torch_embedder.count_tokens(TEXTS) == torch_embedder.token_counter()(TEXTS)
    assert onnx.token_counter()(TEXTS[::-1]) == onnx_counts[::-1]
    tokenizer = torch_embedder._load().tokenizer
    expected = [len(ids) for ids in tokenizer(TEXTS, add_special_tokens=True, truncation=False,
                                              verbose=False)["input_ids"]]
    assert onnx_counts == expected
    assert max(onnx_counts) > onnx.max_tokens == torch_embedder.max_tokens == 256  # counts are untruncated
    assert onnx._load().tokenizer(TEXTS[:3])["input_ids"] == tokenizer(TEXTS[:3])["input_ids"]  # compat accessor


def test_counting_with_an_export_loads_no_model(exported):
    embedder = Embedder(MODEL, runtime="onnx")
    assert embedder.count_tokens(["two words"]) == [4]
    assert embedder.dimension == 384 and embedder.max_tokens == 256
    assert embedder._model is None


def test_dimension_and_max_tokens_come_from_the_config_files():
    embedder = Embedder(str(model_directory(MODEL)), runtime="torch")  # a path: not in KNOWN_DIMENSIONS
    assert (embedder.dimension, embedder.max_tokens) == (384, 256)
    assert embedder._model is None


def test_export_is_idempotent(exported):
    written = (exported / MODEL_FILE).stat().st_mtime_ns
    started = time.perf_counter()
    assert export(MODEL) == exported == find_export(MODEL)
    assert time.perf_counter() - started < 1.0
    assert (exported / MODEL_FILE).stat().st_mtime_ns == written
    meta = json.loads((exported / META_FILE).read_text())
    assert meta["check"]["min_cosine"] >= 1 - 1e-4
    assert meta["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]


def test_a_second_exporter_finishing_later_keeps_the_first_export(tmp_path):
    target = tmp_path / "model-abc-f1"
    for name in ("first", "second"):
        work = tmp_path / f".work-{name}"
        work.mkdir()
        (work / META_FILE).write_text(name)
        _install(work, target, force=False)
        assert not work.exists()
    assert (target / META_FILE).read_text() == "first"


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter with an empty export cache and torch not importable (as on a machine
    with onnxruntime only)."""
    prelude = "import sys\nfor name in ('torch', 'sentence_transformers'):\n    sys.modules[name] = None\n"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env,
                          timeout=60)


def test_onnx_without_an_export_or_a_way_to_export_is_a_clear_config_error(tmp_path):
    result = _run("from neoweave.embeddings import Embedder\n"
                  "from neoweave.errors import ConfigError\n"
                  "try:\n"
                  "    Embedder('all-MiniLM-L6-v2', runtime='onnx').embed_query('q')\n"
                  "except ConfigError as exc:\n"
                  "    print('ConfigError:', exc)\n"
                  "print('auto:', Embedder('all-MiniLM-L6-v2').runtime_name)\n", tmp_path)
    assert result.returncode == 0, result.stderr
    error = result.stdout.splitlines()[0]
    assert error.startswith("ConfigError:")
    for words in ("embedding.runtime", "NEOWEAVE_EMBEDDING_RUNTIME", "not exported", "torch is not installed",
                  "python -m neoweave.embeddings.onnx_export all-MiniLM-L6-v2"):
        assert words in error
    assert result.stdout.splitlines()[1] == "auto: torch"


def test_auto_picks_onnx_when_exported_and_never_imports_torch(exported):
    code = ("import sys\nfrom neoweave.embeddings import Embedder\n"
            "embedder = Embedder('all-MiniLM-L6-v2')\n"
            "assert 'onnxruntime' not in sys.modules  # importing and resolving load nothing\n"
            "print(embedder.runtime_name, len(embedder.embed_query('q')), embedder.runtime_name,\n"
            "      'torch' in sys.modules, 'sentence_transformers' in sys.modules, 'transformers' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["onnx", "384", "onnx", "False", "False", "False"]


def test_the_runtime_setting(workdir):
    assert load_settings(environ={}).embedding.runtime == "auto"
    assert load_settings(environ={"NEOWEAVE_EMBEDDING_RUNTIME": "onnx"}).embedding.runtime == "onnx"
    with pytest.raises(ConfigError, match="NEOWEAVE_EMBEDDING_RUNTIME"):
        load_settings(environ={"NEOWEAVE_EMBEDDING_RUNTIME": "tensorflow"})
    with pytest.raises(ConfigError, match=r"embedding\.runtime"):
        Embedder(MODEL, runtime="tensorflow")  # type: ignore[arg-type]


def test_the_int8_variant_is_a_model_of_its_own_close_to_float32(onnx, exported):
    """`NAME:int8` quantizes the export once (next to it) and embeds with it: unit vectors near float32's, the
    same tokens, and a name of its own, which the graph records (so the two are never mixed)."""
    int8 = Embedder(f"{MODEL}:int8", batch_size=4)
    assert int8.dimension == 384 and int8.max_tokens == onnx.max_tokens  # known without loading
    int8.load()
    assert int8.runtime_name == "onnx" and int8.model_name == f"{MODEL}:int8" and int8.precision == "int8"
    import onnxruntime

    assert (exported / f"model.int8.ort-{onnxruntime.__version__}.onnx").is_file()  # the quantizer's version named
    texts = [text for text in TEXTS if text.strip()]
    full, quantized = np.array(onnx.embed(texts)), np.array(int8.embed(texts))
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    cosines = (full * quantized).sum(axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.98  # ~0.994 on HotpotQA chunks
    assert cosines.max() < 0.99999  # the quantized graph, not the float32 one again
    assert int8.count_tokens(texts) == onnx.count_tokens(texts)


def test_an_int8_variant_never_falls_back_to_torch():
    with pytest.raises(ConfigError, match=r"int8 variant.*onnx"):
        Embedder(f"{MODEL}:int8", runtime="torch").runtime_name  # noqa: B018
    assert Embedder(":int8").precision == "float32"  # the suffix alone is a (missing) model's name, not a variant


def test_a_text_repeated_in_one_call_is_embedded_once_and_returned_in_place(onnx, monkeypatch):
    texts = ["Edvard Munch painted The Scream.", "q", "Edvard Munch painted The Scream.", "", "q"]
    runtime = onnx._load()
    encoded: list[list[str]] = []
    original = runtime.encode
    monkeypatch.setattr(runtime, "encode", lambda batch, size: encoded.append(batch) or original(batch, size))
    vectors = np.array(onnx.embed(texts))
    assert encoded == [["Edvard Munch painted The Scream.", "q", ""]]
    alone = np.array([onnx.embed([text])[0] for text in texts])
    assert np.allclose(vectors, alone, atol=1e-5) and np.array_equal(vectors[0], vectors[2])


def test_an_int8_model_that_cannot_be_written_is_a_clear_error(tmp_path):
    from neoweave.embeddings.quantize import int8_model

    not_a_directory = tmp_path / "export"
    not_a_directory.write_text("")  # an export path that cannot take the quantized file (root or not)
    with pytest.raises(ConfigError, match="cannot write the int8 model next to the export"):
        int8_model(not_a_directory)
