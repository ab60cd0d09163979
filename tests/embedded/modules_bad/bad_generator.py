import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx) -> mgp.Record(x=int):
    yield mgp.Record(x=1)
