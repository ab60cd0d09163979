"""Why a local file could not be read, in the words every reader uses (config, graph and token files).

Each reader names the file its own way (`config file X (--config)`, `--graph: X`, `token file X`);
this says what is wrong with it, so a directory, an unreadable file, binary junk or nesting past
Python's recursion limit read the same wherever they happen.
"""

READ_ERRORS = (OSError, UnicodeDecodeError, RecursionError)


def unreadable(exc: BaseException, kind: str) -> str:
    """What `exc`, raised while reading a file meant to be `kind` (e.g. "a TOML file"), says about it."""
    if isinstance(exc, IsADirectoryError):
        return f"is a directory, expected {kind}"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {exc.start}): not {kind}"
    if isinstance(exc, RecursionError):
        return f"nests too deeply to be {kind}"
    if isinstance(exc, OSError):
        return f"cannot be read ({exc.strerror or exc})"
    return str(exc)
