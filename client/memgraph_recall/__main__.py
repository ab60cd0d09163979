"""`python -m memgraph_recall`: the CLI, for MCP clients that launch a command by absolute path (the venv's
python) and do not have the venv's `bin/` on their PATH."""

import sys

from memgraph_recall.cli import main

sys.exit(main())
