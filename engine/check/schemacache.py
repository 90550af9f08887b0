"""Protocol schemas known to compile, remembered between processes.

Checking that each schema a protocol names compiles (`check.protocols`) is most of what
`rulecheck lint` does besides parsing: PyYAML and cerberus are imported, cerberus
validates each of its schemas against its own rules, and every JSON Schema's checks are
generated. The compiled validator is not used by lint, so what is kept is only the fact
that a schema of these bytes compiled: an entry named by, and holding, the sha256 of the
bytes, the kind of schema, the engine's sources, Python and the sources of PyYAML and
cerberus. It sits beside the parse cache (`engine/syntax/parsecache.py`: same private
folder, same off switch `RULECHECK_PARSE_CACHE=off`). A schema that does not compile is
never kept, so every SCHEMA_INVALID comes from a compile; an entry that cannot be read,
does not hold exactly the expected key, or lies in a folder others may write is ignored
and the schema compiled again. The validator that checks a bundle is always compiled.
"""

from __future__ import annotations

from functools import cache

from engine.resources import library_source_digest
from engine.verdictcache import VerdictCache, depends_on

_FORMAT = "1"
KEEP = 256


@cache
def _versions() -> str:
    """sha256 of what a schema's compiling depends on besides its bytes. Read once per
    process."""
    return depends_on(_FORMAT, library_source_digest("yaml"), library_source_digest("cerberus"))


_CACHE = VerdictCache("schema-")


def compiled_before(raw: bytes, kind: str) -> bool:
    """True when a schema of these bytes and kind (`json` or `cerberus`) is known to have
    compiled; False when it must be compiled to know."""
    return _CACHE.recall(raw, kind, _versions())[0]


def remember_compiled(raw: bytes, kind: str) -> None:
    """Keep the fact that a schema of these bytes and kind compiled; give up quietly on
    any failure."""
    _CACHE.keep(raw, kind, _versions(), True, KEEP)
