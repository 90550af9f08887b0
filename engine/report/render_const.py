"""`rulecheck render NAME`: a constant of the rules written out as a YAML block.

A document that quotes a protocol's constants (a seed's `limits:` block) is then generated
from the rules, never copied by hand. The shape is the constant's own: a map is written in
the order its entries are declared, a nested map indented two spaces under its key, a set
as a sorted list. Numbers are exact values in the base unit of their dimension (`4 min`
is `240`, `2 Mtokens` is `2000000`), written as integers or terminating decimals; a value
YAML cannot hold exactly (`1/3`) is refused, never rounded. Nothing here knows a protocol.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

from engine.errors import Diagnostic, ExitCode, RulecheckError
from engine.syntax.format import decimal_spelling

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# keys a YAML 1.1 reader takes for booleans or null when written plain
_RESERVED_KEYS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_INDENT = "  "


def render_constant(name: str, value: Any) -> str:
    """The YAML text `NAME: VALUE` (a block for maps, sets and lists), ending in a newline.

    Raises:
        RulecheckError: `RENDER_VALUE` when a value has no exact YAML form.
    """
    return "".join(_entry(name, value, 0, name))


def _entry(key: str, value: Any, depth: int, path: str) -> list[str]:
    prefix = _INDENT * depth + _key(key) + ":"
    if isinstance(value, dict):
        if not value:
            return [prefix + " {}\n"]
        lines = [prefix + "\n"]
        for inner, item in value.items():
            lines += _entry(str(inner), item, depth + 1, f"{path}.{inner}")
        return lines
    if isinstance(value, list | tuple | frozenset | set):
        items = sorted(value, key=_sort_key) if isinstance(value, frozenset | set) else value
        if not items:
            return [prefix + " []\n"]
        indent = _INDENT * (depth + 1)
        return [prefix + "\n"] + [
            f"{indent}- {_scalar(item, f'{path}[{index}]')}\n" for index, item in enumerate(items)
        ]
    return [f"{prefix} {_scalar(value, path)}\n"]


def _key(key: str) -> str:
    plain = _PLAIN_KEY.fullmatch(key) and key.lower() not in _RESERVED_KEYS
    return key if plain else json.dumps(key, ensure_ascii=False)


def _sort_key(item: Any) -> tuple[str, Any]:
    return (type(item).__name__, item)


def _scalar(value: Any, path: str) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | Fraction):
        return _number(Fraction(value), path)
    raise _refuse(path, f"a {type(value).__name__} has no YAML form here")


def _number(value: Fraction, path: str) -> str:
    try:
        return decimal_spelling(value)
    except ValueError:
        raise _refuse(path, f"{value} is no terminating decimal") from None


def _refuse(path: str, why: str) -> RulecheckError:
    message = f"`{path}` cannot be rendered exactly: {why}"
    return RulecheckError([Diagnostic("RENDER_VALUE", message)], ExitCode.USAGE)
