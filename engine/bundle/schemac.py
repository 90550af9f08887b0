"""A compiler for the JSON Schema (draft-07) subset our contract files use.

Each schema node becomes a generated Python function that checks one value and appends
every violation, with its JSON pointer, to a list: one pass gives the whole error list,
at the speed of hand-written checks. A keyword outside the subset is refused when the
schema is compiled, never silently ignored. `tests/test_schemac.py` holds it to the
`jsonschema` reference implementation.

Integers are strict: a JSON `10.0` or `true` is not an integer.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from engine.codecache import compiled
from engine.limits import MAX_FINDINGS
from engine.pointer import escape_token
from engine.valuekey import value_key

SchemaError = tuple[str, str, str]  # (pointer, keyword, message)


class _TooMany(Exception):
    """A validation found more than `MAX_FINDINGS` errors."""


class _Findings(list[SchemaError]):
    """The errors of one validation, at most `MAX_FINDINGS`: appending one more stops it
    (only a value that fails calls these, so a valid one costs nothing more)."""

    __slots__ = ()

    def append(self, error: SchemaError) -> None:
        if len(self) >= MAX_FINDINGS:
            raise _TooMany
        super().append(error)

    def extend(self, errors: Any) -> None:
        for error in errors:
            self.append(error)


# `escape_token(k)` (engine/pointer.py) written inline: the pointer token of a member `k`,
# made for every member a generated check walks, where a call would cost more.
_KEY_TOKEN = "str(k).replace('~', '~0').replace('/', '~1')"

STOPPED = "stopped"  # the keyword of the error that says a validation stopped at the bound
Validator = Callable[[Any], list[SchemaError]]

_DEFINITIONS = "#/definitions/"  # the one kind of `$ref` compiled: a local definition
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment", "definitions"})
_SUPPORTED = (
    frozenset(
        {
            "$ref",
            "type",
            "properties",
            "required",
            "additionalProperties",
            "propertyNames",
            "minProperties",
            "items",
            "minItems",
            "maxItems",
            "uniqueItems",
            "enum",
            "const",
            "pattern",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "allOf",
            "oneOf",
            "anyOf",
        }
    )
    | _ANNOTATIONS
)
_TYPE_TESTS = {
    "object": "{x}.__class__ is dict",
    "array": "{x}.__class__ is list",
    "string": "{x}.__class__ is str",
    "integer": "{x}.__class__ is int",
    "number": "({x}.__class__ is int or isinstance({x}, float) or {x}.__class__ is _Decimal)",
    "boolean": "{x}.__class__ is bool",
    "null": "{x} is None",
}
# The keywords of a scalar check, inlined where it is used (see `_Generator.inline`).
_SCALAR = (
    frozenset({"type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum"})
    | _ANNOTATIONS
)


def resolved(root: Any, schema: Any) -> Any:
    """The schema a chain of `$ref`s from `schema` ends at, as this compiler reads them
    (`#/definitions/NAME`, NAME taken as written, the `$ref`'s siblings left out); None
    for a cycle of them or a reference that names nothing (which compiling refuses)."""
    definitions = root.get("definitions") if isinstance(root, dict) else None
    if not isinstance(definitions, dict):
        definitions = {}
    seen: set[str] = set()
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith(_DEFINITIONS) or ref in seen:
            return None
        seen.add(ref)
        schema = definitions.get(ref.removeprefix(_DEFINITIONS))
    return schema


class SchemaCompileError(ValueError):
    """The schema uses something this compiler does not implement."""


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = "a value nested too deep to show" if isinstance(value, list | dict) else repr(value)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _unique(items: list[Any]) -> bool:
    try:  # values distinct as they are stay distinct when `true` is told apart from `1`
        if len(set(items)) == len(items):
            return True
    except TypeError:  # a list or an object among them
        pass
    keys = [value_key(item) for item in items]
    return len(keys) == len(set(keys))


# A pattern's verdict on a text never changes, and a bundle's texts repeat (ids, paths,
# the same enum-like values in every answer): each pattern keeps the short texts it
# matched, up to a bound, so that most checks are one set lookup instead of a search.
_MATCHED_KEPT = 2048
_MATCHED_CHARS = 256


# Patterns schemas use for a shape that a text method decides in constant time, and the
# Python condition (on the text `{x}`) that holds exactly when the pattern matches:
# `\s` of a `str` pattern is what `str.isspace` is, character for character (both are
# CPython's Py_UNICODE_ISSPACE; tests/test_schemac.py checks every code point). A regex
# scans the whole text: on an answer's hundred texts that was a quarter of the schema.
PATTERN_IDIOMS: dict[str, str] = {
    # no leading or trailing whitespace (the empty text included)
    r"^(?!\s)[\s\S]*(?<!\s)(?![\s\S])": "not {x} or not ({x}[0].isspace() or {x}[-1].isspace())",
}


def _matched(pattern: re.Pattern[str], seen: set[str], text: str) -> bool:
    if pattern.search(text) is None:
        return False
    if len(seen) < _MATCHED_KEPT and len(text) <= _MATCHED_CHARS:
        seen.add(text)
    return True


class _Generator:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.namespace: dict[str, Any] = {
            "_Decimal": Decimal,
            "_shown": _shown,
            "_unique": _unique,
            "_matched": _matched,
            "_value_key": value_key,
            "_P": _pointer,
            "_MISSING": object(),
        }
        self.sources: list[str] = []
        self.counter = itertools.count()
        self.refs: dict[str, str] = {}

    def constant(self, value: Any) -> str:
        name = f"K{next(self.counter)}"
        self.namespace[name] = value
        return name

    def function(self, schema: Any, name: str | None = None) -> str:
        """The name of a generated function `f(x, p, E)` checking `schema` (under `name`
        when given: a definition's own name, so that it may refer to itself)."""
        if schema is True or schema == {}:
            return "_accept"
        if not isinstance(schema, dict):
            raise SchemaCompileError(f"a schema must be an object, not {schema!r}")
        unknown = sorted(set(schema) - _SUPPORTED)
        if unknown:
            raise SchemaCompileError("unsupported keyword(s): " + ", ".join(unknown))
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise SchemaCompileError("`$ref` must be a string")
            return self.reference(schema["$ref"])
        name = name or f"s{next(self.counter)}"
        body = self.body(schema)
        self.sources.append(
            f"def {name}(x, p, E):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
        )
        return name

    def reference(self, ref: str) -> str:
        if not ref.startswith(_DEFINITIONS):
            raise SchemaCompileError(f"only local `#/definitions/...` references, not `{ref}`")
        key = ref.removeprefix(_DEFINITIONS)
        if key not in self.refs:
            definitions = self.root.get("definitions", {})
            if not isinstance(definitions, dict):
                raise SchemaCompileError("`definitions` must be an object")
            target = definitions.get(key)
            if target is None:
                raise SchemaCompileError(f"`{ref}` names no definition")
            name = f"d{next(self.counter)}"
            self.refs[key] = name
            if isinstance(target, dict) and target and "$ref" not in target:
                self.function(target, name)  # inlined: no call through a wrapper per value
            else:
                self.sources.append(
                    f"def {name}(x, p, E):\n    return {self.function(target)}(x, p, E)\n"
                )
        return self.refs[key]

    def body(self, schema: dict[str, Any], x: str = "x", p: str = "p") -> list[str]:
        """Lines checking the value named `x` against `schema`; `p` is the code of its
        pointer (evaluated only when an error is appended)."""
        lines: list[str] = []
        rest: list[str] = []
        types: list[str] = []
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            unknown = [t for t in types if not isinstance(t, str) or t not in _TYPE_TESTS]
            if unknown:
                raise SchemaCompileError(f"unknown type(s) {unknown}")
            test = " or ".join(_TYPE_TESTS[t].format(x=x) for t in types)
            lines += [
                f"if not ({test}):",
                f"    E.append((_P({p}), 'type', _shown({x}) + ' is not of type "
                f"{' or '.join(types)}'))",
            ]
        if "enum" in schema:
            if not isinstance(schema["enum"], list):
                raise SchemaCompileError("`enum` must be an array")
            allowed = self.constant([value_key(v) for v in schema["enum"]])
            texts = self.constant(frozenset(v for v in schema["enum"] if v.__class__ is str))
            text = " is not one of " + ", ".join(json.dumps(v) for v in schema["enum"])
            rest += [
                f"if not ({x} in {texts} if {x}.__class__ is str"
                f" else _value_key({x}) in {allowed}):",
                f"    E.append((_P({p}), 'enum', _shown({x}) + {text!r}))",
            ]
        if "const" in schema:
            value = self.constant(value_key(schema["const"]))
            rest += [
                f"if _value_key({x}) != {value}:",
                f"    E.append((_P({p}), 'const', _shown({x}) + ' is not the required value'))",
            ]
        rest += self.strings(schema, types, x, p) + self.numbers(schema, types, x, p)
        rest += self.arrays(schema, types) + self.objects(schema, types)
        rest += self.combinations(schema)
        if not lines:
            return rest
        return lines + (["else:", *("    " + line for line in rest)] if rest else [])

    def inline(self, schema: Any, x: str, p: str) -> list[str] | None:
        """Lines checking `x` in place of a call, when `schema` (through its `$ref`s) is a
        scalar check: no call and no pointer built per value."""
        schema = self.resolved(schema)
        if not isinstance(schema, dict) or not schema or not set(schema) <= _SCALAR:
            return None
        return self.body(schema, x, p)

    def resolved(self, schema: Any) -> Any:
        """The schema a chain of `$ref`s ends at (None for a cycle of them)."""
        return resolved(self.root, schema)

    def type_test(self, schema: Any) -> str:
        """The name of a generated `t(x)` telling whether `x` has one of the schema's
        types, or `None` when the schema has no `type`."""
        target = self.resolved(schema)
        if not isinstance(target, dict) or "type" not in target:
            return "None"
        types = target["type"] if isinstance(target["type"], list) else [target["type"]]
        name = f"t{next(self.counter)}"
        test = " or ".join(_TYPE_TESTS[t].format(x="x") for t in types)
        self.sources.append(f"def {name}(x):\n    return {test}\n")
        return name

    def call(self, schema: Any, x: str, p: str) -> list[str]:
        """Lines checking `x` against `schema`: inline, or a call of its function."""
        function = self.function(schema)  # compiled (and refused) either way
        if function == "_accept":
            return []
        inlined = self.inline(schema, x, p)
        return inlined if inlined is not None else [f"{function}({x}, {p}, E)"]

    def strings(self, schema: dict[str, Any], types: list[str], x: str, p: str) -> list[str]:
        checks: list[str] = []
        if "minLength" in schema:
            limit = _count(schema, "minLength")
            checks += [
                f"if len({x}) < {limit}:",
                f"    E.append((_P({p}), 'minLength',"
                f" 'text is shorter than {limit} character(s)'))",
            ]
        if "maxLength" in schema:
            limit = _count(schema, "maxLength")
            checks += [
                f"if len({x}) > {limit}:",
                f"    E.append((_P({p}), 'maxLength', 'text is longer than {limit} characters'"
                f" + ' (%d)' % len({x})))",
            ]
        if "pattern" in schema:
            if not isinstance(schema["pattern"], str):
                raise SchemaCompileError("`pattern` must be a string")
            shown = json.dumps(schema["pattern"]).replace("'", "\\'")
            checks += [
                f"if not ({self._matches(schema['pattern'], x)}):",
                f"    E.append((_P({p}), 'pattern', _shown({x}) + ' does not match `' + "
                f"{shown!r} + '`'))",
            ]
        return _guarded(checks, types, ("string",), f"{x}.__class__ is str")

    def _matches(self, source: str, x: str) -> str:
        """A condition on the text `x` that holds when pattern `source` matches it."""
        idiom = PATTERN_IDIOMS.get(source)
        if idiom is not None:
            return idiom.format(x=x)
        try:
            pattern = self.constant(re.compile(source))
        except re.error as error:
            raise SchemaCompileError(f"`pattern` is not a regular expression: {error}") from None
        seen = self.constant(set())
        return f"{x} in {seen} or _matched({pattern}, {seen}, {x})"

    def numbers(self, schema: dict[str, Any], types: list[str], x: str, p: str) -> list[str]:
        checks: list[str] = []
        for keyword, op, word in (("minimum", "<", "less"), ("maximum", ">", "greater")):
            if keyword in schema:
                limit = schema[keyword]
                if limit.__class__ not in (int, float) or not math.isfinite(limit):
                    raise SchemaCompileError(f"`{keyword}` must be a finite number")
                checks += [
                    f"if {x} {op} {limit!r}:",
                    f"    E.append((_P({p}), '{keyword}',"
                    f" _shown({x}) + ' is {word} than {limit}'))",
                ]
        test = _TYPE_TESTS["number"].format(x=x)
        return _guarded(checks, types, ("integer", "number"), test)

    def arrays(self, schema: dict[str, Any], types: list[str]) -> list[str]:
        checks: list[str] = []
        if "minItems" in schema:
            limit = _count(schema, "minItems")
            checks += [
                f"if len(x) < {limit}:",
                f"    E.append((_P(p), 'minItems', 'fewer than {limit} item(s) (%d)' % len(x)))",
            ]
        if "maxItems" in schema:
            limit = _count(schema, "maxItems")
            checks += [
                f"if len(x) > {limit}:",
                f"    E.append((_P(p), 'maxItems', 'more than {limit} items (%d)' % len(x)))",
            ]
        if schema.get("uniqueItems"):
            checks += [
                "if len(x) > 1 and not _unique(x):",  # most lists hold one item
                "    E.append((_P(p), 'uniqueItems', 'items are not unique'))",
            ]
        if "items" in schema:
            if not isinstance(schema["items"], dict):
                raise SchemaCompileError("only a single `items` schema is supported")
            item = self.call(schema["items"], "v", "(p, i)")
            if item:
                checks += ["for i, v in enumerate(x):", *("    " + line for line in item)]
        return _guarded(checks, types, ("array",), "x.__class__ is list")

    def objects(self, schema: dict[str, Any], types: list[str]) -> list[str]:
        checks: list[str] = []
        properties: dict[str, Any] = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise SchemaCompileError("`properties` must be an object")
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise SchemaCompileError("`required` must be an array of strings")
        extra = schema.get("additionalProperties", True)
        known = self.constant(frozenset(properties))
        if extra is False:  # the keys are walked one by one only when one is unexpected
            checks += [
                f"if not {known}.issuperset(x):",
                "    for k in x:",
                f"        if k not in {known}:",
                "            E.append((_P(p), 'additionalProperties', 'unexpected key `%s`' % k))",
            ]
        elif isinstance(extra, dict):
            function = self.function(extra)
            checks += [
                "for k, v in x.items():",
                f"    if k not in {known}:",
                f"        {function}(v, (p, {_KEY_TOKEN}), E)",
            ]
        elif extra is not True:
            raise SchemaCompileError("`additionalProperties` must be true, false or a schema")
        names = self.function(schema.get("propertyNames", True))
        if names != "_accept":  # each key is checked as a value, located at its own entry
            checks += [
                "for k in x:",
                f"    {names}(k, (p, {_KEY_TOKEN}), E)",
            ]
        if "minProperties" in schema:
            limit = _count(schema, "minProperties")
            checks += [
                f"if len(x) < {limit}:",
                f"    E.append((_P(p), 'minProperties', 'fewer than {limit} entries'))",
            ]
        indent = ""
        if len(required) > 1:  # one test for them all; each missing one is then named
            checks.append(f"if not {self.constant(frozenset(required))}.issubset(x):")
            indent = "    "
        for key in required:
            checks += [
                f"{indent}if {key!r} not in x:",
                f"{indent}    E.append((_P(p), 'required', {f'`{key}` is a required property'!r}))",
            ]
        for key, subschema in properties.items():
            lines = self.call(subschema, "v", f"(p, {escape_token(key)!r})")
            if not lines:
                continue
            checks += [
                f"v = x.get({key!r}, _MISSING)",
                "if v is not _MISSING:",
                *("    " + line for line in lines),
            ]
        return _guarded(checks, types, ("object",), "x.__class__ is dict")

    def combinations(self, schema: dict[str, Any]) -> list[str]:
        lines: list[str] = []
        if "allOf" in schema:  # every branch holds: each one's errors are the value's own
            if not isinstance(schema["allOf"], list):
                raise SchemaCompileError("`allOf` must be an array")
            for branch in schema["allOf"]:
                lines += self.call(branch, "x", "p")
        for keyword in ("oneOf", "anyOf"):
            if keyword in schema:
                if not isinstance(schema[keyword], list):
                    raise SchemaCompileError(f"`{keyword}` must be an array")
                branches = [self.function(branch) for branch in schema[keyword]]
                tests = [self.type_test(branch) for branch in schema[keyword]]
                lines.append(
                    f"_combine({keyword!r}, ({', '.join(branches)},), ({', '.join(tests)},),"
                    " x, p, E)"
                )
        return lines


def _count(schema: dict[str, Any], keyword: str) -> int:
    """The value of a keyword that counts (a length, a number of items or entries)."""
    value = schema[keyword]
    if value.__class__ is not int or value < 0:
        raise SchemaCompileError(f"`{keyword}` must be a non-negative integer")
    return int(value)


def _guarded(checks: list[str], types: list[str], implied: tuple[str, ...], test: str) -> list[str]:
    """`checks` under `if test:`, unless the schema's type check already implies it."""
    if not checks:
        return []
    if types and all(t in implied for t in types):
        return checks
    return [f"if {test}:", *("    " + c for c in checks)]


def _pointer(p: Any) -> str:
    """The JSON pointer of a value from its lazy form: a text, or (parent, token) with an
    escaped member name or a list index as the token (built only for an error)."""
    if p.__class__ is str:
        return str(p)
    tokens: list[str] = []
    while p.__class__ is tuple:
        p, token = p
        tokens.append(str(token))
    tokens.append(p)
    return "/".join(reversed(tokens))


def _combine(
    keyword: str,
    branches: tuple[Callable[[Any, Any, list[SchemaError]], None], ...],
    tests: tuple[Callable[[Any], bool] | None, ...],
    x: Any,
    p: Any,
    errors: list[SchemaError],
) -> None:
    """oneOf/anyOf: report the errors of the one branch whose type fits, if there is one.

    A branch whose type does not fit is not run (None): its one error, a type error at
    `p`, would never be reported, and its message shows the whole value."""
    results: list[list[SchemaError] | None] = []
    for branch, fits in zip(branches, tests, strict=True):
        if fits is not None and not fits(x):
            results.append(None)
            continue
        found: list[SchemaError] = errors.__class__()
        with contextlib.suppress(_TooMany):  # then the branch failed: its first errors show how
            branch(x, p, found)
        results.append(found)
    passed = sum(1 for found in results if found is not None and not found)
    if passed == 1 or (passed > 1 and keyword == "anyOf"):
        return
    if passed > 1:
        errors.append((_pointer(p), keyword, _shown(x) + " matches more than one allowed shape"))
        return
    pointer = _pointer(p)
    fitting = [
        found
        for found in results
        if found is not None and not (found[0][1] == "type" and found[0][0] == pointer)
    ]
    if len(fitting) == 1:
        errors.extend(fitting[0])
    else:
        errors.append((_pointer(p), keyword, _shown(x) + " does not match any allowed shape"))


def compile_schema(schema: dict[str, Any]) -> Validator:
    """Compile a schema into `validate(value) -> [(pointer, keyword, message), ...]`.

    Every problem of the schema is found here, when its checks are generated; their
    Python code is compiled on the first call of the validator, since most of the cost
    is there and `rulecheck lint` only needs to know that the schema compiles (the
    generator checks every value it writes into the code, so the code always compiles)."""
    generator = _Generator(schema)
    root = generator.function(schema)
    namespace = generator.namespace
    namespace["_combine"] = _combine
    namespace["_accept"] = lambda x, p, E: None
    source = "\n".join(generator.sources)
    check: Callable[[Any, Any, list[SchemaError]], None] | None = None

    def validate(value: Any) -> list[SchemaError]:
        nonlocal check
        if check is None:
            exec(compiled(source, "<rulecheck schema>"), namespace)
            check = namespace[root]
        errors = _Findings()
        try:
            check(value, "", errors)
        except _TooMany:
            shown = f"more than {MAX_FINDINGS:,} schema violations: the rest are not checked"
            return [*errors, ("", STOPPED, shown)]
        return list(errors)

    return validate
