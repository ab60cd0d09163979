import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx, k: int = None) -> mgp.Record(x=int):
    return mgp.Record(x=1)
