"""Tagged research traces cut into pieces in trace order (methods/miroeval.md section 3, formats.md).

What tagged traces hold, each piece kept where it stands in the trace:
- `<think>...</think>` reasoning (an unclosed `<think>` runs to the end, a trace cut at its start may
  open with a stray `</think>`: the text before it is reasoning too);
- tool calls as tag lines, `[name] head` followed by the lines that belong to the call (code under
  `[run_python_code]`, results under `[web_search] query`), for any tool name: `[web_search]`,
  `[scrape]`, `[create_sandbox]`, `[download_file]`, `[search_document]`, ...;
- tool calls as XML blocks: `<tool_call>{"name", "arguments"}</tool_call>` and
  `<use_mcp_tool><tool_name>..</tool_name><arguments>..</arguments></use_mcp_tool>`;
- any other text between them.

Which lines belong to a tag line: in a trace whose reasoning is in `<think>` blocks, every line up to the
next think block or tool call (the agent reasons only inside the blocks); elsewhere, and inside a think
block, the lines up to the first blank line (a paragraph after it is the agent's own text).
A tag name is a tool name when it is one of the common ones (any case) or written in lower case
(`[Note]`, `[Step 1]`, `[1]` and Markdown links `[title](url)` are not tool calls).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

REASONING_TAGS = frozenset({"reasoning", "thinking", "thought", "think"})  # a block of the agent's reasoning
KNOWN_TAGS = frozenset({"web_search", "search", "scrape", "browse", "visit", "fetch", "analyze_image", "analyze",
                        "python", "code"}) | REASONING_TAGS

_MARKER_RE = re.compile(
    r"(?P<open><think>)|(?P<close></think>)"
    r"|(?P<tag>^[ \t]*\[(?P<name>[A-Za-z][\w.\-]{1,63})\](?!\()[ \t]*(?P<head>[^\r\n]*))"
    r"|(?P<xml><tool_call>(?P<xml_body>.*?)(?:</tool_call>|\Z))"
    r"|(?P<mcp><use_mcp_tool>(?P<mcp_body>.*?)(?:</use_mcp_tool>|\Z))",
    re.I | re.M | re.S)
_THINK_MARK_RE = re.compile(r"</?think>", re.I)
_BLANK_LINE_RE = re.compile(r"\n[ \t\r]*\n")
_JSON_NAME_RE = re.compile(r'"name"\s*:\s*"([^"\\]{1,64})"')
_MCP_FIELD_RE = re.compile(r"<(tool_name|server_name|arguments)>(.*?)(?:</\1>|\Z)", re.S | re.I)


@dataclass
class Piece:
    role: str  # think | text | tool
    body: str
    tool: str = ""  # the tool's name (role tool)
    head: str = ""  # the rest of the tag's own line (`[tool] head`); "" for XML calls


def is_tool_tag(name: str) -> bool:
    return name.lower() in KNOWN_TAGS or name == name.lower()


def looks_tagged(text: str) -> bool:
    """True when the text has a think block or a tool call this module cuts out."""
    if _THINK_MARK_RE.search(text):
        return True
    return any(not m.group("tag") or is_tool_tag(m.group("name")) for m in _MARKER_RE.finditer(text))


def tagged_pieces(text: str) -> list[Piece]:
    """The trace's pieces in trace order; their bodies hold all of its text but the markers."""
    cutter = _Cutter(delimited=bool(_THINK_MARK_RE.search(text)))
    pos = 0
    for m in _MARKER_RE.finditer(text):
        if m.group("tag") and not is_tool_tag(m.group("name")):
            continue  # plain text: taken with the gap before the next marker
        cutter.gap(text[pos:m.start()])
        pos = m.end()
        if m.group("open"):
            cutter.open_think()
        elif m.group("close"):
            cutter.close_think()
        elif m.group("tag"):
            cutter.tag(m.group("name"), m.group("head").strip())
        elif m.group("xml") is not None and m.group("xml_body") is not None:
            cutter.call(*_json_call(m.group("xml_body")))
        else:
            cutter.call(*_mcp_call(m.group("mcp_body") or ""))
    cutter.gap(text[pos:])
    return [p for p in cutter.pieces if p.body.strip() or p.role == "tool"]


class _Cutter:
    def __init__(self, delimited: bool) -> None:
        self.delimited = delimited  # the trace keeps its reasoning in <think> blocks
        self.pieces: list[Piece] = []
        self.in_think = False
        self.seen_think = False
        self.open_tool: Piece | None = None  # a tag line still taking the lines that follow it

    def gap(self, text: str) -> None:
        if self.open_tool is not None:
            if self.delimited and not self.in_think:
                taken, text = text, ""
            else:
                blank = _BLANK_LINE_RE.search(text)
                taken, text = (text[:blank.start()], text[blank.end():]) if blank else (text, "")
            self.open_tool.body = "\n".join(x for x in (self.open_tool.body, taken.strip("\r\n")) if x.strip())
            if text:
                self.open_tool = None
        if text.strip():
            self.pieces.append(Piece("think" if self.in_think else "text", text.strip()))

    def open_think(self) -> None:
        self.open_tool, self.in_think, self.seen_think = None, True, True

    def close_think(self) -> None:
        if not self.in_think and not self.seen_think:  # a trace cut inside its first thought
            for piece in reversed(self.pieces):
                if piece.role != "text":
                    break
                piece.role = "think"
        self.open_tool, self.in_think, self.seen_think = None, False, True

    def tag(self, name: str, head: str) -> None:
        self.open_tool = Piece("tool", head, name, head)
        self.pieces.append(self.open_tool)

    def call(self, name: str, body: str) -> None:
        self.open_tool = None
        self.pieces.append(Piece("tool", body.strip(), name))


def _json_call(body: str) -> tuple[str, str]:
    """(name, arguments as text) of a `<tool_call>` JSON body; a body that is no JSON keeps its text."""
    try:
        call = json.loads(body)
    except json.JSONDecodeError:  # a call cut at a size limit: its name if it was written before the cut
        named = _JSON_NAME_RE.search(body)
        return (named.group(1) if named else "tool_call"), body
    if not isinstance(call, dict):
        return "tool_call", body
    args = call.get("arguments", call.get("parameters", call.get("args")))
    shown = args if isinstance(args, str) else json.dumps(args if args is not None else {}, ensure_ascii=False)
    return str(call.get("name") or "tool_call"), shown


def _mcp_call(body: str) -> tuple[str, str]:
    """(name, arguments) of a `<use_mcp_tool>` block (MiroFlow's calls)."""
    fields = {m.group(1).lower(): m.group(2).strip() for m in _MCP_FIELD_RE.finditer(body)}
    return fields.get("tool_name") or "use_mcp_tool", fields.get("arguments", body.strip())
