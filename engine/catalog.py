"""Every diagnostic code rulecheck itself can report, with its severity, stage and meaning.

This table is the one list: `rulecheck codes` prints it, `docs/diagnostics.md` is generated
from it, and a test fails when the engine reports a code that is not here. Reject codes
that protocols declare (`code NAME "..."`) are listed by `rulecheck codes` from the rules.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CodeEntry:
    """One diagnostic code: what stage reports it, how severe it is, and what it means."""

    code: str
    severity: str
    stage: str
    meaning: str


def _entries(stage: str, severity: str, rows: tuple[tuple[str, str], ...]) -> list[CodeEntry]:
    return [CodeEntry(code, severity, stage, meaning) for code, meaning in rows]


# Codes written as `PREFIX_...` for each file a loader reads; PREFIX names the file's role
# (a protocol's documents report as `INPUT_...` and `DOCUMENT_SCHEMA`, or as its rules say).
YAML_PREFIXES = ("INPUT", "LOCK", "CASES", "CONTROLS")
SCHEMA_PREFIXES = ("LOCK", "CASES", "CONTROLS")


def _role(prefix: str) -> str:
    return prefix.lower().replace("_", " ")


CATALOG: tuple[CodeEntry, ...] = tuple(
    _entries(
        "rules: parse",
        "error",
        (
            (
                "SYNTAX_ERROR",
                "the rule file does not follow the grammar; the hint lists what could come next",
            ),
            ("RULES_INVALID_UTF8", "a rule file is not valid UTF-8"),
            (
                "RULE_NUMBER_RANGE",
                "a rule-file number has more digits, or a larger exponent, than can be held "
                "exactly (limits in `docs/reliability.md`)",
            ),
            (
                "RULE_TOO_DEEP",
                "an expression nests deeper than the limit (`not not ...`, a long `+` chain, "
                "nested `{`); split it with `const` or `metric`",
            ),
            (
                "RULE_TOO_MANY_BINDINGS",
                "a rule has more `for` clauses than the limit (`docs/reliability.md`)",
            ),
        ),
    )
    + _entries(
        "rules: check",
        "error",
        (
            ("DUPLICATE_NAME", "a name, attribute, column or map key is declared twice"),
            ("UNKNOWN_NAME", "a name is not declared (with a did-you-mean hint)"),
            ("UNKNOWN_ATTRIBUTE", "a kind has no such attribute"),
            ("UNKNOWN_KIND", "no kind of that name is declared"),
            ("UNKNOWN_EDGE", "the kind has no edge of that label"),
            ("UNKNOWN_FUNCTION", "no builtin or metric of that name"),
            (
                "UNKNOWN_TYPE",
                "an `attr` or parameter type that is neither a unit, a kind nor a builtin type",
            ),
            ("UNKNOWN_CODE", "a link rule rejects with a code no `code` declares"),
            ("UNKNOWN_EVENT", "a transition names an event no `event` clause declares"),
            ("ARITY_MISMATCH", "a function or metric is called with the wrong number of arguments"),
            ("TYPE_MISMATCH", "an expression has the wrong type for where it is used"),
            (
                "UNIT_MISMATCH",
                "a comparison or arithmetic combines different dimensions (tokens with USD)",
            ),
            ("NOT_CONSTANT", "a constant reads the graph"),
            ("CYCLIC_DEFINITION", "declarations depend on each other in a cycle"),
            (
                "GRAPHS_DISJOINT",
                "a rule reads kinds that no graph holds together, so it can never run",
            ),
            ("INVALID_POINTER", "a `records` pointer is not an RFC 6901 JSON pointer"),
            ("AS_TEXT_TYPE", "`as text` on an attribute that is not a number"),
            (
                "DECISION_CONDITION",
                "a decision row uses something other than gates, `and`, "
                "`or`, `not` and quantifiers over gate sets",
            ),
            ("DECISION_READS_NON_GATE", "a decision row reads a declaration that is not a gate"),
            ("DECISION_INCOMPLETE", "some combination of gate outcomes matches no row"),
            ("DECISION_OVERLAP", "some combination of gate outcomes matches two rows"),
            ("DECISION_UNREACHABLE_ROW", "no combination of gate outcomes reaches a row"),
            ("DECISION_TOO_WIDE", "a decision reads more gates than can be enumerated"),
            ("PROTOCOL_CLAUSE", "a protocol clause that must appear once is missing or repeated"),
            ("UNKNOWN_GRAPH", "a protocol names a graph no kind belongs to"),
            ("UNKNOWN_FORMAT", "a document's format is not json, jsonl or yaml"),
            ("INVALID_PATH", "a document's path is not a relative path inside the bundle"),
            (
                "PROTOCOL_DOCUMENT_MISSING",
                "the protocol's graph reads a document the protocol does not declare",
            ),
            ("SCHEMA_UNREADABLE", "a document's schema file cannot be read"),
            ("SCHEMA_INVALID", "a document's schema is not a JSON Schema the engine compiles"),
            ("SHADOWS_BUILTIN", "a metric has the name of a builtin function"),
            (
                "WITHIN_MISMATCH",
                "a `within KIND` kind's records do not step (`/*`) through KIND's records",
            ),
            (
                "DERIVED_READS_RULE",
                "the table of a derived document reads a rule (`passed(...)`)",
            ),
            (
                "DERIVED_READS_LATER",
                "the table of a derived document reads records derived with or after it",
            ),
            (
                "PROTOCOL_ENTRY_OFF_GRAPH",
                "a protocol's admission, verdict or report does not run on its graph",
            ),
            ("TRANSITION_UNREACHABLE_STATE", "a state cannot be reached from the initial state"),
            ("TRANSITION_EVENT_UNHANDLED", "an event has no move from a state it applies to"),
            (
                "TRANSITION_EVENT_NOT_APPLICABLE",
                "a move uses an event in a state it does not apply to",
            ),
            ("TRANSITION_NONDETERMINISTIC", "two moves for one state and event"),
            ("TRANSITION_TERMINAL_EXIT", "a move leaves a terminal state other than to settlement"),
            ("TRANSITION_DEAD_END", "a non-terminal state has no way out"),
            ("TRANSITION_OUTCOME", "a terminal state maps to no outcome or to several"),
            (
                "TRANSITION_OUTCOME_NOT_TERMINAL",
                "an outcome is given for a state that is not terminal",
            ),
            (
                "TRANSITION_REOPENED",
                "a settlement state moves on to a working state, reopening a terminal state",
            ),
            (
                "TRANSITION_POLICY_PATH",
                "a policy outcome's events are not a walk of legal moves from its state",
            ),
            (
                "REPLAY_TABLE",
                "a `replay_*` builtin names no transition table with a `replay` clause",
            ),
        ),
    )
    + _entries(
        "rules: check",
        "warning",
        (
            (
                "POINTER_EMPTY_KEY",
                'a pointer has an empty token (`"/"` names the key `""`, '
                'not the whole document, which is `""`)',
            ),
            ("UNUSED_CONST", "a constant that no declaration uses"),
            ("UNUSED_METRIC", "a metric that no declaration uses"),
            ("UNUSED_CODE", "a reject code that no link rule uses"),
            ("GATE_UNREAD", "a gate that no decision, table or rule reads: it decides nothing"),
            (
                "LINK_UNGATED",
                "a link rule or budget that no admission gate or verdict of its graph's "
                "protocols reads: a bundle that breaks it is reported and still admitted",
            ),
            (
                "RULE_RUNS_NOWHERE",
                "a rule that reads no kind, so runs on no graph and is never evaluated",
            ),
            (
                "QUADRATIC_SCAN",
                "a count, quantifier or aggregate over a whole kind picks records by `==` "
                "against an outer variable: the kind is read once per binding; look the "
                'records up with `having(KIND, {"attr": value})`',
            ),
        ),
    )
    + _entries(
        "rules: freeze",
        "error",
        (
            ("LOCK_TAMPERED", "a lock's recorded hashes do not match its own content"),
            (
                "LOCK_MISMATCH",
                "`--lock`: the rules loaded differ from the lock (each declaration added, "
                "removed or changed, in `rulecheck diff`'s words); nothing is evaluated",
            ),
            (
                "RULES_ARE_LOCK",
                "a rules lock was given where rule files go (`--rules rules.lock`): pin the run "
                "with `--lock` instead (exit 2)",
            ),
        ),
    )
    + _entries(
        "inputs: read",
        "error",
        (
            ("FILE_UNREADABLE", "a file or folder cannot be read (exit 2)"),
            ("FILE_UNWRITABLE", "a report, lock or rule file cannot be written (exit 2)"),
            (
                "INPUT_NOT_REGULAR",
                "an input is a FIFO, device, socket or folder, not a regular file (exit 2)",
            ),
            ("INPUT_TOO_LARGE", "an input file is larger than the size limit (exit 2)"),
            (
                "INPUT_CHANGED",
                "a bundle file read twice in one run was not the same the second time: it "
                "changed while the command ran, and nothing is judged (exit 2)",
            ),
            ("INPUT_TOO_DEEP", "JSON or YAML data nests deeper than the limit"),
            ("INPUT_STRING_TOO_LONG", "a JSON or YAML string is longer than the limit"),
            ("INPUT_TOO_MANY_RECORDS", "a document holds more records or values than the limit"),
            ("INPUT_TOO_MANY_FILES", "a document's pattern matches more files than the limit"),
            (
                "OUTPUT_IS_INPUT",
                "`--out` or `--receipt` names an input (a rule, schema or lock file, an input "
                "file) or a path inside the bundle read (exit 2)",
            ),
            ("BUNDLE_FILE_MISSING", "a file the bundle must hold is absent"),
            (
                "USAGE_INPUT",
                "`--input NAME=FILE` is malformed, repeated or of an unknown format (exit 2)",
            ),
            (
                "USAGE_GRAPH",
                "an unknown graph, or inputs the graph does not read or lacks (exit 2)",
            ),
            ("INDEX_ENTRY", "a line of an answers index is malformed"),
            (
                "JOBS_WORKER_LOST",
                "a `--jobs` worker process died (killed, out of memory) before returning its "
                "results: nothing is judged (exit 2)",
            ),
            ("BUNDLE_PATH_OUTSIDE", "a document's path leads outside the bundle (a link)"),
            (
                "DOCUMENT_SCHEMA",
                "a document (or a JSON Lines record) breaks its schema; after 1,000 in one "
                "document, one more says where checking stopped",
            ),
            ("PROTOCOL_FILE", "a bundle's `rulecheck.yaml` is malformed"),
            (
                "EXPORT_TABLE",
                "the table `rulecheck export` names lacks a `file` or `content` column (exit 2)",
            ),
            ("EXPORT_ROW", "a row of an exported table has no value or no new plain file name"),
            ("OUTPUT_EXISTS", "the folder `--out` names exists and is not empty (exit 2)"),
            (
                "INSPECT_NOT_INSTALLED",
                "`rulecheck import inspect` needs inspect_ai: `pip install rulecheck[inspect]` "
                "(exit 2)",
            ),
            (
                "HTML_NOT_INSTALLED",
                "`--format html` needs jinja2 and matplotlib: `pip install rulecheck[html]` "
                "(exit 2)",
            ),
            (
                "INSPECT_LOG_FORMAT",
                "a file given to `rulecheck import inspect` is not named `.eval` or `.json` "
                "(exit 2)",
            ),
            (
                "INSPECT_LOG_UNREADABLE",
                "inspect_ai cannot read the file as a log: corrupt, truncated or not a log "
                "(exit 2)",
            ),
            ("INSPECT_LOG_DUPLICATE", "two logs given to `rulecheck import inspect` hold one run"),
            (
                "INSPECT_ARM",
                "`rulecheck import inspect --arm ARM=LOG` is malformed, or gives one log two arms "
                "(exit 2)",
            ),
            (
                "SEAL_EXISTS",
                "the bundle is sealed already; `rulecheck seal --force` replaces the seal",
            ),
            (
                "FREEZE_AFTER_RUN",
                "`freeze-inputs` on a bundle whose run has started (its `before` document holds "
                "records)",
            ),
            ("FREEZE_TARGET", "the document `freeze-inputs` writes into has no object there"),
            (
                "DERIVED_VALUE",
                "a cell of a derived document's table cannot be evaluated or written as JSON",
            ),
            (
                "USAGE_PROTOCOL",
                "the rules declare no protocol of that name, or it runs only inside another "
                "(exit 2)",
            ),
            (
                "RENDER_VALUE",
                "`rulecheck render`: a constant holds a value YAML cannot write exactly (a "
                "fraction such as 1/3) (exit 2)",
            ),
            ("PROTOCOL_MISMATCH", "the bundle's `rulecheck.yaml` names another protocol"),
            (
                "PROTOCOL_RULESET_MISMATCH",
                "the bundle pins another ruleset hash than the rules loaded",
            ),
            ("JSON_SYNTAX", "malformed JSON"),
            ("JSON_INVALID_UTF8", "JSON that is not valid UTF-8"),
            ("JSON_DUPLICATE_KEY", "a JSON object names a key twice"),
            ("JSON_NON_FINITE", "NaN or Infinity in JSON"),
            ("JSON_LONE_SURROGATE", "a JSON string with an unpaired surrogate escape"),
            (
                "JSON_NUMBER_RANGE",
                "a JSON number a 64-bit float cannot hold as written: beyond its range, below"
                " it (it would be read as zero), or with more significant digits than it keeps",
            ),
            ("JSON_TRAILING_DATA", "bytes after the JSON value"),
            ("YAML_DUPLICATE_KEY", "a YAML mapping names a key twice"),
            ("YAML_ALIAS", "a YAML anchor or alias (refused: they make documents unbounded)"),
            ("YAML_NON_FINITE", "`.nan` or `.inf` in YAML (numbers must be finite)"),
            (
                "YAML_NUMBER_RANGE",
                "a YAML number too large, or a float a 64-bit float cannot hold as written",
            ),
        ),
    )
    + _entries(
        "test",
        "error",
        (
            (
                "CASES_EDIT",
                "an edit of a rule test case names no file of the case, or no place in it (exit 2)",
            ),
            (
                "CASES_UNKNOWN_NAME",
                "a rule test case expects an outcome of a rule, decision, graph or protocol "
                "the rules do not declare (exit 2)",
            ),
            ("CASE_FAILED", "a rule test case's expectations differ from what the rules concluded"),
            (
                "MUTANT_SURVIVED",
                "`rulecheck test --mutate`: no case catches a threshold mutant of the rules",
            ),
            (
                "CONTROLS_UNKNOWN_NAME",
                "an expected-result table of controls names a case no case file holds, or an "
                "owning control the table does not list (exit 2)",
            ),
            (
                "CONFORMANCE_EXPECTED",
                "a fixture folder's `expected.yaml` cannot be read or an entry lacks `trace`, "
                "`conforms` or the `violated` rules (exit 2)",
            ),
        ),
    )
    + _entries(
        "inputs: read",
        "error",
        tuple(
            (f"{p}_SCHEMA", f"the {_role(p)} document does not match its schema")
            for p in SCHEMA_PREFIXES
        ),
    )
    + _entries(
        "inputs: read",
        "error",
        tuple(
            (f"{p}_{suffix}", f"the {_role(p)} document is not valid {what}")
            for p in YAML_PREFIXES
            for suffix, what in (("INVALID_YAML", "YAML"), ("INVALID_UTF8", "UTF-8"))
        ),
    )
    + _entries(
        "graph: build",
        "error",
        (
            ("ATTR_TYPE", "a value does not have its attribute's declared type (never coerced)"),
            (
                "KEY_INVALID",
                "a record lacks its kind's `key` member, or holds something other than text "
                "there: it would be a node no edge or id lookup finds",
            ),
            (
                "RECORDS_NOT_FOUND",
                "a `records` pointer finds nothing in a document (declare "
                "it `optional` if that is allowed)",
            ),
            ("RECORDS_TYPE", "a `records` pointer finds something other than objects"),
        ),
    )
    + _entries(
        "evaluate",
        "error",
        (
            ("GATE_FAILED", "a gate does not hold on the input (reported at its declaration)"),
            ("BUDGET_FAILED", "a budget's running total breaks its ceiling"),
            (
                "RULE_EVALUATION_ERROR",
                "a rule could not be evaluated at one binding (null "
                "arithmetic, a `for` over a non-collection, an empty median, ...); the rest go on",
            ),
            (
                "DECISION_UNDECIDED",
                "a decision gives no verdict: a row it had to read rests on a gate or budget "
                "that could not be evaluated (an error is neither true nor false, so `not` "
                "cannot turn it into a verdict); the run fails",
            ),
        ),
    )
    + _entries(
        "evaluate",
        "warning",
        (
            (
                "VACUOUS",
                "a link rule, gate or budget bound nothing on this input: its outcome "
                "is not evidence (`--strict` fails the run)",
            ),
            (
                "ATTR_ABSENT",
                "an attribute or edge a kind declares is in none of its records, which hold "
                "a member of a near name (`ammount` beside `amount`): a misspelt name reads "
                "null on every record (`--strict` fails the run)",
            ),
        ),
    )
    + _entries(
        "receipt",
        "error",
        (
            (
                "RECEIPT_MISMATCH",
                "`verify-receipt`: a field of an evaluation receipt differs from what the "
                "check gives now (an input file, the manifest, ruleset or lock hash, the "
                "evaluator, the verdict, a rule outcome or the report's sha256), located at "
                "the field",
            ),
            (
                "RECEIPT_MALFORMED",
                "`verify-receipt`: the file is not an evaluation receipt of a known format",
            ),
        ),
    )
    + _entries(
        "replay",
        "error",
        (
            (
                "REPLAY_LOCK_RULES",
                "`replay`: a lock was given whose rule files are missing or no longer match "
                "it; a lock stands for its rule files only unchanged (give the folder) (exit 2)",
            ),
        ),
    )
    + _entries(
        "any",
        "error",
        (
            (
                "INTERNAL_ERROR",
                "a bug in rulecheck, reported without a traceback (exit 2); "
                "please report it with the input",
            ),
        ),
    )
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def catalog_codes() -> frozenset[str]:
    """Every code of the catalog."""
    return frozenset(entry.code for entry in CATALOG)


def catalog_markdown(protocol_codes: list[tuple[str, str, str]]) -> str:
    """The catalog as markdown, then the reject codes the rules declare (name, message, file)."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated by `rulecheck codes --format markdown`; do not edit by hand.",
        "Every finding rulecheck reports carries one of these codes, a severity and a",
        "location (file, line:column and/or JSON pointer). Warnings never change an exit code",
        "unless `--strict` is given.",
        "",
        "| code | severity | stage | meaning |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{e.code}` | {e.severity} | {e.stage} | {_cell(e.meaning)} |" for e in CATALOG]
    lines += [
        "",
        "## Reject codes of the shipped rules",
        "",
        'Declared in `rules/` by `code NAME "message"` and raised by link rules.',
        "",
        "| code | message | declared in |",
        "|---|---|---|",
    ]
    lines += [
        f"| `{code}` | {_cell(message)} | `{file}` |" for code, message, file in protocol_codes
    ]
    return "\n".join(lines) + "\n"
