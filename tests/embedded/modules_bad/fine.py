import mgp


@mgp.read_proc
def ok(ctx: mgp.ProcCtx) -> mgp.Record(ok=bool):
    return mgp.Record(ok=True)
