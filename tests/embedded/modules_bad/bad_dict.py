import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx, config: dict) -> mgp.Record(x=int):
    return mgp.Record(x=1)
