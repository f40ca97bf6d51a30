"""Agent chatter: what a research agent says about its own work, left in the report it publishes.

Two shapes, both kept out of the claims (a claim is something the report asserts about the world):
- whole lines or blocks: tool-call echoes (`<tool_call>…</tool_call>`, `{"name": "web_search",
  "arguments": …}`, `Calling tool: search(…)`, `[web_search] …`) and reasoning blocks
  (`<think>…</think>`, or everything before a lone `</think>` when the opening tag was in the prompt);
- sentences: narration of the research ("Now let me search…", "Based on my research, I'll
  provide…", "让我搜索一下…", "需要进一步了解…") and sign-offs ("I hope this helps", "希望对您有所帮助").

The sentence rules are deliberately narrow: each one needs the agent speaking about searching,
reading or writing, so a report sentence such as "Based on the 2023 census, the population rose 4%"
or "We need to invest more in storage" stays a claim.
"""
from __future__ import annotations

import re

__all__ = ["is_chatter_sentence", "chatter_lines", "MAX_JSON_ECHO_LINES"]

MAX_JSON_ECHO_LINES = 60  # a tool-call JSON longer than this is not an echo we recognise
MAX_BLOCK_LINES = 400  # an opening tag without its closing tag this far on marks its own line only

# ---------------------------------------------------------------- sentences (English)

_EN_OPENERS = r"(?:(?:ok(?:ay)?|alright|all right|great|good|perfect|sure|excellent|now|next|first|then|finally|so)\b[,!.:]?\s+)*"
_EN_RESEARCH_VERBS = (
    r"(?:search|look|check|find|gather|research|verify|try|fetch|browse|visit|open|read|dig|explore|examine"
    r"|investigate|review|compile|write|draft|compose|put together|provide|create|summari[sz]e|organi[sz]e"
    r"|analy[sz]e|start|begin|continue|conduct|perform|get|collect|pull|focus|synthesi[sz]e|prepare|structure"
    r"|outline|query|scrape|call|use|run|access|consult|do (?:a|another|one more|some|more|a few)|make sure"
    r"|note|see what|figure out|break down|present|deliver|produce|finali[sz]e)"
)
_EN_ACTOR = (
    r"(?:let me|let's|let us|I'll|I will|I'm going to|I am going to|I need to|I should|I must|I want to"
    r"|I'd like to|I would like to|I can|I'm now going to|I am now going to)"
)
_EN_WRITING_VERBS = r"(?:provide|write|compile|present|prepare|create|draft|put together|give|summari[sz]e|outline|deliver|produce|share)"
_EN_ADVERBS = r"(?:\s+(?:now|also|next|then|first|quickly|further|additionally|go ahead and|start by|begin by|continue to|proceed to|try to|need to|attempt to))*"

_EN_CHATTER = [
    # "Now let me search for …", "Okay, I will research …", "Next, I'll compile …"
    _EN_OPENERS + _EN_ACTOR + _EN_ADVERBS + r"\s+" + _EN_RESEARCH_VERBS + r"\b",
    # "I'm searching for …", "I am now looking into …"
    _EN_OPENERS + r"(?:I'm|I am)(?:\s+now)?\s+(?:searching|looking|checking|gathering|researching|trying|fetching"
    r"|browsing|compiling|writing|reading|going to|about to|ready to)\b",
    # "Now I have enough information …", "I've gathered …"
    _EN_OPENERS + r"(?:I(?:'ve| have)(?:\s+now)?|I now have|now I have)\s+(?:gathered|collected|found|got|obtained"
    r"|completed|enough|sufficient|all the|a good|a comprehensive|comprehensive|a clear|a solid)\b",
    # "Searching for …", "Looking up …"
    r"(?:searching|browsing|fetching|looking up)\b",
    # "Based on my research, I'll provide …" (a fact after the comma stays a claim)
    r"(?:based on|from|with|after|having completed|according to) (?:my|our|the|these|this|all (?:the|this|my)|the above"
    r"|the gathered|the collected)?\s*(?:research|searches|search(?:es)? (?:results)?|search results|findings"
    r"|investigation|(?:information|data) (?:I(?:'ve| have)|we(?:'ve| have)) (?:gathered|collected|found)"
    r"|(?:gathered|collected) (?:information|data)|analysis|sources (?:I(?:'ve| have)) found)\b[^.!?]{0,120}?,\s*"
    r"(?:here(?:'s| is| are)\b|(?:now\s+)?(?:I'll|I will|I'm going to|I am going to|I can|let me|let's|I'm|I am)"
    r"(?:\s+(?:now|ready to|going to|able to))*\s+" + _EN_WRITING_VERBS + r"\b)",
    # "Here is the final report on …"
    r"here(?:'s| is| are) (?:the|a|my|our|your) (?:final |complete |comprehensive |detailed |full |structured"
    r" |in-depth |thorough |updated )*(?:report|answer|article|summary|analysis|overview|research report"
    r"|write-?up|response|draft)\b",
    # sign-offs
    r"(?:I hope (?:this|that|the|you)|let me know if|please let me know|feel free to|would you like (?:me|more|a)"
    r"|if you(?:'d| would) like(?: me)? to|do you want me to|shall I|should I (?:search|look|dig|expand|continue))\b",
    # search narration and apologies
    r"(?:the|my|these|those) (?:search(?:es)?|search results|web results|results of (?:my|the) search(?:es)?)"
    r" (?:returned|yielded|did not|didn't|don't|do not|turned up|came back|show(?:ed)? (?:no|nothing|little|limited))\b",
    r"I (?:couldn't|could not|was unable to|wasn't able to|was not able to|cannot|can't|can not) "
    r"(?:find|locate|access|retrieve|open|confirm|verify|load)\b",
]

