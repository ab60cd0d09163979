import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx, threshold: float = 1) -> mgp.Record(x=int):
    return mgp.Record(x=1)
