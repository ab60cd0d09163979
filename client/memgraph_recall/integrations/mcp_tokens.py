"""The MCP server's token file: SHA-256 hashes of bearer tokens, each mapped to exactly one user.

Over HTTP the user is never taken from the model or the request body: it is the user the request's
bearer token maps to here. The file holds only hashes, so reading it does not reveal a token; one
line per token, `<sha256 hex of the token> <user_id>`, `#` starts a comment:

    # printf %s "$TOKEN" | sha256sum
    9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 maya

The file is read again whenever it changes (checked on every request), so tokens are added and
revoked without a restart. A file that becomes malformed refuses every token until it is fixed:
failing closed is the only safe reading of a half-written list of credentials. Tokens and hashes
are never logged; errors name line numbers only.
"""

import hashlib
import logging
import os
import re
import threading
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from memgraph_recall.files import READ_ERRORS, unreadable

_LINE = re.compile(r"([0-9a-fA-F]{64})\s+(\S.*?)\s*")
logger = logging.getLogger(__name__)


def token_hash(token: str) -> str:
    """The hex SHA-256 of a token, as the token file stores it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_tokens(text: str, source: str) -> dict[str, str]:
    """`{hash: user}` from a token file's text; an error names the file and line, never its content."""
    users: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"token file {source}, line {number}: expected "
                             "'<sha256 hex of a token> <user_id>'")
        digest, user = match.group(1).lower(), match.group(2)
        if users.get(digest, user) != user:
            raise ValueError(f"token file {source}, line {number}: this token is already mapped to another "
                             "user; a token must name exactly one user")
        users[digest] = user
    return users


class TokenFile:
    """The users of a token file, re-read when the file changes (size, mtime or inode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._users: dict[str, str] = {}
        self.load()  # a token file that cannot be read stops the server from starting

    def load(self) -> None:
        """Read the file now; `ValueError` names what is wrong with it."""
        try:
            stat = os.stat(self.path)
            text = self.path.read_bytes().decode("utf-8")
        except READ_ERRORS as exc:
            raise ValueError(f"token file {self.path}: {unreadable(exc, 'a token file')}") from exc
        users = parse_tokens(text, str(self.path))
        with self._lock:
            self._users, self._seen = users, (stat.st_size, stat.st_mtime_ns, stat.st_ino)

    def user_for(self, token: str) -> str | None:
        """The user `token` maps to, or None (unknown token, or a token file that is now unusable)."""
        self._refresh()
        with self._lock:
            return self._users.get(token_hash(token))

    def _refresh(self) -> None:
        try:
            stat = os.stat(self.path)
            current: tuple[int, int, int] | None = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        except OSError:
            current = None
        with self._lock:
            if current == self._seen:
                return
        try:
            self.load()
            logger.warning("token file %s changed: read again", self.path)
        except ValueError as exc:
            with self._lock:
                self._users, self._seen = {}, current
            logger.error("%s; every token is refused until the file is fixed", exc)


class TokenFileVerifier:
    """The MCP SDK's `TokenVerifier`: a bearer token is valid when the token file maps it to a user.

    The user becomes the token's `client_id` and `subject`, which the SDK also uses to bind an HTTP
    session to the credential that opened it. `AccessToken.token` carries the hash, not the token.
    """

    def __init__(self, tokens: TokenFile) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        user = self.tokens.user_for(token)
        if user is None:
            return None
        return AccessToken(token=token_hash(token), client_id=user, subject=user, scopes=[])