# ---------------------------------------------------------------- sentences (Chinese)

_ZH_RESEARCH_VERBS = (
    r"(?:搜索|查找|查询|查看|检索|了解|研究|收集|搜集|整理|浏览|访问|核实|确认|获取|分析|撰写|编写|总结|看看|看一下"
    r"|深入|继续|调查|梳理|汇总|找到|掌握|完成|提供|为您|给您|补充|查阅|阅读|打开|验证|对比|比较)"
)
_ZH_OPENERS = r"(?:(?:好的|好|嗯|OK|Ok|ok|那么|现在|接下来|下面|然后|首先|其次|最后|同时|此外|另外)[，,、！!。：:\s]*)*"
_ZH_CHATTER = [
    # "让我搜索一下…", "现在我需要查找…", "我将为您撰写…"
    _ZH_OPENERS + r"(?:请)?(?:让我(?:们)?|我(?:来|将|会|要|需要|先|再|得|想|打算|准备|现在|接下来|正在|还需要|需要再|会再|将会))"
    r".{0,24}?" + _ZH_RESEARCH_VERBS,
    # "需要进一步了解…", "还需要更多数据…"
    _ZH_OPENERS + r"(?:还|仍然?|我)?需要(?:进一步|更多|再|继续|补充|更详细)的?.{0,6}?"
    r"(?:了解|搜索|查找|查询|确认|核实|信息|数据|资料|细节|搜集|收集|验证|查看|检索)",
    # "我已经收集了足够的信息…"
    _ZH_OPENERS + r"我(?:们)?(?:已经|已)(?:收集|搜集|获取|找到|掌握|了解|完成|获得)",
    # "根据我的研究，我将…" (a fact after the comma stays a claim)
    r"(?:根据|基于)(?:我的|我们的|以上的?|上述的?|这些|前面的?)?(?:研究|搜索|调研|检索|查询|收集的?信息|搜集的?信息)"
    r"(?:结果)?[，,]\s*(?:我|以下|下面|现在|让我)",
    # "以下是关于…的详细报告："
    r"(?:以下|下面)(?:就)?是(?:我|我们|为您|关于|针对|有关).{0,40}?(?:报告|分析|研究|总结|回答)",
    r"以上(?:就)?是(?:我|我们|为您).{0,30}?(?:报告|分析|研究|总结|回答)",
    # sign-offs
    r".{0,20}?希望(?:这|本|以上|此)?(?:份|篇|些|个)?.{0,12}?对(?:您|你)有(?:所)?帮助",
    r".{0,30}?(?:请随时|欢迎随时|随时告诉我|请告诉我|如有(?:其他|任何)?(?:问题|需要))",
    r"我(?:没有|未能|无法|没能)(?:找到|检索到|搜索到|获取到?|访问)",
]

_SENTENCE_RE = re.compile("|".join(f"(?:{p})" for p in _EN_CHATTER + _ZH_CHATTER), re.I)
_LEADING_NOISE = " \t\"'“‘*_>-–—•"


