"""RFC 6901 JSON pointers: the one place reference tokens are escaped and unescaped."""

from __future__ import annotations

from collections.abc import Iterable


def escape_token(name: object) -> str:
    """`name` (a member name or an index) as one reference token: `~` as `~0`, `/` as `~1`."""
    return str(name).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """The member name a reference token stands for."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_of(parts: Iterable[object]) -> str:
    """The pointer of a path of member names and indexes (`""` for the whole document)."""
    return "".join("/" + escape_token(part) for part in parts)


def pointer_tokens(pointer: str) -> list[str]:
    """The unescaped member names of a pointer that starts with `/` (none for `""`)."""
    return [unescape_token(token) for token in pointer.split("/")[1:]] if pointer else []
