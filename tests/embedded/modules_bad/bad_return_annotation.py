import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx) -> int:
    return 1
