"""Plain-text account of an extraction run, for the command line."""

from __future__ import annotations

from .run import ExtractionResult

SKIPPED_WHY = "(already remembered, proposed or rejected)"
# What happened to a proposal, and how a dry run says the same.
WOULD = {"queued": "would queue", "applied": "would apply", "skipped": "would skip"}


def describe_result(result: ExtractionResult) -> str:
    """Lines saying what was found in one conversation and what happened to it.

    A dry run's account is the real run's with "would queue", "would apply" and "would skip"
    for "queued", "applied" and "skipped": it comes from the same decisions.
    """
    head = f"{result.conversation_id}: {result.new_messages} new message(s)"
    if not result.ran:
        return f"{head} - skipped, {result.reason}"
    source = "LLM" if result.extractor == "llm" else "regex"
    if result.fell_back:
        source += " (the LLM gave nothing usable)"
    lines = [f"{head} - {len(result.actions)} proposal(s) by {source}"]
    if result.llm_problem is not None and result.llm_problem.call_failed:
        lines.append(f"  {result.llm_problem}")
    if result.left_unread:
        lines.append(
            f"  {result.left_unread} newer message(s) left unread: more than the LLM reads in "
            "one run; the next run reads them"
        )
    if result.cut:
        lines.append(
            f"  {result.cut} more fact(s) left out: at most {result.max_facts} per "
            "conversation (MEMORY_MAX_FACTS_PER_THREAD)"
        )
    queued = {(item.action, item.content) for item in result.queued}
    applied = {memory.content for memory in result.applied}
    for action in result.actions:
        if (action.action, action.content) in queued:
            status, why = "queued", ""
        elif action.content in applied and action.action != "delete":
            status, why = "applied", ""
        else:
            status, why = "skipped", f" {SKIPPED_WHY}"
        if result.dry_run:
            status = WOULD[status]
        target = f" {action.id}" if action.id else ""
        lines.append(
            f"  {status}{why}: {action.action}{target} [{action.category}] {action.content}"
            + _whose(result, action.person, action.action)
        )
        if action.current_content:
            lines.append(f"      was: {action.current_content}")
        if action.tombstone_id:
            lines.append("      deleted before: a person deleted this fact, so it waits in Review")
        if action.withheld:
            lines.append(
                f"      held back: {action.withheld} (a secret is never proposed as it was said; "
                "the fact says only that there is one)"
            )
    return "\n".join(lines)


def _whose(result: ExtractionResult, person: str | None, action: str) -> str:
    """`` — Maya's`` or `` — the household's`` after a new fact, when the thread has people."""
    if action != "add" or not any(a.person for a in result.actions):
        return ""
    if person is None:
        return " — the household's"
    return f" — {result.names.get(person, person)}'s"
