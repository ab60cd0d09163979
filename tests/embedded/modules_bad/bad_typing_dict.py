import typing

import mgp


@mgp.read_proc
def p(ctx: mgp.ProcCtx) -> mgp.Record(x=typing.Dict[str, int]):  # noqa: UP006 - the rule under test
    return mgp.Record(x={})
