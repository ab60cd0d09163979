import mgp
import not_an_installed_package_for_recall_tests  # noqa: F401


@mgp.read_proc
def p(ctx: mgp.ProcCtx) -> mgp.Record(x=int):
    return mgp.Record(x=1)
