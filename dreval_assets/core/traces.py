"""Research traces into steps, deterministically (methods/miroeval.md section 3, formats.md).

A trace is whatever a system logged while researching. The shapes releases and common agents write:
- JSON step arrays: `[{"type"|"action"|"tool": ..., "query"|"url"|"content"|...}, ...]` (or strings);
- OpenAI-style message lists `[{"role", "content", "tool_calls"}, ...]`: each tool call is a step
  (its `tool` result joins the call's step), each assistant text is a step;
- tagged text: `<think>` blocks with tool calls `[web_search] q`, `[scrape] url`, `[analyze_image] {json}`,
  `[run_python_code]` + code, any `[tool_name] ...` line, `<tool_call>` / `<use_mcp_tool>` blocks
  (cut into pieces by core/trace_tags.py): every piece is a step of its own, in its place;
- `[Step N]` (or `Step N:`) text;
- plain prose: paragraphs (a judge would read it better; the parse says so in a warning).
Every step gets a kind (plan, search, read, analyze, synthesize, verify, or tool: a tool call whose name
says none of these, such as `create_sandbox`), the queries and URLs it touches and the earlier steps it
depends on. The parser never raises: a trace it cannot read is a
warning and no steps (`ParsedTrace.warnings`).

Kinds from words (`classify`), first match wins: verify (cross-check, confirm, conflict, reconcile,
revise ...), search, read (or a URL in a short step), synthesize (write, draft, final answer ...),
plan (plan, first, I will, outline ...), else analyze. Tool calls get their kind from cues in the tool's
name (`_TOOL_KINDS`, first cue in that list wins: search_document -> search, download_file -> read,
run_python_code -> analyze), else tool. Dependencies: a read step on the last search; an
analyze step on the reads since the previous analyze (else the last step); synthesize on every
analyze/verify step so far (else the last step); search, verify, plan and tool on the step before them.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .trace_tags import REASONING_TAGS, Piece, looks_tagged, tagged_pieces

KINDS = ("plan", "search", "read", "analyze", "synthesize", "verify", "tool")

_URL_RE = re.compile(r"https?://[^\s<>\"'\)\]\},]+")
_STEP_RE = re.compile(r"^\s*(?:\[\s*Step\s+(\d+)\s*\]|\**Step\s+(\d+)\s*[:.)]\**)\s*", re.I | re.M)
_JSON_START_RE = re.compile(r'^[\[{]\s*(?:[\[{"\]}]|$)')
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{3,200})[\"”]")
_SEARCH_FOR_RE = re.compile(r"\b(?:search(?:ed|ing)?|look(?:ed|ing)? up|query|queried)\s+"
                            r"(?:for\s+|on\s+)?[:\-]?\s*(.+?)(?:[.;\n]|$)", re.I)

_WORDS = {
    "verify": ("verify", "verified", "cross-check", "cross check", "double-check", "double check", "confirm",
               "discrepan", "conflict", "contradict", "reconcile", "inconsisten", "revise", "correct the", "recheck",
               "核实", "验证", "矛盾"),
    "search": ("search", "look up", "looking up", "google", "query", "搜索", "检索"),
    "read": ("read ", "reading", "open the", "opened", "visit", "scrape", "browse", "fetch", "the page",
             "阅读", "打开"),
    "synthesize": ("final answer", "write the report", "writing the report", "draft", "compile", "summariz",
                   "summaris", "summary", "wrote", "write ", "write up", "writing up", "conclude", "conclusion",
                   "撰写", "总结"),
    "plan": ("plan:", "plan ", "planning", "first,", "first i", "i will", "i'll", "i need to", "let me", "outline",
             "approach",
             "break down", "steps:", "计划", "首先"),
}

_TOOL_KINDS = (("search", "search"), ("query", "search"), ("google", "search"), ("bing", "search"),
               ("scrape", "read"), ("fetch", "read"), ("browse", "read"), ("visit", "read"), ("open", "read"),
               ("read", "read"), ("crawl", "read"), ("download", "read"), ("extract", "read"),
               ("image", "analyze"), ("python", "analyze"), ("code", "analyze"), ("calc", "analyze"),
               ("analy", "analyze"), ("compute", "analyze"), ("execute", "analyze"), ("shell", "analyze"),
               ("bash", "analyze"), ("sql", "analyze"), ("verify", "verify"), ("check", "verify"),
               ("plan", "plan"), ("think", "analyze"), ("write", "synthesize"), ("answer", "synthesize"),
               ("report", "synthesize"), ("final", "synthesize"))
_TOOL_LABEL_KEYS = ("tool", "function", "name", "action")  # a JSON step's label that names a tool call
_CALL_TYPES = frozenset({"tool_call", "tool_use", "function_call", "call", "tool", "action"})
_MEDIA_URL_KEYS = ("image_url", "image", "src", "file_url")  # a URL when it is one (else a file name)


@dataclass
class Step:
    index: int  # 1-based, in trace order
    kind: str
    text: str
    queries: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    depends_on: list[int] = field(default_factory=list)


@dataclass
class ParsedTrace:
    shape: str  # json_steps | messages | tagged | numbered | prose | empty | unreadable
    steps: list[Step]
    warnings: list[str] = field(default_factory=list)


def classify(text: str, first: bool = False, reasoning: bool = False) -> str:
    """A step's kind from its words: the kind whose key word comes first in the text (verify wins
    anywhere; plan only for the trace's first step or a step that starts with it). `reasoning`: the
    text is the agent thinking beside its tool calls (a `<think>` block, an assistant message with
    calls), so it searches or reads nothing itself."""
    low = text.lower()
    if any(w in low for w in _WORDS["verify"]):
        return "verify"
    starts_plan = low.lstrip().startswith(("plan:", "plan ", "planning", "let me plan"))
    if starts_plan or (first and any(w in low for w in _WORDS["plan"])):
        return "plan"
    at = {}
    for kind in ("search", "read", "synthesize"):
        if reasoning and kind in ("search", "read"):
            continue
        hits = [i for w in _WORDS[kind] if (i := low.find(w)) >= 0]
        if hits:
            at[kind] = min(hits)
    if at:
        return min(at, key=at.get)
    if not reasoning and _URL_RE.search(text) and len(text) < 300:
        return "read"
    return "plan" if first else "analyze"


def urls_in(text: str) -> list[str]:
    return _dedup([u.rstrip(".;:") for u in _URL_RE.findall(text)])


def normalise_url(url: str) -> str:
    """Scheme, `www.`, fragment, a trailing slash and the host's case dropped (so revisits match)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip().lower()
    host = (parts.hostname or "").lower().removeprefix("www.")
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{parts.path.rstrip('/')}{query}"


