"""mem0: the JSON ``Memory.get_all`` (open source) or ``MemoryClient.get_all`` (platform) gives.

Either ``{"results": [...]}`` or a bare list of memory objects, each with ``memory`` (the
text), ``id``, ``created_at``, ``updated_at``, ``user_id`` and ``metadata.category`` where
present. The category becomes this program's category when it is one of them; the user and
the mem0 category are kept in the evidence, so Review shows them. A memory of a named user
keeps the name ("sam: Likes jazz") unless it is kept as that person's; mem0's default user
("user", "default_user") is the person importing, and theirs come without a name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..stores import CATEGORIES
from .base import Parsed, names_the_user, wrong_format

FORMAT = "mem0"


def items_of(data: Any) -> list[Any] | None:
    """The memory objects of a mem0 answer, or None when ``data`` is not one."""
    if isinstance(data, Mapping) and isinstance(data.get("results"), list):
        data = data["results"]
        if not data:
            return []
    if not isinstance(data, list) or not data:
        return None
    if not all(isinstance(item, Mapping) and "memory" in item for item in data):
        return None
    return data


def parse(data: Any) -> Parsed:
    """Each ``memory`` of a mem0 answer as a candidate."""
    items = items_of(data)
    if items is None:
        raise wrong_format(FORMAT, None, 'no list of objects with a "memory" field')
    parsed = Parsed(FORMAT)
    for number, item in enumerate(items, start=1):
        metadata = item.get("metadata")
        kind = metadata.get("category") if isinstance(metadata, Mapping) else None
        category = kind if isinstance(kind, str) and kind in CATEGORIES else "general"
        said = [f"mem0 {item[key]}" for key in ("id",) if isinstance(item.get(key), str)]
        if isinstance(item.get("user_id"), str):
            said.append(f"user {item['user_id']}")
        if isinstance(kind, str) and kind:
            said.append(f"category {kind}")
        when = item.get("updated_at") or item.get("created_at")
        if isinstance(when, str):
            said.append(when)
        user = item.get("user_id")
        owner = user.strip() if isinstance(user, str) and user.strip() else None
        # "household" is everyone's; mem0's default "user" (or "default_user", "me") is
        # the person importing: their memories come as they are, without a name.
        owner = None if owner == "household" or names_the_user(owner or "") else owner
        text, plain = item.get("memory"), None
        if owner and isinstance(text, str) and text.strip():
            # The user's name stays in the text unless the memory is kept as that person's.
            plain, text = text.strip(), f"{owner}: {text.strip()}"
        parsed.take(
            number,
            text,
            category=category,
            evidence=", ".join(said) or None,
            owner=owner,
            plain=plain,
            subject=owner,
        )
    return parsed
