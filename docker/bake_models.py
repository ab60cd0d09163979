"""Build step of Dockerfile.mage: put embedding models into the image so nothing downloads at run time.

Usage (as user memgraph, with network, at build time only):
    RECALL_MODELS='{"name": "/folder", ...}' python3 bake_models.py HUB_NAME [HUB_NAME ...]

Each HUB_NAME (recall's default model, MAGE's `embeddings` default) goes into the memgraph user's
Hugging Face cache, where `SentenceTransformer(HUB_NAME)` finds it offline; each entry of
RECALL_MODELS goes into its folder, the form recall's RECALL_MODELS reads. Only the files
sentence-transformers loads are downloaded (LOADED_FILES): a model repository also carries the same
weights as PyTorch .bin, ONNX, OpenVINO, TensorFlow and Rust files, which a full snapshot would bake
in several times over. Finally every model is loaded again with the hub switched off, so the build
fails if a file it needs was left out.
"""

import json
import os
import subprocess
import sys

# What sentence-transformers 5.x reads (SentenceTransformer._load_sbert_model and its modules'
# load()), as huggingface_hub patterns (fnmatch: `*` also matches "/", so folders are spelled out).
LOADED_FILES = [
    # the model: its module list, its own config, the model card it reads
    "modules.json",
    "config_sentence_transformers.json",
    "README.md",
    # module 0, the Transformer: its config (sentence_bert_config.json or a sibling), the model config,
    # the weights as safetensors (one file or shards), the tokenizer in any of its formats
    "sentence_*_config.json",
    "config.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "model-*-of-*.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
    # further modules, each in a numbered folder: 1_Pooling/config.json, 2_Dense/config.json and its
    # weights (2_Normalize reads nothing)
    "[0-9]*_*/config.json",
    "[0-9]*_*/model.safetensors",
]


def hub_repo(name: str) -> str:
    """The repository `SentenceTransformer(name)` loads: a bare name is one of the
    sentence-transformers organisation's (e.g. MAGE's "all-MiniLM-L6-v2")."""
    if "/" in name:
        return name
    try:
        from sentence_transformers.util import ORIGINAL_TRANSFORMER_MODELS
    except ImportError:  # older releases kept the list elsewhere; none of our names is on it
        ORIGINAL_TRANSFORMER_MODELS = []
    return name if name.lower() in ORIGINAL_TRANSFORMER_MODELS else f"sentence-transformers/{name}"


def recall_folders(raw: str | None) -> dict[str, str]:
    folders = json.loads(raw or "{}")
    if not isinstance(folders, dict) or not all(isinstance(v, str) for v in folders.values()):
        raise SystemExit(f"RECALL_MODELS must be a JSON object name -> folder, got {raw!r}")
    return folders


def main(hub_names: list[str]) -> None:
    from huggingface_hub import snapshot_download

    folders = recall_folders(os.environ.get("RECALL_MODELS"))
    for name in hub_names:
        snapshot_download(repo_id=hub_repo(name), allow_patterns=LOADED_FILES)
    for name, folder in folders.items():
        snapshot_download(repo_id=name, local_dir=folder, allow_patterns=LOADED_FILES)
    check = ("import sys\nfrom sentence_transformers import SentenceTransformer\n"
             "for name in sys.argv[1:]:\n"
             "    model = SentenceTransformer(name, device='cpu')\n"
             "    dimension = getattr(model, 'get_embedding_dimension', None)"
             " or model.get_sentence_embedding_dimension\n"
             "    print('baked', name, dimension(), flush=True)\n")
    offline = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-c", check, *hub_names, *folders.values()], env=offline, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