def is_chatter_sentence(sentence: str) -> bool:
    """Is this sentence the agent narrating its research or signing off (not report content)?"""
    return _SENTENCE_RE.match(sentence.lstrip(_LEADING_NOISE)) is not None


# ---------------------------------------------------------------- lines and blocks

_BLOCK_TAGS = ("tool_call", "tool_calls", "function_call", "function_calls", "tool_use", "tool_result",
               "tool_response", "function_results", "function_result", "invoke", "think", "thinking",
               "search_results", "search_result", "tool_output")
_OPEN_TAG_RE = re.compile(r"^\s*<(" + "|".join(_BLOCK_TAGS) + r")\b[^<>]{0,400}>", re.I)
_REASONING_CLOSE_RE = re.compile(r"^\s*</(think|thinking)\s*>", re.I)
_TOOL_NAMES = (r"(?:web_search|websearch|google_search|bing_search|search|search_web|browse|browser|visit|fetch"
               r"|fetch_url|open_url|open_page|scrape|crawl|read_url|analy[sz]e_image|python|code_interpreter|tool_call|tool)")
_TOOL_LINE_RE = re.compile(
    r"^\s*(?:"
    r"(?:calling|invoking|using|running|executing)\s+(?:the\s+)?(?:tool|function)s?\b\s*[:：]?.{0,2000}"
    r"|(?:tool[ _]?calls?|function[ _]?calls?|tool[ _]?use|tool[ _]?results?|tool[ _]?response|tool[ _]?output"
    r"|action[ _]input)\s*[:：].{0,2000}"
    r"|action\s*[:：]\s*[A-Za-z_][\w.]{0,60}\s*[\[({].{0,2000}"
    r"|\[" + _TOOL_NAMES + r"\]\s.{0,2000}"
    r"|" + _TOOL_NAMES + r"\s*\(.{0,2000}\)\s*;?"
    r")\s*$", re.I)
_JSON_ECHO_RE = re.compile(
    r"""^\s*\{\s*"(?:name|tool|tool_name|function|action|type|tool_calls)"\s*:\s*(?:"[^"]{1,80}"\s*,\s*"""
    r""""(?:arguments|parameters|params|args|input|query|action_input|tool_input|url|function)"|\[)""", re.I)


def chatter_lines(lines: list[str], code: list[bool]) -> tuple[set[int], int]:
    """Line numbers of tool-call echoes and reasoning blocks outside code, and how many blocks."""
    found: set[int] = set()
    blocks = 0
    if closing := _lone_reasoning_close(lines, code):
        found.update(range(closing + 1))
        blocks += 1
    i = 0
    while i < len(lines):
        if code[i] or i in found:
            i += 1
            continue
        end = _block_end(lines, code, i)
        if end is None:
            i += 1
            continue
        found.update(range(i, end + 1))
        blocks += 1
        i = end + 1
    return found, blocks


def _block_end(lines: list[str], code: list[bool], i: int) -> int | None:
    """The last line of the chatter block starting at line i, or None when none starts there."""
    line = lines[i]
    if opening := _OPEN_TAG_RE.match(line):
        closing = re.compile(r"</" + opening.group(1) + r"\s*>", re.I)
        if closing.search(line, opening.end()):
            return i
        for j in range(i + 1, min(len(lines), i + MAX_BLOCK_LINES)):
            if code[j]:
                break
            if closing.search(lines[j]):
                return j
        return i
    if _TOOL_LINE_RE.match(line):
        return i
    if _JSON_ECHO_RE.match(line):
        depth = 0
        for j in range(i, min(len(lines), i + MAX_JSON_ECHO_LINES)):
            if j > i and (code[j] or _JSON_ECHO_RE.match(lines[j])):
                return None  # another echo starts before this one closes: not one we can delimit
            depth += _brace_balance(lines[j])
            if depth <= 0:
                return j
        return None
    return None


def _lone_reasoning_close(lines: list[str], code: list[bool]) -> int | None:
    """A `</think>` with no `<think>` before it: the output began inside the model's reasoning."""
    for i, line in enumerate(lines):
        if code[i]:
            continue
        if (opening := _OPEN_TAG_RE.match(line)) and opening.group(1).lower() in {"think", "thinking"}:
            return None
        if _REASONING_CLOSE_RE.match(line):
            return i
    return None


def _brace_balance(line: str) -> int:
    """Opening minus closing braces, ignoring those inside JSON strings."""
    balance, in_string, escaped = 0, False, False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            balance += 1
        elif char == "}":
            balance -= 1
    return balance
