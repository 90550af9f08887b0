"""Strict YAML documents validated by a cerberus schema from `manifests/schemas/`.

PyYAML accepts duplicate keys silently and turns timestamps into datetimes; here a
duplicate key is an error and a timestamp stays the string the user wrote. Anchors and
aliases are refused: they would let a few lines expand to billions of values.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import yaml

from engine.bundle.cerberus_fast import compile_cerberus
from engine.bundle.schemac import Validator as Validator_
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.limits import (
    MAX_NESTING,
    MAX_NUMBER_DIGITS,
    MAX_STRING_CHARS,
    MAX_VALUES,
    held_as_written,
    read_input,
    too_many_values,
)
from engine.pointer import pointer_of
from engine.resources import shipped

_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_yaml(text: str) -> Any:
    """`yaml.safe_load(text)` through libyaml's parser when PyYAML has it: the same value,
    a fraction of the time (for files that are not documents of a bundle: schemas...)."""
    return yaml.load(text, Loader=_BASE_LOADER)


class _StrictLoader(_BASE_LOADER):  # type: ignore[valid-type,misc]
    """SafeLoader (libyaml's when available) without implicit timestamps; the duplicate
    keys that PyYAML accepts are found on the composed node tree."""


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _walk(node: yaml.Node, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], yaml.Node]]:
    yield path, node
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _walk(value, (*path, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _walk(item, (*path, index))


def _aliases(root: yaml.Node, text: str, file: str) -> list[Diagnostic]:
    """Refuse anchors and aliases: an alias makes one node appear in many places, and a few
    lines of nested aliases expand to billions of values (a "billion laughs" document) in
    every walk of the tree. The node graph is walked once by identity, so this is linear.
    An anchor that no alias uses is refused too, as the format says. The same walk refuses
    nesting deeper than `MAX_NESTING` (`INPUT_TOO_DEEP`), strings longer than
    `MAX_STRING_CHARS` and numbers that are not finite or not held exactly."""
    seen: set[int] = set()
    pending = [(root, 0)]
    while pending:
        node, depth = pending.pop()
        if id(node) in seen:
            return [Diagnostic("YAML_ALIAS", _ALIAS_MESSAGE, _first_alias(text, file))]
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            if depth >= MAX_NESTING:
                message = f"values nest more than {MAX_NESTING} levels deep"
                return [Diagnostic("INPUT_TOO_DEEP", message, _at(node, file))]
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    pending += [(key, depth + 1), (value, depth + 1)]
            else:
                pending += [(item, depth + 1) for item in node.value]
        else:
            problem = _scalar_problem(node, file)
            if problem is not None:
                return [problem]
    return _anchor_problems(text, file)


def _anchor_problems(text: str, file: str) -> list[Diagnostic]:
    """An anchor that no alias uses (refused too, as the format says)."""
    anchor = _first_anchor(text, file) if "&" in text else None
    return [Diagnostic("YAML_ALIAS", _ANCHOR_MESSAGE, anchor)] if anchor is not None else []


FLOAT_TAG = "tag:yaml.org,2002:float"
INT_TAG = "tag:yaml.org,2002:int"
_ANCHOR_MESSAGE = "anchors (`&name`) are not allowed, even without an alias; write each value out"


def _at(node: yaml.Node, file: str) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _scalar_problem(node: yaml.Node, file: str) -> Diagnostic | None:
    """A string too long, or a number that is not finite, too large, or (a float) not
    held as written by a 64-bit float (`engine.limits.held_as_written`)."""
    value = node.value
    if not isinstance(value, str):  # pragma: no cover - scalars hold text
        return None
    if len(value) > MAX_STRING_CHARS:
        return Diagnostic(
            "INPUT_STRING_TOO_LONG",
            f"a string of {len(value)} characters, more than the limit of {MAX_STRING_CHARS}",
            _at(node, file),
        )
    if node.tag == INT_TAG:
        digits = value.lstrip("+-").replace("_", "")
        if len(digits) > MAX_NUMBER_DIGITS:
            return Diagnostic(
                "YAML_NUMBER_RANGE",
                f"integer `{_cut(value)}` has {len(digits)} digits, more than the limit of "
                f"{MAX_NUMBER_DIGITS}",
                _at(node, file),
            )
    elif node.tag == FLOAT_TAG:
        lowered = value.lower().lstrip("+-")
        if lowered in (".nan", ".inf"):
            return Diagnostic(
                "YAML_NON_FINITE",
                f"non-finite number `{value}` is not allowed",
                _at(node, file),
                hint="numbers must be finite; quote it if it is text",
            )
        try:
            number = float(value.replace("_", "")) if ":" not in value else 0.0
        except ValueError:
            number = 0.0  # sexagesimal and other YAML 1.1 spellings: PyYAML reads them
        if not math.isfinite(number) or len(value) > MAX_NUMBER_DIGITS:
            return Diagnostic(
                "YAML_NUMBER_RANGE",
                f"number `{_cut(value)}` is outside the range of a 64-bit float",
                _at(node, file),
            )
        if ":" not in value and not held_as_written(value.replace("_", ""), number):
            return Diagnostic(
                "YAML_NUMBER_RANGE",
                f"number `{_cut(value)}` cannot be held as written by a 64-bit float (it would"
                f" be read as `{number!r}`): write a number it holds as written, or quote it",
                _at(node, file),
            )
    return None


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:20] + "..." + text[-10:]


def _first_anchor(text: str, file: str) -> Location | None:
    try:
        for token in yaml.scan(text, Loader=_BASE_LOADER):
            if isinstance(token, yaml.AnchorToken):
                mark = token.start_mark
                return Location(file, mark.line + 1, mark.column + 1)
    except yaml.YAMLError:  # pragma: no cover - the text was composed already
        return None
    return None


_ALIAS_MESSAGE = "anchors and aliases (`&name`, `*name`) are not allowed; write each value out"


def _first_alias(text: str, file: str) -> Location:
    for token in yaml.scan(text, Loader=_BASE_LOADER):
        if isinstance(token, yaml.AliasToken):
            mark = token.start_mark
            return Location(file, mark.line + 1, mark.column + 1)
    return Location(file)  # pragma: no cover - a repeated node always comes from an alias


def _duplicates(root: yaml.Node, file: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for path, node in _walk(root, ()):
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode):  # PyYAML refuses it when building
                    continue
                if key.value in seen:
                    found.append(_duplicate_key(key, path, file))
                seen.add(key.value)
    return found


def _duplicate_key(key: yaml.Node, path: tuple[Any, ...], file: str) -> Diagnostic:
    """A key written a second time in the mapping at `path`."""
    mark = key.start_mark
    return Diagnostic(
        "YAML_DUPLICATE_KEY",
        f"key `{key.value}` appears twice in the same mapping",
        Location(file, mark.line + 1, mark.column + 1, pointer=pointer_of(path)),
    )


@cache
def _strict_class() -> Any:
    # Imported on first use: cerberus takes about 60 ms to import (importlib.metadata), and
    # a document that passes its compiled check (`engine/bundle/cerberus_fast.py`) never
    # needs it.
    from cerberus import TypeDefinition, Validator

    class StrictValidator(Validator):  # type: ignore[misc]
        """Cerberus where `true`/`false` are never numbers (Python's bool is an int)."""

        types_mapping: ClassVar[dict[str, TypeDefinition]] = {
            **Validator.types_mapping,
            "integer": TypeDefinition("integer", (int,), (bool,)),
            "float": TypeDefinition("float", (float, int), (bool,)),
            "number": TypeDefinition("number", (int, float), (bool,)),
        }

    return StrictValidator


def strict_validator(schema: dict[str, Any]) -> Any:
    """A cerberus validator of `schema`, every field required, `true`/`false` never
    numbers. Cerberus checks the schema itself here: its SchemaError for a bad one."""
    return _strict_class()(schema, require_all=True)


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A shipped cerberus schema by file stem, e.g. `rules_lock`."""
    text = shipped("schemas").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    schema: dict[str, Any] = safe_yaml(text)
    return schema


@cache
def _fast_check(name: str) -> Validator_:
    return compile_cerberus(load_schema(name))


def _cerberus_errors(
    tree: dict[str, Any], path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], str]]:
    for key, value in sorted(tree.items(), key=lambda item: str(item[0])):
        for entry in value:
            if isinstance(entry, dict):
                yield from _cerberus_errors(entry, (*path, key))
            else:
                yield (*path, key), str(entry)


def cerberus_validator(schema: dict[str, Any], checked: bool = False) -> Validator_:
    """A validator with the interface of a compiled JSON Schema (value -> every violation
    as pointer, keyword and message) for a cerberus schema, every field required.

    Cerberus checks the schema now, unless it is `checked` (these exact bytes were found
    to be a cerberus schema before, `engine/check/schemacache.py`): then cerberus is
    imported and its validator made only for a document the compiled check refuses.

    Raises:
        ValueError: when `schema` is not a cerberus schema (cerberus's SchemaError).
    """
    validator = None if checked else _cerberus_of(schema)  # cerberus's words first
    fast = compile_cerberus(schema)

    def validate(value: Any) -> list[tuple[str, str, str]]:
        nonlocal validator
        if not isinstance(value, dict):
            return [("", "type", "the document must be a mapping")]
        if not fast(value):
            return []
        if validator is None:
            try:
                validator = _cerberus_of(schema)
            except ValueError as error:  # the schema was not what the record of it said
                return [("", "cerberus", str(error))]
        if validator.validate(value):
            return []
        return [
            (pointer_of(path), "cerberus", f"`{pointer_of(path)}`: {message}")
            for path, message in _cerberus_errors(validator.errors)
        ]

    return validate


def _cerberus_of(schema: dict[str, Any]) -> Any:
    try:
        return strict_validator(schema)
    except Exception as error:  # cerberus raises its own SchemaError for a bad schema
        raise ValueError(f"not a cerberus schema: {error}"[:300]) from None


def read_yaml(path: Path, code_prefix: str) -> tuple[Any, yaml.Node]:
    """Read and parse one strict YAML document: the data and its node tree (for positions).

    Raises:
        RulecheckError: exit 2 when the file cannot be read, exit 1 when it is malformed.
    """
    return parse_yaml(read_input(path), str(path), code_prefix)


def parse_yaml(raw: bytes, file: str, code_prefix: str) -> tuple[Any, yaml.Node]:
    """Parse the bytes of one strict YAML document (see `read_yaml`); exit 1 when malformed."""
    data, root, _unquoted = parse_yaml_unquoted(raw, file, code_prefix)
    return data, root


def parse_yaml_unquoted(
    raw: bytes, file: str, code_prefix: str
) -> tuple[Any, yaml.Node, dict[str, tuple[str, str]]]:
    """`parse_yaml`, and the document's unquoted scalars: those written without quotes or
    tag that YAML 1.1 reads as a boolean, a number or a date (`no`, `0755`, `2024-01-01`),
    by JSON pointer, as that type's name and the scalar as written. They are found in the
    one walk of the node tree that also checks it."""
    text = document_text(raw, file, code_prefix)
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise yaml.YAMLError("the document is empty")
        scan = _Scan(text)
        problems = (
            _aliases(root, text, file)
            if not scan.visit(root, 0)
            else _anchor_problems(text, file)
            or (_duplicates(root, file) if scan.complex_keys else scan.duplicates(file))
        )
        if problems:
            raise RulecheckError(problems, ExitCode.REFUSED)
        if scan.plain_keys:
            data, unquoted = _construct(loader, root), scan.unquoted
        else:
            data = loader.construct_document(root)
            # PyYAML's constructor merged the `<<` keys into their mappings, in the tree
            # too: the unquoted scalars are those of the tree as it built it
            rescan = _Scan(text)
            rescan.visit(root, 0)
            unquoted = rescan.unquoted
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        message = str(getattr(error, "problem", None) or error)
        diagnostic = Diagnostic(
            f"{code_prefix}_INVALID_YAML", message, Location(file, line, column)
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED) from None
    except (ValueError, TypeError, OverflowError, IndexError, KeyError) as error:
        # a value PyYAML cannot build, such as `!!float` or `!!int` with nothing after it
        diagnostic = Diagnostic(
            f"{code_prefix}_INVALID_YAML", f"a value cannot be read: {error}"[:200], Location(file)
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED) from None
    finally:
        loader.dispose()
    return data, root, unquoted


def document_text(raw: bytes, file: str, code_prefix: str) -> str:
    """The text of a YAML document's bytes, once they can hold no more values than a
    document may (`INPUT_TOO_MANY_RECORDS`) and are UTF-8 (`{code_prefix}_INVALID_UTF8`).

    Raises:
        RulecheckError: exit 1 for either problem.
    """
    too_many = too_many_values(raw, file, yaml=True) if len(raw) > MAX_VALUES // 4 else None
    if too_many is not None:
        raise too_many
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        diagnostic = Diagnostic(
            f"{code_prefix}_INVALID_UTF8", f"not valid utf-8 at byte {error.start}", Location(file)
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED) from None


def strict_loader(text: str) -> yaml.SafeLoader:
    """The strict loader over one document's text (libyaml's parser when installed);
    the caller disposes of it."""
    return _StrictLoader(text)


_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_REWRITTEN_KEYS = frozenset(("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"))


def _construct(loader: _StrictLoader, root: yaml.Node) -> Any:
    """`loader.construct_document(root)` for a checked tree whose keys are all plain
    (`_Scan.plain_keys`): texts, mappings and lists built directly, other values by
    PyYAML's constructor. Where that raises, the document is built again by PyYAML alone,
    so the error is the one it always gave (it builds in another order)."""
    try:
        data = _TreeBuilder(loader).build(root)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, IndexError, KeyError):
        loader.constructed_objects = {}
        loader.recursive_objects = {}
        loader.state_generators = []
        loader.deep_construct = False
        return loader.construct_document(root)
    loader.constructed_objects = {}
    return data


class _TreeBuilder:
    """The values of a node tree (see `_construct`). A class, not nested functions: a
    function that calls itself through its closure is a reference cycle, and the cycle
    would hold the loader and its copy of the file's text until the cyclic collector runs,
    which it does not while a bundle loads (engine/gcpolicy.py)."""

    __slots__ = ("loader", "names")

    def __init__(self, loader: _StrictLoader) -> None:
        self.loader = loader
        self.names: dict[str, str] = {}  # libyaml makes a text per key written: one per name

    def name(self, node: yaml.Node) -> Any:
        key = self.build(node)
        return self.names.setdefault(key, key) if key.__class__ is str else key

    def build(self, node: yaml.Node) -> Any:
        tag = node.tag
        if tag == STR_TAG and node.__class__ is yaml.ScalarNode:
            return node.value
        if tag == _MAP_TAG and node.__class__ is yaml.MappingNode:
            return {self.name(key): self.build(value) for key, value in node.value}
        if tag == _SEQ_TAG and node.__class__ is yaml.SequenceNode:
            return [self.build(item) for item in node.value]
        return self.loader.construct_object(node, deep=True)


def yaml_positions(root: yaml.Node) -> dict[str, tuple[int, int]]:
    """The 1-based (line, column) of every value of a YAML node tree, by JSON pointer."""
    return {
        pointer_of(path): (node.start_mark.line + 1, node.start_mark.column + 1)
        for path, node in _walk(root, ())
    }


# What YAML 1.1 makes of a plain scalar, when not a string. The strict loader keeps
# timestamps as text, but other readers do not, so an unquoted date is no text either.
_IMPLICIT_TYPES = {
    "tag:yaml.org,2002:bool": "boolean",
    "tag:yaml.org,2002:int": "number",
    "tag:yaml.org,2002:float": "number",
    "tag:yaml.org,2002:timestamp": "date",
}
_YAML_11 = yaml.resolver.Resolver()


STR_TAG = "tag:yaml.org,2002:str"
# A YAML 1.1 timestamp, the only implicit type the strict loader does not resolve, starts
# with four of these and a `-`: a plain scalar it reads as text that does not is text to
# YAML 1.1 too.
_DIGITS = frozenset("0123456789")
NUMBER_TAGS = frozenset((INT_TAG, FLOAT_TAG))


def unquoted_type(plain: str, tag: str) -> str | None:
    """What YAML 1.1 reads a plain scalar without a tag as, when not text (`boolean`,
    `number`, `date`), given the tag the strict loader resolved it to; None for text."""
    if tag == STR_TAG and (plain[4:5] != "-" or plain[:1] not in _DIGITS):
        return None  # the strict loader resolved every implicit type but a timestamp
    found = _YAML_11.resolve(yaml.ScalarNode, plain, (True, False))  # type: ignore[no-untyped-call]
    return _IMPLICIT_TYPES.get(found)


def scalar_fits(node: yaml.Node) -> bool:
    """No string too long, no number out of range (what `_scalar_problem` refuses)."""
    if len(node.value) > MAX_STRING_CHARS:
        return False
    return node.tag not in NUMBER_TAGS or _scalar_problem(node, "") is None


class _Scan:
    """One walk of a composed node tree that finds what `_aliases` refuses, the keys
    `_duplicates` reports and the unquoted scalars (three walks before: on a large
    manifest they cost more than composing it). `visit` is False at the first alias,
    too deep nesting or bad scalar: `_aliases` then says which problem comes first."""

    __slots__ = (
        "_aliased",
        "_dupes",
        "_path",
        "_seen",
        "_text",
        "complex_keys",
        "plain_keys",
        "unquoted",
    )

    def __init__(self, text: str) -> None:
        self._text = text
        # without a `*` in the text no node can appear twice: no need to remember them
        self._aliased = "*" in text
        self._seen: set[int] = set()
        self._path: list[Any] = []
        self._dupes: list[tuple[tuple[Any, ...], yaml.Node]] = []
        self.unquoted: dict[str, tuple[str, str]] = {}
        # a key that is a mapping or list: PyYAML refuses it when building, and
        # `_duplicates` reports what it finds around it in its own way
        self.complex_keys = False
        # no key is complex, a merge (`<<`) or `=`, which PyYAML's constructor rewrites
        self.plain_keys = True

    def visit(self, node: yaml.Node, depth: int, *, value: bool = True) -> bool:
        """Walk `node` (a mapping's key when not `value`): False at a problem."""
        if self._aliased and not self._first_time(node):
            return False
        if node.__class__ is yaml.ScalarNode:
            if not scalar_fits(node):
                return False
            if value and not node.style:  # neither quoted, literal nor folded
                self._plain(node)
            return True
        if depth >= MAX_NESTING:
            return False
        path = self._path
        if isinstance(node, yaml.MappingNode):
            self._keys(node)
            for key, item in node.value:
                if key.__class__ is yaml.ScalarNode and not self._aliased:
                    if not scalar_fits(key):
                        return False
                elif not self.visit(key, depth + 1, value=False):
                    return False
                path.append(key.value)
                if item.__class__ is yaml.ScalarNode and not self._aliased:
                    if not scalar_fits(item):
                        return False
                    if not item.style:
                        self._plain(item)
                elif not self.visit(item, depth + 1):
                    return False
                path.pop()
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                path.append(index)
                if not self.visit(item, depth + 1):
                    return False
                path.pop()
        return True

    def _first_time(self, node: yaml.Node) -> bool:
        if id(node) in self._seen:
            return False
        self._seen.add(id(node))
        return True

    def _keys(self, node: yaml.Node) -> None:
        """Note a mapping's duplicate keys (before those of the values inside it, in the
        order `_duplicates` reports them) and the keys PyYAML's constructor rewrites."""
        names: set[Any] = set()
        for key, _ in node.value:
            if key.__class__ is yaml.ScalarNode:  # PyYAML refuses others when building
                if key.value in names:
                    self._dupes.append((tuple(self._path), key))
                names.add(key.value)
                if key.tag in _REWRITTEN_KEYS:
                    self.plain_keys = False
            else:
                self.complex_keys = True
                self.plain_keys = False

    def _plain(self, node: yaml.Node) -> None:
        if self._text.startswith("!", node.start_mark.index):  # an explicit tag says what it is
            return
        found = unquoted_type(node.value, node.tag)
        if found is not None:
            self.unquoted[pointer_of(self._path)] = (found, node.value)

    def duplicates(self, file: str) -> list[Diagnostic]:
        """Every key written twice in the same mapping, as `_duplicates` reports them."""
        return [_duplicate_key(key, path, file) for path, key in self._dupes]


def load_yaml_document(path: Path, schema_name: str, code_prefix: str) -> dict[str, Any]:
    """Read, parse and validate a YAML document; every problem is located.

    Raises:
        RulecheckError: exit 2 when the file cannot be read, exit 1 when it is malformed.
    """
    file = str(path)
    data, root = read_yaml(path, code_prefix)
    if not isinstance(data, dict):
        diagnostic = Diagnostic(
            f"{code_prefix}_SCHEMA",
            "the document must be a mapping",
            Location(file, 1, 1, pointer=""),
        )
        raise RulecheckError([diagnostic], ExitCode.REFUSED)
    if not _fast_check(schema_name)(data):
        return data
    validator = strict_validator(load_schema(schema_name))
    if not validator.validate(data):
        nodes = dict(_walk(root, ()))
        diagnostics = []
        for error_path, message in _cerberus_errors(validator.errors):
            node = nodes.get(error_path) or nodes.get(error_path[:-1])
            mark = node.start_mark if node is not None else None
            diagnostics.append(
                Diagnostic(
                    f"{code_prefix}_SCHEMA",
                    f"`{pointer_of(error_path)}`: {message}",
                    Location(
                        file,
                        mark.line + 1 if mark else None,
                        mark.column + 1 if mark else None,
                        pointer=pointer_of(error_path),
                    ),
                )
            )
        raise RulecheckError(diagnostics, ExitCode.REFUSED)
    document: dict[str, Any] = validator.document
    return document
