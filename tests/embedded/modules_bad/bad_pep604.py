import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx, name: str | None = None) -> mgp.Record(x=int):
    return mgp.Record(x=1)
