"""Rows as aligned text columns: what `memgraph-recall status` prints and the MCP `recall_status` tool
returns. Its own module so the CLI and the MCP server share it without importing each other."""


def table(rows: list[dict]) -> str:
    """Rows as aligned text columns (None shown as blank), headed by the first row's keys."""
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    cells = [keys] + [["" if row.get(k) is None else str(row.get(k)) for k in keys] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(keys))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
                     for line in cells)
