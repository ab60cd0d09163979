"""Make the helper package importable as Memgraph does: ``query_modules/`` on ``sys.path``."""

import sys
from pathlib import Path

QUERY_MODULES = str(Path(__file__).resolve().parents[2] / "query_modules")

if QUERY_MODULES not in sys.path:
    sys.path.insert(0, QUERY_MODULES)
