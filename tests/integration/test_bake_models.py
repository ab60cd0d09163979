"""docker/bake_models.py downloads only what sentence-transformers loads. These tests need no Docker
engine: they check the download filter with huggingface_hub's own matcher, and that a folder holding
only the files it keeps loads and embeds exactly as the full packaged MiniLM does."""

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest
from huggingface_hub.utils import filter_repo_objects
from memgraph_recall.locate import packaged_model_dir

ROOT = Path(__file__).resolve().parents[2]

# What a hub repository of a sentence-transformers model holds beside the files it loads: the same
# weights in other formats, training leftovers, git metadata.
NOT_LOADED = [
    ".gitattributes", "pytorch_model.bin", "tf_model.h5", "rust_model.ot", "flax_model.msgpack",
    "onnx/model.onnx", "onnx/model_O4.onnx", "onnx/model_qint8_avx512.onnx", "onnx/config.json",
    "openvino/openvino_model.xml", "openvino/openvino_model.bin", "data_config.json", "train_script.py",
    "1_Pooling/pytorch_model.bin",
]


@pytest.fixture(scope="module")
def bake():
    spec = importlib.util.spec_from_file_location("bake_models", ROOT / "docker" / "bake_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_the_filter_keeps_the_loaded_files_and_drops_other_weight_formats(bake):
    packaged = _repo_files(packaged_model_dir())
    listing = sorted(set(packaged) | set(NOT_LOADED) | {"2_Dense/config.json", "2_Dense/model.safetensors",
                                                       "sentence_xlm-roberta_config.json", "spiece.model"})
    kept = set(filter_repo_objects(listing, allow_patterns=bake.LOADED_FILES))
    assert kept == set(listing) - set(NOT_LOADED) - {".gitattributes", "data_config.json"}
    assert {"model.safetensors", "1_Pooling/config.json", "modules.json", "tokenizer.json"} <= kept


def test_a_folder_with_only_the_kept_files_embeds_like_the_full_model(bake, tmp_path):
    from sentence_transformers import SentenceTransformer

    full = packaged_model_dir()
    for name in filter_repo_objects(_repo_files(full), allow_patterns=bake.LOADED_FILES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(full / name, tmp_path / name)
    assert not (tmp_path / "data_config.json").exists()
    texts = ["Maya flies to Lisbon on 14 June.", "Severe peanut allergy."]
    baked = SentenceTransformer(str(tmp_path), device="cpu").encode(texts, normalize_embeddings=True)
    reference = SentenceTransformer(str(full), device="cpu").encode(texts, normalize_embeddings=True)
    np.testing.assert_array_equal(baked, reference)


def test_bare_names_resolve_to_the_repository_sentence_transformers_loads(bake):
    assert bake.hub_repo("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
    assert bake.hub_repo("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"


def test_every_download_is_filtered_and_every_model_reloaded_offline(bake, monkeypatch):
    downloads, checks = [], []
    monkeypatch.setattr("huggingface_hub.snapshot_download", lambda **kw: downloads.append(kw))
    monkeypatch.setattr(bake.subprocess, "run", lambda cmd, env, check: checks.append((cmd, env)))
    monkeypatch.setenv("RECALL_MODELS", '{"sentence-transformers/all-MiniLM-L6-v2": "/models/minilm"}')
    bake.main(["BAAI/bge-small-en-v1.5", "all-MiniLM-L6-v2"])
    assert [(d["repo_id"], d.get("local_dir")) for d in downloads] == [
        ("BAAI/bge-small-en-v1.5", None), ("sentence-transformers/all-MiniLM-L6-v2", None),
        ("sentence-transformers/all-MiniLM-L6-v2", "/models/minilm")]
    assert all(d["allow_patterns"] is bake.LOADED_FILES for d in downloads)
    [(cmd, env)] = checks
    assert cmd[-3:] == ["BAAI/bge-small-en-v1.5", "all-MiniLM-L6-v2", "/models/minilm"]
    assert env["HF_HUB_OFFLINE"] == "1"


def test_recall_models_must_map_names_to_folders(bake):
    with pytest.raises(SystemExit, match="RECALL_MODELS must be a JSON object"):
        bake.recall_folders('["a"]')
    assert bake.recall_folders(None) == {}
