from __future__ import annotations

import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx, k: int) -> mgp.Record(x=int):
    return mgp.Record(x=k)
