"""Partition keys: `^[a-z0-9][a-z0-9._-]{0,127}$`, derived from original ids, validated before use."""
from __future__ import annotations

import hashlib
import re
import unicodedata

KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


class InvalidKeyError(ValueError):
    pass


def slugify(text: str, max_len: int = 80) -> str:
    """A readable ASCII slug; characters Dagster or SQL could trip on (| ' " /) become dashes.

    Text that loses letters on the way (non-Latin scripts, truncation) gets a short hash suffix so
    distinct ids keep distinct keys.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9._]+", "-", ascii_text.lower()).strip("-._")
    lost_letters = len(re.sub(r"\W", "", ascii_text)) < len(re.sub(r"\W", "", text))
    if lost_letters or len(slug) > max_len or not slug:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
        slug = f"{slug[:max_len].strip('-._')}-{digest}".strip("-")
    return slug


def task_key(benchmark: str, original_id: str) -> str:
    return validate_key(f"{slugify(benchmark, 16)}.{slugify(original_id)}")


def validate_key(key: str) -> str:
    if not KEY_PATTERN.match(key):
        raise InvalidKeyError(
            f"invalid partition key {key!r}: keys must match {KEY_PATTERN.pattern} "
            "(lower-case letters, digits, '.', '_', '-'; no '|', quotes or spaces)"
        )
    return key
