"""Stand-in vision answers for MiroEval's image key facts (template miroeval/image_key_facts).

The stand-in model does not look at pixels: it reads what the image says it shows (the PNG
`Description` chunk or JPEG comment that bench/make_demo_images.py writes), one key fact per
sentence. A changed image therefore changes the answer, and an image without that text gets no facts,
like a model that could not read it."""
from __future__ import annotations

import io
import re

from PIL import Image

from loopback_llm import image_parts, message_text

PROMPT = "A user attached the image shown with this message to a research request."
_SENTENCE_END_RE = re.compile(r"(?<=\.) (?=[A-Z])")


def answer(request: dict, schema: dict | None) -> dict | None:
    if not any(PROMPT in message_text(m.get("content")) for m in request.get("messages", [])):
        return None
    facts: list[str] = []
    for part in image_parts(request):
        if part is not None:
            facts.extend(s for s in _SENTENCE_END_RE.split(shown_in(part[1])) if s.strip())
    return {"facts": facts[:12]}


def shown_in(data: bytes) -> str:
    """What the image says it shows ('' when it says nothing)."""
    info = Image.open(io.BytesIO(data)).info
    comment = info.get("comment", b"")
    return info.get("Description") or (comment.decode() if isinstance(comment, bytes) else str(comment))