def domain(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower().removeprefix("www.")
    except ValueError:
        return ""


def normalise_query(query: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", query.lower()).split())


def parse_trace(trace: str | None) -> ParsedTrace:
    """Steps of one trace; never raises (a trace it cannot read: no steps and a warning)."""
    try:
        return _parse(trace)
    except Exception as exc:  # noqa: BLE001 - a vendor's trace must not stop the run
        return ParsedTrace("unreadable", [], [f"trace unreadable: {type(exc).__name__}: {str(exc)[:200]}"])


def _parse(trace: str | None) -> ParsedTrace:
    text = (trace or "").strip()
    if not text:
        return ParsedTrace("empty", [], [])
    warnings: list[str] = []
    if _JSON_START_RE.match(text):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            data = _complete_elements(text)
            if data:  # a cut array (a trace truncated at a size limit): its whole elements
                warnings.append(f"trace is cut JSON ({exc.msg} at {exc.pos}): "
                                f"its first {len(data)} whole elements read")
                parsed = _parse_json(data)
                if parsed is not None:
                    parsed.warnings[:0] = warnings
                    return _finish(parsed)
            return ParsedTrace("unreadable", [], [f"trace looks like JSON but is not ({exc.msg} at {exc.pos})"])
        else:
            parsed = _parse_json(data)
            if parsed is not None:
                parsed.warnings[:0] = warnings
                return _finish(parsed)
            warnings.append("JSON trace of an unknown shape: read as text")
            text = json.dumps(data, ensure_ascii=False, indent=1)
    parsed = _parse_text(text)
    parsed.warnings[:0] = warnings
    return _finish(parsed)


def _complete_elements(text: str) -> list:
    """The whole elements at the start of a JSON array that was cut off ([] when there are none)."""
    if not text.startswith("["):
        return []
    decoder, out, pos = json.JSONDecoder(), [], 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return out
        out.append(value)


# --- JSON ------------------------------------------------------------------------------------------

_LIST_KEYS = ("messages", "steps", "trace", "process", "events", "history", "log")
_TEXT_KEYS = ("content", "thought", "thinking", "reasoning", "text", "output", "result", "observation",
              "response", "summary", "description")
_TYPE_KEYS = ("type", "action", "tool", "kind", "step_type", "name", "function")


def _parse_json(data: Any) -> ParsedTrace | None:
    if isinstance(data, dict):
        inner = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list)), None)
        if inner is None:
            return None
        data = inner
    if not isinstance(data, list):
        return None
    if not data:
        return ParsedTrace("empty", [], [])
    if all(isinstance(x, dict) and "role" in x for x in data):
        return _parse_messages(data)
    if all(isinstance(x, (dict, str)) for x in data):
        return _parse_json_steps(data)
    return None


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts [{"type": "text", "text": ...}]
        return "\n".join(_as_text(v.get("text") if isinstance(v, dict) else v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def _arguments(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            got = json.loads(raw)
        except json.JSONDecodeError:
            return {"input": raw}
        return got if isinstance(got, dict) else {"input": got}
    return {}


def _tool_kind(name: str) -> str | None:
    low = name.lower()
    return next((kind for word, kind in _TOOL_KINDS if word in low), None)


def _call_step(name: str, args: dict) -> tuple[str, str, list[str], list[str]]:
    """(kind, text, queries, urls) of one tool call; a name without a cue is a generic tool step."""
    kind = _tool_kind(name) or "tool"
    queries = [str(args[k]) for k in ("query", "q", "search_query", "keywords") if isinstance(args.get(k), str)]
    for k in ("queries", "query_list"):
        if isinstance(args.get(k), list):
            queries += [str(q) for q in args[k]]
    urls = [str(args[k]) for k in ("url", "link", "href", "page") if isinstance(args.get(k), str)]
    urls += [str(args[k]) for k in _MEDIA_URL_KEYS if isinstance(args.get(k), str) and _URL_RE.match(str(args[k]))]
    if isinstance(args.get("urls"), list):
        urls += [str(u) for u in args["urls"]]
    if kind == "search" and not queries and isinstance(args.get("input"), str):
        queries = [args["input"]]
    if kind == "read" and not urls:
        urls = urls_in(" ".join(str(v) for v in args.values()))
    text = f"{name}: {json.dumps(args, ensure_ascii=False)}"
    return kind, text, queries, urls


def _parse_messages(messages: list[dict]) -> ParsedTrace:
    steps: list[Step] = []
    by_call: dict[str, Step] = {}
    warnings: list[str] = []
    for m in messages:
        role = str(m.get("role", "")).lower()
        content = _as_text(m.get("content"))
        if role in ("system", "user", "developer"):
            continue
        if role in ("tool", "function"):
            target = by_call.get(str(m.get("tool_call_id") or m.get("name") or "")) or (steps[-1] if steps else None)
            if target is None:
                warnings.append("a tool result before any call was left out")
                continue
            target.text = target.text + "\n-> " + content
            if target.kind != "search":  # a search's result lists links it did not read
                target.urls = _dedup(target.urls + ([] if target.urls else urls_in(content)))
            continue
        if content.strip():
            steps.extend(_parse_text(content, start=len(steps)).steps if looks_tagged(content)
                         else [_text_step(len(steps) + 1, content, reasoning=bool(m.get("tool_calls")))])
        for call in m.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            kind, text, queries, urls = _call_step(str(fn.get("name") or call.get("type") or "tool"),
                                                   _arguments(fn.get("arguments", fn.get("args"))))
            step = Step(len(steps) + 1, kind, text, queries, urls)
            steps.append(step)
            by_call[str(call.get("id") or fn.get("name") or "")] = step
    return ParsedTrace("messages", steps, warnings)


def _parse_json_steps(items: list) -> ParsedTrace:
    steps: list[Step] = []
    for item in items:
        if isinstance(item, str):
            if item.strip():
                steps.append(_text_step(len(steps) + 1, item))
            continue
        label_key = _label_key(item)
        label = str(item[label_key]) if label_key else ""
        args = _arguments(item.get("arguments", item.get("args", item.get("input"))))
        args.update({k: item[k] for k in ("query", "q", "queries", "url", "urls") if k in item})
        body = "\n".join(_as_text(item[k]) for k in _TEXT_KEYS if item.get(k) not in (None, "", []))
        kind = _label_kind(label) or ("tool" if label_key in _TOOL_LABEL_KEYS
                                      else classify(body, first=not steps) if body else "analyze")
        _, _, queries, urls = _call_step(label or kind, args)
        if kind == "read" and not urls:
            urls = urls_in(body)
        text = (f"{label}: " if label else "") + (body or json.dumps(args, ensure_ascii=False))
        steps.append(Step(len(steps) + 1, kind, text, queries, _dedup(urls)))
    return ParsedTrace("json_steps", steps, [])


def _label_key(item: dict) -> str:
    """The key naming what a JSON step did: its tool's name when `type` only says it is a call
    (`{"type": "tool_call", "name": "download_file"}`), else the first label key present."""
    key = next((k for k in _TYPE_KEYS if isinstance(item.get(k), str)), "")
    if key == "type" and str(item["type"]).lower() in _CALL_TYPES:
        key = next((k for k in _TOOL_LABEL_KEYS if isinstance(item.get(k), str)), key)
    return key


def _label_kind(label: str) -> str | None:
    low = label.lower()
    if low in KINDS:
        return low
    if low in ("reflect", "reflection", "check", "revise", "revision", "error_correction"):
        return "verify"
    if low in ("thought", "think", "reasoning", "analysis"):
        return "analyze"
    return _tool_kind(low) if low else None


# --- text ------------------------------------------------------------------------------------------

def _parse_text(text: str, start: int = 0) -> ParsedTrace:
    if looks_tagged(text):
        return ParsedTrace("tagged", _tagged_steps(text, start), [])
    marks = list(_STEP_RE.finditer(text))
    if len(marks) >= 2:
        chunks = [text[m.end(): (marks[i + 1].start() if i + 1 < len(marks) else len(text))]
                  for i, m in enumerate(marks)]
        steps = [_text_step(start + n + 1, c) for n, c in enumerate(c for c in chunks if c.strip())]
        return ParsedTrace("numbered", steps, [])
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if len(paragraphs) == 1:
        paragraphs = [p for p in re.split(r"(?<=[.!?。])\s+(?=[A-Z\u4e00-\u9fff])", text) if p.strip()]
    steps = [_text_step(start + n + 1, p) for n, p in enumerate(paragraphs)]
    return ParsedTrace("prose", steps, ["prose trace: steps by paragraph and kinds by key words (a judge reads "
                                        "prose better)"])


def _tagged_steps(text: str, start: int) -> list[Step]:
    """One step per piece of a tagged trace (core/trace_tags.py), in trace order: a think block or
    reasoning tag is a reasoning step, each tool call a step of the kind its name says."""
    steps: list[Step] = []
    for piece in tagged_pieces(text):
        if piece.role != "tool" or piece.tool.lower() in REASONING_TAGS:
            if piece.body.strip():
                steps.append(_text_step(start + len(steps) + 1, piece.body, first=not steps and not start,
                                        reasoning=True))
            continue
        steps.append(_tool_piece_step(start + len(steps) + 1, piece))
    return steps


def _tool_piece_step(index: int, piece: Piece) -> Step:
    """A tagged tool call as a step: its arguments from the tag's line (JSON or a plain query/URL), or
    from the lines under it when that line is empty; the text keeps all of the call and its output."""
    source = piece.head or piece.body
    args = _arguments(source) if source.lstrip().startswith("{") else {"input": _unquote(source.split("\n", 1)[0])}
    kind, _, queries, urls = _call_step(piece.tool, args)
    if kind == "read" and not urls and piece.head and " " not in piece.head:
        urls = [piece.head]  # `[scrape] example.org/page`: the address as written
    elif kind not in ("search", "read") and not urls:
        urls = urls_in(source)  # the links the call works on (a search's results were not opened)
    text = f"[{piece.tool}] {piece.body}".rstrip()
    return Step(index, kind, text, queries, urls)


def _unquote(text: str) -> str:
    text = text.strip()
    quoted = len(text) > 1 and text[0] in "\"“'" and text[-1] in "\"”'" and text.count(text[0]) <= 2
    return text[1:-1].strip() if quoted else text


def _text_step(index: int, text: str, first: bool | None = None, reasoning: bool = False) -> Step:
    text = text.strip()
    kind = classify(text, first=index == 1 if first is None else first, reasoning=reasoning)
    queries = []
    if kind == "search":
        quoted = _QUOTED_RE.findall(text)
        found = _SEARCH_FOR_RE.search(text)
        queries = quoted[:3] or ([found.group(1).strip(" \"'“”")[:200]] if found else [])
    return Step(index, kind, text, queries, urls_in(text))


# --- after parsing ---------------------------------------------------------------------------------

def _finish(parsed: ParsedTrace) -> ParsedTrace:
    for i, step in enumerate(parsed.steps):
        step.index = i + 1
        step.queries = _dedup([q.strip() for q in step.queries if q and q.strip()])
        step.urls = _dedup(step.urls)
    _link(parsed.steps)
    return parsed


def _link(steps: list[Step]) -> None:
    last_search = None
    reads_since: list[int] = []
    analyzed: list[int] = []
    for step in steps:
        before = step.index - 1 if step.index > 1 else None
        if step.kind == "read":
            step.depends_on = [last_search] if last_search else ([before] if before else [])
            reads_since.append(step.index)
        elif step.kind == "analyze":
            step.depends_on = reads_since or ([before] if before else [])
            reads_since = []
            analyzed.append(step.index)
        elif step.kind == "synthesize":
            step.depends_on = list(analyzed) or ([before] if before else [])
        elif step.kind == "verify":
            step.depends_on = [before] if before else []
            analyzed.append(step.index)
        else:  # plan, search, tool
            step.depends_on = [before] if before else []
        if step.kind == "search":
            last_search = step.index


def _dedup(items: list[str]) -> list[str]:
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
