"""The one table of built-in functions: name, arity, signature, meaning and implementation.

The type checker takes each builtin's arity from here, the code generator its run-time
function, and `docs/language.md` its row (`builtins_markdown`, checked by a test). The
result type of each builtin is inferred by `engine.check.types.TypeChecker._builtin`, which
needs the argument types; the signature here is what a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Builtin:
    """One built-in function.

    `arity` is None for a function of one or more arguments. `runtime` names the function
    of `engine.evaluate.runtime` a call compiles to, with the arguments as written (and
    the evaluation context first when `context` is set: it reads the files' facts); None
    where the code generator compiles the call itself (it reads the graph or a rule).
    """

    name: str
    arity: int | None
    signature: str
    returns: str
    meaning: str
    runtime: str | None
    context: bool = False


BUILTINS: tuple[Builtin, ...] = (
    Builtin(
        "len",
        1,
        "len(x)",
        "number",
        "length of a text (in Unicode scalar values) or a collection",
        "length",
    ),
    Builtin(
        "unavailable",
        1,
        "unavailable(fields)",
        "a report value",
        "a figure the records cannot support, naming the missing `fields` (a text, or a "
        "nonempty list or set of texts): reports show `unavailable` and the fields, never "
        "a number; arithmetic or ordering on it is an evaluation error",
        "unavailable",
    ),
    Builtin(
        "ratio",
        2,
        "ratio(a, b)",
        "the quotient's unit",
        "`a / b`; a zero denominator is an evaluation error",
        "ratio",
    ),
    Builtin(
        "prefix",
        1,
        "prefix(id)",
        "text",
        'the letters before an ID\'s number: `"E"` for `"E12"`',
        "prefix",
    ),
    Builtin(
        "id_number",
        1,
        "id_number(id)",
        "number",
        'the number after an ID\'s letters: `12` for `"E12"`; an ID without one, or with a '
        "leading zero, is an evaluation error",
        "id_number",
    ),
    Builtin("ids", 1, "ids(S)", "set of text", "the set of ids of a kind or a set of nodes", None),
    Builtin(
        "id_count",
        1,
        "id_count(n)",
        "number",
        "how many nodes of `n`'s kind share its id (1 when unique)",
        None,
    ),
    Builtin(
        "union",
        None,
        "union(S, T, ...)",
        "list",
        "the elements of every collection, in order, once each",
        None,
    ),
    Builtin(
        "of_kind",
        2,
        "of_kind(S, KIND)",
        "nodes of KIND",
        "the nodes of `S` that are of kind `KIND` (typed as that kind)",
        None,
    ),
    Builtin(
        "having",
        2,
        'having(KIND, {"attr": value, ...})',
        "nodes of KIND",
        "the nodes of `KIND` whose attributes equal the values, each as `==` compares "
        "(null matches a missing attribute); the same nodes, in the same order, as "
        "`u in KIND where u.attr == value and ...`, found through an index built once per "
        "graph: a lookup costs the size of its answer, not of the kind",
        None,
    ),
    Builtin(
        "next_by",
        3,
        'next_by(KIND, "attr", n)',
        "nodes of KIND",
        "the node of `KIND` right after `n` when the nodes of `KIND` are sorted by the "
        "attribute `attr` (all numbers or all texts; ties in document order): a set of that "
        "one node, empty for the last; the order is built once per graph, so a rule over "
        "neighbours (`request_end(q) <= r.start` for `r in next_by(...)`) costs a sort",
        None,
    ),
    Builtin(
        "replay_step",
        2,
        "replay_step(TABLE, e)",
        "map",
        "how the `replay` of transition table `TABLE` judged its event `e`: `entity`, "
        "`event`, `before` and `after` (states), `applied`, `legal` (the table has the move), "
        "`duplicate` and `conflict` (an earlier event has its idempotency key, with the same "
        "or other content), `stale` (its expected version is not the entity's), `version` "
        "(the entity's, before), `position` (among the entity's events, from 0), `terminal`; "
        "the replay runs once per graph, one sort and one pass",
        None,
    ),
    Builtin(
        "replay_entity",
        2,
        "replay_entity(TABLE, id)",
        "map",
        "entity `id` at the end of `TABLE`'s replay: `state`, `version` (events applied), "
        "`events` (seen), `applied`, `terminal`, `settled` (ever in a settlement state), "
        "`outcome` (of its state, or null), `history` (the states it passed through); an "
        "entity no event names is in the initial state",
        None,
    ),
    Builtin(
        "replay_entities",
        1,
        "replay_entities(TABLE)",
        "list of text",
        "every entity `TABLE`'s replay drove, in the order of its first event",
        None,
    ),
    Builtin(
        "replay_at",
        3,
        "replay_at(TABLE, id, position)",
        "text",
        "the state of entity `id` once its events ordered at or before `position` are "
        "replayed (the initial state before its first): what a recorded snapshot must show",
        None,
    ),
    Builtin(
        "replay_total",
        2,
        "replay_total(TABLE, position)",
        "the ledger's unit",
        "the running total of `TABLE`'s replay ledger once every event at or before "
        "`position` is replayed: the sum of the `ledger` attribute over the applied events "
        "(0 before any), what a recorded ledger snapshot must show",
        None,
    ),
    Builtin(
        "line_count",
        1,
        "line_count(text)",
        "number",
        "physical lines: a line ends at `\\n`, a final `\\n` does not start another",
        "lines",
    ),
    Builtin("unique", 1, "unique(list)", "bool", "true when no element repeats", "unique"),
    Builtin(
        "sorted_unique",
        1,
        "sorted_unique(S)",
        "list",
        "the elements of `S` once each, sorted (texts alphabetically, numbers by value)",
        "sorted_unique",
    ),
    Builtin(
        "pluck",
        2,
        "pluck(S, name)",
        "list",
        "the attribute (of a node) or entry (of a map) `name` of each element of `S`, in "
        "order; null where it has none",
        "pluck",
        context=True,
    ),
    Builtin("abs", 1, "abs(x)", "x's unit", "absolute value", "absolute"),
    Builtin("kind", 1, "kind(node)", "text", "the kind name of a node", "kind_of"),
    Builtin(
        "one",
        1,
        "one(S)",
        "an element of S",
        "the single element of `S` (none or several is an evaluation error)",
        "one",
    ),
    Builtin(
        "entry",
        2,
        "entry(M, k)",
        "a value of M",
        "the value of key `k` in the map `M`; a missing key is an evaluation error "
        "(iterating a map gives its keys)",
        "entry",
    ),
    Builtin(
        "contains",
        2,
        "contains(text, part)",
        "bool",
        "whether a text holds another anywhere (every text holds the empty text)",
        "contains",
    ),
    Builtin(
        "starts_with",
        2,
        "starts_with(text, prefix)",
        "bool",
        "whether a text starts with a prefix",
        "starts_with",
    ),
    Builtin(
        "utc",
        1,
        "utc(text)",
        "s",
        "seconds since 1970 of an ISO-8601 UTC time such as `2026-10-01T09:00:00Z` (exact)",
        "utc",
    ),
    Builtin(
        "seeded_order",
        3,
        "seeded_order(seed, label, S)",
        "list of text",
        "the texts of `S` sorted by the sha256 of `seed`, `label` and each text joined by "
        "U+001F (ties by the text): an order anyone can re-derive from a frozen seed",
        "seeded_order",
    ),
    Builtin(
        "file_sha256",
        1,
        "file_sha256(path)",
        "text or null",
        "the sha256 of the bundle's file at the relative `path`; null when it is absent or "
        "would leave the bundle (an evaluation error outside a bundle)",
        "file_sha256",
        context=True,
    ),
    Builtin(
        "file_size",
        1,
        "file_size(path)",
        "number or null",
        "the byte count of the bundle's file at the relative `path`; null when it is absent "
        "or would leave the bundle",
        "file_size",
        context=True,
    ),
    Builtin(
        "file_text",
        1,
        "file_text(path)",
        "text or null",
        "the whole text of the bundle's UTF-8 file at the relative `path`; null when it is "
        "absent, leaves the bundle or is not UTF-8",
        "file_text",
        context=True,
    ),
    Builtin(
        "file_lines",
        3,
        "file_lines(path, start, end)",
        "text or null",
        "the exact text of the inclusive 1-based physical lines `start`..`end` of the bundle's "
        "UTF-8 file at the relative `path`, line ends included; null when the file is absent, "
        "leaves the bundle, is not UTF-8 or has fewer lines",
        "file_lines",
        context=True,
    ),
    Builtin(
        "lock_ruleset_hash",
        1,
        "lock_ruleset_hash(path)",
        "text or null",
        "the ruleset hash recorded by the rules lock at the bundle's relative `path`, once "
        "the lock verifies (every declaration re-hashes to its entry); null otherwise",
        "lock_ruleset_hash",
        context=True,
    ),
    Builtin(
        "record_sha256",
        1,
        "record_sha256(node)",
        "text",
        "the sha256 of the bytes of the JSON Lines record `node` was read from, without its "
        "line end",
        "record_sha256",
        context=True,
    ),
    Builtin(
        "member_sha256",
        1,
        "member_sha256(node)",
        "text",
        "the sha256 of the file `node` was read from, when its document is one of many files "
        "(`truth/*.yaml`): which file holds a record, by its bytes, whatever its name",
        "member_sha256",
        context=True,
    ),
    Builtin(
        "record_line",
        1,
        "record_line(node)",
        "number",
        "the physical line of the JSON Lines record `node` was read from",
        "record_line",
        context=True,
    ),
    Builtin(
        "ruleset_hash",
        0,
        "ruleset_hash()",
        "text",
        "the hash of the ruleset this evaluation runs with",
        "ruleset_hash",
        context=True,
    ),
    Builtin(
        "schema_sha256",
        1,
        "schema_sha256(name)",
        "text",
        "the sha256 of the shipped JSON Schema `name` (`manifests/schemas/NAME.schema.json`)",
        "schema_sha256",
    ),
    Builtin(
        "concat",
        None,
        "concat(t, ...)",
        "text",
        "the texts joined in order (anything but text is an evaluation error)",
        "concat",
    ),
    Builtin(
        "head",
        2,
        "head(text, n)",
        "text",
        "the first `n` characters of a text (all of it when shorter)",
        "head",
    ),
    Builtin(
        "seeded_key",
        3,
        "seeded_key(seed, label, item)",
        "text",
        "the sha256 (64 hex digits) of the UTF-8 text `seed`, `label` and `item` joined by "
        "U+001F: the key `seeded_order` sorts by, for IDs anyone can re-derive",
        "seeded_key",
    ),
    Builtin(
        "json_at",
        2,
        "json_at(path, pointer)",
        "any",
        "the value at the JSON `pointer` of the bundle's JSON file at the relative `path` "
        "(parsed strictly, once); null when the file is absent, leaves the bundle, does not "
        "parse or has nothing at `pointer`",
        "json_at",
        context=True,
    ),
    Builtin(
        "json_sha256",
        1,
        "json_sha256(value)",
        "text",
        "the sha256 of the canonical JSON of a value followed by a newline: the bytes of a "
        "canonical JSON file holding it (an exact number that is not whole is an error)",
        "json_sha256",
    ),
    Builtin(
        "rulecheck_version",
        0,
        "rulecheck_version()",
        "text",
        "the version of the rulecheck that evaluates (`rulecheck inventory`'s `rulecheck`)",
        "rulecheck_version",
    ),
    Builtin(
        "grammar_sha256",
        0,
        "grammar_sha256()",
        "text",
        "the sha256 of the grammar the rules were parsed with (`rulecheck inventory`'s "
        "`grammar.sha256`)",
        "grammar_sha256",
    ),
    Builtin(
        "json_text",
        1,
        "json_text(value)",
        "text",
        "the canonical JSON of a value (keys sorted, no spaces, UTF-8 as is, no final "
        "newline): a serialisation anyone can re-derive, `json_sha256` of it without the "
        "newline",
        "json_text",
    ),
    Builtin(
        "text_sha256",
        1,
        "text_sha256(text)",
        "text",
        "the sha256 of a text's UTF-8 bytes",
        "text_sha256",
    ),
    Builtin(
        "text_bytes",
        1,
        "text_bytes(text)",
        "number",
        "the number of bytes of a text in UTF-8 (`len` counts Unicode scalar values)",
        "text_bytes",
    ),
    Builtin(
        "text_diff",
        4,
        "text_diff(old, new, old_label, new_label)",
        "text",
        "the unified diff from text `old` to text `new` (three lines of context, headed "
        "`--- old_label` and `+++ new_label`, a line without its final newline marked as "
        "`diff -u` marks it); empty when the texts are equal",
        "text_diff",
    ),
    Builtin(
        "check",
        3,
        "check(PROTOCOL, files, given)",
        "map",
        "protocol `PROTOCOL` checked inside this bundle: `files` maps each of its documents to "
        "a bundle path, `given` each `given` document to its value; a map of `checked`, "
        "`passed` and `findings` (each with `code`, `document`, `pointer`, `message`)",
        "nested_check",
        context=True,
    ),
    Builtin(
        "passed",
        1,
        "passed(RULE)",
        "bool",
        "the outcome of a link rule (no violation), budget or gate; the rule runs first",
        None,
    ),
)

BY_NAME = {builtin.name: builtin for builtin in BUILTINS}


def builtins_markdown() -> str:
    """The builtin table of `docs/language.md`."""
    rows = [f"| `{b.signature}` | {b.returns} | {b.meaning.replace('|', '/')} |" for b in BUILTINS]
    return "\n".join(["| function | result | meaning |", "|---|---|---|", *rows]) + "\n"
