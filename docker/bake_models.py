"""Build step of Dockerfile.mage: put embedding models into the image so nothing downloads at run time.

Usage (as user memgraph, with network, at build time only):
    RECALL_MODELS='{"name": "/folder", ...}' python3 bake_models.py HUB_NAME [HUB_NAME ...]

Each HUB_NAME is loaded exactly as its caller loads it (`SentenceTransformer(name)`), which fills the
memgraph user's Hugging Face cache: recall's default model and MAGE's `embeddings` default. Each entry
of RECALL_MODELS is downloaded into its folder, the form recall's RECALL_MODELS reads. Finally every
model is loaded again with the hub switched off, so the build fails if any would need the network.
"""

import json
import os
import subprocess
import sys


def main(hub_names: list[str]) -> None:
    from huggingface_hub import snapshot_download
    from sentence_transformers import SentenceTransformer

    folders = json.loads(os.environ.get("RECALL_MODELS") or "{}")
    if not isinstance(folders, dict):
        raise SystemExit(f"RECALL_MODELS must be a JSON object name -> folder, got {folders!r}")
    for name in hub_names:
        SentenceTransformer(name, device="cpu")
    for name, folder in folders.items():
        snapshot_download(repo_id=name, local_dir=folder)
    check = ("import sys\nfrom sentence_transformers import SentenceTransformer\n"
             "for name in sys.argv[1:]:\n"
             "    model = SentenceTransformer(name, device='cpu')\n"
             "    print('baked', name, model.get_sentence_embedding_dimension(), flush=True)\n")
    offline = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-c", check, *hub_names, *folders.values()], env=offline, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
