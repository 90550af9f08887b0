"""Strict YAML built straight from the parser's event stream, without a node tree.

`yamldoc.parse_yaml_unquoted` composes the whole node tree first (each value a node with
two position marks) to check it, then builds the values from it: for a large document
the tree is several times the size of its values (a 9 MB adjudication manifest peaked at
over 200 MiB). Here each event becomes part of the value as it arrives, and the same
checks are made on the way: nesting depth, string length, numbers held exactly, duplicate
keys, and the unquoted scalars YAML 1.1 reads as another type.

Only the plain shape is built here: mappings with text keys, lists, and scalars that are
text, numbers, booleans or null, with no tag, anchor or alias. A document with anything
else, or with a problem, is read again by `yamldoc`, which decides exactly as before, so
a refusal is the one it always was.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from engine.bundle import yamldoc
from engine.limits import MAX_NESTING, MAX_STRING_CHARS
from engine.pointer import pointer_of
from engine.records import SHARED_TEXT_CHARS, record_maker

# The scalar types this reader builds itself, with PyYAML's safe constructor of each.
_BUILT = {
    f"tag:yaml.org,2002:{name}": getattr(yaml.SafeLoader, f"construct_yaml_{name}")
    for name in ("int", "float", "bool", "null")
}


class _Unusual(Exception):
    """The document is not of the plain shape this reader builds (or has a problem):
    `yamldoc` reads it and decides."""


def load_yaml(
    raw: bytes, file: str, code_prefix: str, texts: dict[str, str] | None = None
) -> tuple[Any, dict[str, tuple[str, str]]]:
    """The value of one strict YAML document, and its unquoted scalars by JSON pointer
    (what `yamldoc.parse_yaml_unquoted` returns but the node tree); its short texts shared
    through `texts` with the documents loaded before (see `documents.load_document`).

    Raises:
        RulecheckError: exit 1 when the document is malformed, as `parse_yaml_unquoted`.
    """
    text = yamldoc.document_text(raw, file, code_prefix)
    loader = yamldoc.strict_loader(text)
    try:
        built = _EventBuilder(loader, texts).document()
    except (_Unusual, yaml.YAMLError, ValueError, TypeError, OverflowError, IndexError, KeyError):
        built = None
    finally:
        loader.dispose()
    if built is None:
        data, _root, unquoted = yamldoc.parse_yaml_unquoted(raw, file, code_prefix)
        return data, unquoted
    return built


def yaml_positions_of(
    raw: bytes, file: str, wanted: Collection[str] | None = None
) -> dict[str, tuple[int, int]]:
    """The 1-based (line, column) of every value of a YAML document that parsed, by JSON
    pointer (`yamldoc.yaml_positions` of its node tree, without the tree); with `wanted`
    (pointers: one is `(pointer,)`), of those values and the values that hold them only
    (those there are): the stream is read up to the last of them, and no other position
    is kept (a large document's are tens of MiB)."""
    text = yamldoc.document_text(raw, file, "INPUT")
    loader = yamldoc.strict_loader(text)
    try:
        found: dict[str, tuple[int, int]] | None = _positions(loader, wanted)
    except (_Unusual, yaml.YAMLError):
        found = None
    finally:
        loader.dispose()
    if found is None:
        _value, root = yamldoc.parse_yaml(raw, file, "INPUT")
        every = yamldoc.yaml_positions(root)
        if wanted is None:
            return every
        kept = set(wanted) | _holders(wanted)
        return {p: at for p, at in every.items() if p in kept}
    return found


def _tagger(loader: Any) -> Callable[[Any], str]:
    """The tag PyYAML's `loader.resolve` gives a scalar event, without calling it where it
    cannot but give text: a quoted scalar, or a plain one whose first character starts
    none of the loader's implicit resolvers (`resolve` looks them up by that character;
    with a resolver for every character, or by path, it is called for every scalar). Half
    the scalars of a large manifest are names and hashes of that kind."""
    resolve, resolvers = loader.resolve, loader.yaml_implicit_resolvers
    every = None in resolvers or bool(loader.yaml_path_resolvers)
    starts = frozenset(resolvers)  # `""` among them: the empty scalar is null

    def tag(event: Any) -> str:
        plain, quoted = event.implicit
        if not every and ((quoted and not plain) or (plain and event.value[:1] not in starts)):
            return yamldoc.STR_TAG
        found: str = resolve(yaml.ScalarNode, event.value, event.implicit)
        return found

    return tag


class _EventBuilder:
    """One document's value, built event by event (see the module's docstring)."""

    __slots__ = ("_containers", "_keys", "_loader", "_makers", "_tag", "_texts", "unquoted")

    def __init__(self, loader: Any, texts: dict[str, str] | None = None) -> None:
        self._loader = loader
        self._tag = _tagger(loader)
        self._containers: list[Any] = []  # the open mappings and lists, outermost first
        self._keys: list[Any] = []  # per open container: the key whose value comes next
        # per place of lists, what makes their mappings (see `_mapping`)
        self._makers: dict[tuple[int, Any], Callable[[], dict[str, Any]]] = {}
        self.unquoted: dict[str, tuple[str, str]] = {}
        # one text per member name (as `_TreeBuilder`) and per short value, shared with
        # the documents loaded before through `texts`
        self._texts = {} if texts is None else texts

    def document(self) -> tuple[Any, dict[str, tuple[str, str]]]:
        """The document's value and its unquoted scalars; `_Unusual` where `yamldoc`
        must decide."""
        get = self._loader.get_event
        get()  # the stream's start
        if get().__class__ is not DocumentStartEvent:
            raise _Unusual  # an empty stream
        root = self._value(get)
        if get().__class__ is not DocumentEndEvent or get().__class__ is not StreamEndEvent:
            raise _Unusual  # a second document
        return root, self.unquoted

    def _mapping(self, top: Any) -> dict[str, Any]:
        """A new mapping: an item of a list shares its key table (`engine.records`) with
        the items of the lists at the same depth under the same member name, lists of
        records being most of a large document."""
        if top.__class__ is not list:
            return {}
        keys = self._keys
        place = (len(keys), keys[-2] if len(keys) > 1 else None)
        maker = self._makers.get(place)
        if maker is None:
            maker = self._makers[place] = record_maker(("yaml", *place))
        return maker()

    def _value(self, get: Any) -> Any:
        containers, keys = self._containers, self._keys
        while True:
            event = get()
            kind = event.__class__
            top = containers[-1] if containers else None
            if kind is ScalarEvent:
                if top.__class__ is dict and keys[-1] is _NO_KEY:
                    keys[-1] = self._key(event, top)
                    continue
                tag, value = self._scalar(event)
                if not event.style:  # neither quoted, literal nor folded
                    self._note_unquoted(event.value, tag)
                if top is None:
                    return value
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if event.anchor is not None or event.tag is not None:
                    raise _Unusual
                if len(containers) >= MAX_NESTING or (
                    top.__class__ is dict and keys[-1] is _NO_KEY
                ):
                    raise _Unusual  # too deep, or a mapping or list as a key
                value = self._mapping(top) if kind is MappingStartEvent else []
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                done = containers.pop()
                keys.pop()
                if not containers:
                    return done
                keys[-1] = _NO_KEY  # the mapping's value is complete (a list ignores it)
                continue
            else:
                raise _Unusual  # an alias
            if top.__class__ is dict:
                top[keys[-1]] = value
                if kind is ScalarEvent:
                    keys[-1] = _NO_KEY  # a container's key stays until it ends: its path
            elif top is not None:
                top.append(value)
            if kind is not ScalarEvent:
                containers.append(value)
                keys.append(_NO_KEY)

    def _key(self, event: Any, mapping: dict[str, Any]) -> str:
        """A member name: text, written once in its mapping."""
        if event.anchor is not None or event.tag is not None:
            raise _Unusual
        text: str = event.value
        if len(text) > MAX_STRING_CHARS:
            raise _Unusual
        if self._tag(event) != yamldoc.STR_TAG:
            raise _Unusual  # a number, boolean, null, merge (`<<`) or `=` as a key
        if text in mapping:
            raise _Unusual  # a duplicate key: `yamldoc` reports every one
        return self._texts.setdefault(text, text)

    def _scalar(self, event: Any) -> tuple[str, Any]:
        """A scalar's resolved tag and value."""
        if event.anchor is not None or event.tag is not None:
            raise _Unusual
        text: str = event.value
        if len(text) > MAX_STRING_CHARS:
            raise _Unusual
        tag = self._tag(event)
        if tag == yamldoc.STR_TAG:
            if len(text) <= SHARED_TEXT_CHARS:
                text = self._texts.setdefault(text, text)
            return tag, text
        build = _BUILT.get(tag)
        if build is None:
            raise _Unusual
        node = yaml.ScalarNode(tag, text, event.start_mark, event.end_mark, event.style)
        if tag in yamldoc.NUMBER_TAGS and not yamldoc.scalar_fits(node):
            raise _Unusual
        return tag, build(self._loader, node)

    def _note_unquoted(self, text: str, tag: str) -> None:
        """A plain scalar that YAML 1.1 reads as a boolean, number or date (as
        `yamldoc._Scan._plain` notes it)."""
        found = yamldoc.unquoted_type(text, tag)
        if found is not None:
            self.unquoted[pointer_of(self._path())] = (found, text)

    def _path(self) -> list[Any]:
        """The path of the value being placed: each open container's key or index."""
        containers = self._containers
        return [
            key if container.__class__ is dict else len(container) - (depth < len(containers) - 1)
            for depth, (container, key) in enumerate(zip(containers, self._keys, strict=True))
        ]


class _NoKey:
    """The key of a mapping whose next scalar is a key, not a value."""

    __slots__ = ()


_NO_KEY: Any = _NoKey()


def _positions(loader: Any, wanted: Collection[str] | None = None) -> dict[str, tuple[int, int]]:
    """Every value's position, by pointer, from the event stream; with `wanted`, those
    values' and their containers' only, the stream read no further than the last."""
    get, tag = loader.get_event, _tagger(loader)
    get()
    if get().__class__ is not DocumentStartEvent:
        raise _Unusual
    wanted = None if wanted is None else frozenset(wanted)
    holders = frozenset() if wanted is None else _holders(wanted)
    missing = 0 if wanted is None else len(wanted)
    found: dict[str, tuple[int, int]] = {}
    path: list[Any] = []  # the tokens of the open containers but the outermost
    following: list[Any] = []  # per open container: its next key (mapping) or index (list)
    while True:
        event = get()
        kind = event.__class__
        if kind is MappingEndEvent or kind is SequenceEndEvent:
            following.pop()
            if not path:
                return found
            path.pop()
            _advance(following)
            continue
        if kind not in _VALUE_EVENTS or event.anchor is not None or event.tag is not None:
            raise _Unusual
        if kind is ScalarEvent and following and following[-1] is _NO_KEY:
            if tag(event) != yamldoc.STR_TAG:
                raise _Unusual  # a key PyYAML rewrites (`<<`) or builds as another type
            following[-1] = event.value
            continue
        mark = event.start_mark
        pointer = pointer_of([*path, following[-1]]) if following else ""
        if wanted is None or (pointer in holders and pointer not in wanted):
            found[pointer] = (mark.line + 1, mark.column + 1)
        elif pointer in wanted:
            found[pointer] = (mark.line + 1, mark.column + 1)
            missing -= 1
            if not missing:
                return found
        if kind is ScalarEvent:
            if not following:
                return found
            _advance(following)
            continue
        if following:
            path.append(following[-1])
        following.append(_NO_KEY if kind is MappingStartEvent else 0)


_VALUE_EVENTS = frozenset((ScalarEvent, MappingStartEvent, SequenceStartEvent))


def _holders(pointers: Collection[str]) -> frozenset[str]:
    """The pointers of the values that hold those at `pointers` (each one's parents)."""
    return frozenset(
        pointer[:at] for pointer in pointers for at, char in enumerate(pointer) if char == "/"
    )


def _advance(following: list[Any]) -> None:
    """The next key or index of the innermost open container, after one of its values."""
    if following:
        following[-1] = _NO_KEY if following[-1].__class__ is not int else following[-1] + 1
