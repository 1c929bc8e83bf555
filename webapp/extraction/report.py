"""Plain-text account of an extraction run, for the command line."""

from __future__ import annotations

from .run import ExtractionResult


def describe_result(result: ExtractionResult, *, mode: str, dry_run: bool) -> str:
    """Lines saying what was found in one conversation and what happened to it."""
    head = f"{result.conversation_id}: {result.new_messages} new message(s)"
    if not result.ran:
        return f"{head} - skipped, {result.reason}"
    source = "LLM" if result.extractor == "llm" else "regex"
    if result.fell_back:
        source += " (the LLM gave nothing usable)"
    lines = [f"{head} - {len(result.actions)} proposal(s) by {source}"]
    verb = _verb(mode, dry_run)
    queued = {(item.action, item.content) for item in result.queued}
    applied = {memory.content for memory in result.applied}
    for action in result.actions:
        if dry_run:
            # Deletions always wait for a person, in auto mode too.
            status = "would queue" if action.action == "delete" else verb
        elif (action.action, action.content) in queued:
            status = "queued"
        elif action.content in applied and action.action != "delete":
            status = "applied"
        else:
            status = "skipped (already remembered, proposed or rejected)"
        target = f" {action.id}" if action.id else ""
        lines.append(f"  {status}: {action.action}{target} [{action.category}] {action.content}")
        if action.current_content:
            lines.append(f"      was: {action.current_content}")
    return "\n".join(lines)


def _verb(mode: str, dry_run: bool) -> str:
    if mode == "auto":
        return "would apply" if dry_run else "applied"
    return "would queue" if dry_run else "queued"
