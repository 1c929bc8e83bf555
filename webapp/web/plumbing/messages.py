"""Library errors in the page's language: one message per error code.

Every error of the library a person can act on carries a ``code`` and the ``values`` of its
message (``webapp.problems``); so does each per-field ``Problem`` (of a curator refusal naming its ``field``,
``text_problems``, ``name_problems``). ``describe`` words it for the page: on an English
page the library's own message (what the CLI and the MCP server show, so every interface says
the same), otherwise ``MESSAGES[code]`` translated, with the values formatted for the language
(numbers grouped, lists joined, the operating system's reason by errno, categories by their
label). Nothing here reads the English text of an error.
"""

from __future__ import annotations

import errno as errnos
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babel.lists import format_list
from flask_babel import get_locale, gettext
from flask_babel import lazy_gettext as _l

from ..blueprints.i18n import current_language, format_number
from .formatting import category_label


def N_(message: str) -> str:
    """Marks a message for extraction (pybabel's default keyword); translated in ``describe``."""
    return message


# code → the message in English, as the library says it, with its values as placeholders.
MESSAGES: dict[str, str] = {
    # stores (webapp/stores/errors.py)
    "store_corrupt": N_(
        "The store file %(path)s is damaged: %(reason)s. It was left untouched; run "
        "`memory-curator repair` to set it aside and start from the last good backup."
    ),
    "store_corrupt_at_line": N_(
        "The store file %(path)s is damaged at line %(line)s, column %(column)s: "
        "%(reason)s. It was left untouched; run `memory-curator repair` to set it aside "
        "and start from the last good backup."
    ),
    "store_corrupt_at_byte": N_(
        "The store file %(path)s is damaged at byte %(offset)s: %(reason)s. It was left "
        "untouched; run `memory-curator repair` to set it aside and start from the last "
        "good backup."
    ),
    "store_busy": N_(
        "The store file %(path)s is busy: another process held its lock for more than "
        "%(seconds)s s. Nothing was changed; try again."
    ),
    "store_replaced": N_(
        "The store file %(path)s is busy: another program kept replacing it while this "
        "change was being saved. Nothing was changed; try again."
    ),
    "store_symlink": N_(
        "The store file %(path)s is a symbolic link to %(target)s. Saving through it would "
        "replace the link with a plain file and split the store in two, so nothing was "
        "changed. Point the data folder setting at the real folder, or move %(target)s to "
        "%(path)s in place of the link."
    ),
    "store_format_newer": N_(
        "The store file %(path)s is in format %(version)s, written by %(written_by)s; this "
        "release (%(release)s) knows format %(known)s at most, so it does not change the "
        "file. Nothing was changed; update Memory Curator to write to it."
    ),
    "store_format_unreadable": N_(
        "The format file %(path)s cannot be read (%(reason)s), so which format "
        "%(data_path)s is in is unknown and nothing was changed. Put the format file back "
        "from a backup, or delete it if %(data_path)s is in format 1 (as every release "
        "before format files wrote it)."
    ),
    "store_write": N_(
        "Could not save %(path)s: %(reason)s. The file was left as it was; nothing was changed."
    ),
    "memory_full": N_(
        "The memory store is full: %(items)s of %(max_items)s memories are used. "
        "Delete or update a memory before adding another."
    ),
    "memory_full_chars": N_(
        "The memory store is full: %(chars)s of %(max_chars)s characters are used and "
        "this needs %(needed)s more. Shorten, delete or update memories first."
    ),
    "memory_import_full": N_(
        "Importing would leave %(items)s memories and %(chars)s characters; the caps are "
        "%(max_items)s memories and %(max_chars)s characters. Nothing was imported."
    ),
    "memory_too_long": N_(
        "This is %(length)s characters; one memory can hold at most %(max_chars)s "
        "(the whole store's limit). Shorten it."
    ),
    "duplicate_memory": N_("This is already remembered (id %(id)s); nothing was added."),
    # the curator (webapp/curator/errors.py)
    "similar_memory": N_(
        "This looks like a memory already kept (id %(id)s): “%(content)s”. Nothing was added; "
        "add it anyway only if it says something else."
    ),
    "unknown_person": N_(
        "No person “%(name)s” is known yet; the name now waits on the People page to be added "
        "as a person or linked to one. Nothing was changed."
    ),
    "person_ambiguous": N_(
        "%(count)s people of the household go by “%(name)s”: name the person by their whole "
        "name or by their id (the People page shows both). Nothing was changed."
    ),
    "merge_private": N_(
        "The memory kept is the household's and the other is one person's: the household's "
        "keeps its own words (or keep the person's instead), so that a person's private "
        "wording never reaches everyone. Nothing was changed."
    ),
    "merge_across_people": N_(
        "These are two people's memories: one person's fact is never merged into another's. "
        "Nothing was changed."
    ),
    "household_not_one_fact": N_(
        "Only copies of one fact, each kept by a different person, can become the "
        "household's. Nothing was changed."
    ),
    "version_missing": N_(
        "The version of the memory %(id)s as you saw it is missing, so nobody can tell "
        "whether it changed since; reload and try again. Nothing was changed."
    ),
    "owner_undecided": N_(
        "Nobody could tell whose this fact is: choose the household or a person before "
        "approving it. Nothing was changed."
    ),
    "conflict": N_(
        "This memory was changed elsewhere since you loaded it; nothing was overwritten."
    ),
    "not_found": N_("Not found."),
    "review_item_not_found": N_("No review item with id %(id)s."),
    "tombstone_not_found": N_("No forgotten fact with id %(id)s."),
    "memory_gone": N_("The memory %(id)s is gone: it was deleted elsewhere."),
    "deleted_forever": N_(
        "The memory %(id)s was deleted forever: its words are gone and nothing can bring it "
        "back. Nothing was changed."
    ),
    "conversation_not_found": N_("No conversation %(id)s (or it has no messages)."),
    # what a person typed (webapp/stores/records.py, dismissals.py)
    "content_not_text": N_("Memory content must be text."),
    "content_empty": N_("Memory content cannot be empty."),
    "content_nul": N_("Memory content cannot contain NUL characters."),
    "content_surrogate": N_("Memory content is not valid Unicode text (it has a lone surrogate)."),
    "unknown_category": N_("Unknown category %(category)s; use one of: %(categories)s."),
    "merge_same": N_("Choose two different memories to merge."),
    "not_a_finding": N_("That is not a finding of the Needs attention view."),
    # people of the household (webapp/stores/people.py)
    "identity_kind": N_("Unknown kind of identity %(kind)s; use one of: %(kinds)s."),
    "identity_value": N_("An identity is 1 to %(most)s characters of text."),
    "identity_taken": N_("That identity belongs to %(name)s already; unlink it there first."),
    "device_id": N_("A device id is 1 to %(most)s characters of text."),
    "device_unknown": N_("No device has the id %(id)s."),
    "device_choice": N_("Unknown choice %(choice)s; use one of: speaker, household, person."),
    "device_not_yours": N_(
        "That device answers with another person's memory; only they or an administrator "
        "can change it."
    ),
    "exchange_key": N_("An exchange key is 1 to %(most)s characters of text."),
    "ambiguous": N_("%(count)s memories match: say which one to forget by its id."),
    "person_name": N_("A person's name is 1 to %(most)s characters."),
    "person_name_taken": N_(
        "%(name)s is already a person of the household; give another name, or link the "
        "identity to them."
    ),
    "person_owns_memories": N_(
        "%(name)s still owns %(memories)s private memories and %(waiting)s proposals waiting "
        "in Review; move them to the household or forget them first."
    ),
    "person_id_bad": N_("A person id is 1 to 100 letters, digits, '-' or '_'."),
    "person_unknown": N_("No person has the id %(id)s."),
    "import_not_a_list": N_("An import file must hold a JSON array of memories."),
    # bringing memories from other systems (webapp/imports)
    "import_looks_like": N_(
        "This file is not %(asked)s: it looks like %(looks_like)s (format %(format)s, or auto)."
    ),
    "import_wrong_format": N_("This file is not %(asked)s: %(detail)s."),
    "import_unknown_json": N_(
        "This file is JSON of a shape no importer reads: not a mem0 export, an MCP memory "
        "file, a Letta agent file or a Memory Curator export."
    ),
    "import_bad_json": N_(
        "This file looks like JSON but is not valid JSON: %(problem)s at line %(line)s, "
        "column %(column)s."
    ),
    "import_too_deep": N_(
        "This file nests lists and objects %(depth)s levels deep; an import reads at most %(most)s."
    ),
    "import_unknown_format": N_("Unknown format %(format)s; use auto or one of: %(formats)s."),
    "import_too_large": N_("The file is larger than %(size)s MB; no memory list is that large."),
    "import_not_utf8": N_("The file is not UTF-8 text (bad byte at position %(position)s)."),
    "import_item_not_object": N_("Item %(item)s is not a memory object."),
    "import_item_too_deep": N_(
        "Item %(item)s is nested too deep (more than %(most)s levels of lists and objects); "
        "a memory is a flat record."
    ),
    "import_item_bad_id": N_(
        "Item %(item)s has an unusable id: ids are 1 to 100 letters, digits, '-' or '_'."
    ),
    "import_item_repeated_id": N_("Item %(item)s repeats the id %(id)s."),
    "import_item_problem": N_("Item %(item)s: %(problem)s"),
    "memory_secret": N_(
        "This holds a %(secret)s (“%(masked)s”). A memory is shown to the assistant in every "
        "conversation, so a secret is kept only when you confirm it; or keep only that there "
        "is one: “%(fact)s”"
    ),
    # skill documents (webapp/stores/skills/)
    "skill_needs_description": N_(
        "A skill needs a description: one sentence saying what it does and when to use it "
        "(the assistant picks skills by it)."
    ),
    "skill_content_empty": N_("Content cannot be empty."),
    "skill_content_too_long": N_("Content is too long (%(length)s characters; at most %(most)s)."),
    "skill_content_nul": N_("Content cannot contain NUL characters."),
    "skill_description_too_long": N_(
        "The description is too long (%(length)s characters; at most %(most)s)."
    ),
    "skill_type_unknown": N_("Choose Skill or Reference."),
    "reference_needs_path": N_("A reference needs its path, e.g. references/qijue.md."),
    "name_unsafe": N_("This name cannot be used as a file name."),
    "name_not_text": N_("The %(what)s must be text, got %(type)s."),
    "name_empty": N_("The %(what)s is empty."),
    "name_too_long": N_("The %(what)s is too long (%(length)s characters)."),
    "name_control_character": N_(
        "The %(what)s %(name)s contains the control or invisible character %(character)s."
    ),
    "name_path_separator": N_("The %(what)s %(name)s contains a path separator."),
    "name_dot_dot": N_("The %(what)s %(name)s contains '..'."),
    "name_no_letters": N_("The %(what)s %(name)s has no letters or digits."),
    "name_too_long_for_file": N_(
        "The %(what)s is too long for a file name (%(bytes)s bytes in kebab-case; at most "
        "%(most)s)."
    ),
    "reference_not_relative": N_("The reference path %(path)s must be relative, with '/'."),
    "reference_bad_part": N_("The reference path %(path)s has an empty, '.' or '..' part."),
    "name_outside_folder": N_("Refusing to write %(name)s outside %(folder)s."),
    "invalid_skill_document": N_("The skill document is not valid: %(reasons)s"),
    "invalid_skill_file": N_("%(file)s is not valid: %(reasons)s"),
    "skill_document_exists": N_(
        "A document for this skill or reference already exists (%(file)s, id %(id)s); edit "
        "that one or deprecate it first."
    ),
    "skill_file_unreadable": N_(
        "%(file)s already exists and is not a valid document (%(problem)s); it was left "
        "untouched. Fix or remove it first."
    ),
    "skill_file_taken": N_(
        "%(file)s already holds document %(id)s with the same content; nothing was changed."
    ),
    "skill_edited_here": N_(
        "Skill %(skill)s was not imported: %(names)s changed here since the last import, and "
        "importing would replace those edits. Nothing was changed."
    ),
    "skill_import": N_("The skill cannot be imported."),
    "skill_upload_gone": N_(
        "That import preview has expired or was already applied; choose the file again."
    ),
    "skill_import_problem": N_("%(file)s: %(problem)s"),
    "skill_import_outside_link": N_("%(file)s is a link to a file outside the skill folder."),
    "skill_import_too_large_file": N_("%(file)s is too large (%(size)s bytes; at most %(most)s)."),
    "skill_import_not_utf8": N_("%(file)s is not valid UTF-8 (byte %(byte)s)."),
    "skill_import_unreadable": N_("%(file)s cannot be read: %(reason)s."),
    "skill_import_bad_yaml": N_("%(file)s has front matter that is not valid YAML: %(detail)s"),
    "skill_import_yaml_alias": N_(
        "%(file)s has front matter with a YAML alias (%(alias)s); aliases are not accepted in "
        "front matter. Write the values out."
    ),
    "skill_import_yaml_value": N_(
        "%(file)s has front matter a skill document cannot keep: %(where)s is %(tag)s. "
        "Write it as text, a number or a list."
    ),
    "skill_import_yaml_same_key": N_(
        '%(file)s has front matter with two keys at "%(where)s" once dates, numbers, true, '
        "false and null are written as text. Keep one of them."
    ),
    "skill_import_too_deep": N_(
        "%(file)s has front matter nested too deep (more than %(most)s levels)."
    ),
    "skill_import_not_folder": N_("%(folder)s is not a folder."),
    "skill_import_no_skill_md": N_("%(folder)s has no SKILL.md; it is not an Agent Skills folder."),
    "skill_import_needs_name": N_("SKILL.md needs a `name` in its front matter."),
    "skill_import_description_not_text": N_(
        "The `description` in SKILL.md's front matter must be text."
    ),
    "skill_import_no_instructions": N_("SKILL.md has no instructions after its front matter."),
    "skill_import_empty_reference": N_("%(file)s is empty."),
    "skill_import_too_many_references": N_(
        "The skill has %(count)s reference files; at most %(most)s."
    ),
    "zip_unreadable": N_("The upload is not a readable zip file: %(detail)s"),
    "zip_control_characters": N_("The zip holds a file name with control characters: %(name)s."),
    "zip_absolute_path": N_("The zip holds an absolute or Windows-style path: %(name)s."),
    "zip_climbs_out": N_("The zip holds a path that climbs out of the folder: %(name)s."),
    "zip_too_many_entries": N_("The zip holds %(count)s entries; at most %(most)s."),
    "zip_symlink": N_("The zip holds a symbolic link: %(name)s."),
    "zip_encrypted": N_("The zip entry %(name)s is encrypted."),
    "zip_points_outside": N_("The zip entry %(name)s points outside the folder."),
    "zip_too_large": N_("The zip unpacks to more than %(most)s bytes; it was not imported."),
    "zip_twice": N_("The zip holds %(name)s twice."),
    "zip_entry_unreadable": N_("The zip entry %(name)s cannot be unpacked: %(detail)s"),
    "zip_several_skills": N_("The zip holds several skills; upload one skill folder per zip."),
    "zip_no_skill_md": N_("The zip has no SKILL.md at its top level or in its top folder."),
    # extraction (webapp/extraction/)
    "manual_mode_needs_queue": N_("Manual review mode needs a review queue to put facts in."),
    "llm_sdk_missing": N_(
        "MEMORY_LLM_PROVIDER=%(provider)s needs the %(provider)s SDK: pip install '%(package)s'."
    ),
    "llm_needs_model": N_(
        "MEMORY_LLM_PROVIDER=%(provider)s needs MEMORY_LLM_MODEL (e.g. the model name your "
        "endpoint serves)."
    ),
    "llm_openai_needs_key": N_(
        "MEMORY_LLM_PROVIDER=openai needs MEMORY_LLM_API_KEY (or OPENAI_API_KEY), or "
        "MEMORY_LLM_BASE_URL for a local server."
    ),
    "llm_anthropic_needs_key": N_(
        "MEMORY_LLM_PROVIDER=anthropic needs MEMORY_LLM_API_KEY (or ANTHROPIC_API_KEY)."
    ),
    "llm_homeassistant_needs_entity": N_(
        "MEMORY_LLM_PROVIDER=homeassistant needs MEMORY_HA_AI_TASK_ENTITY (the AI Task entity "
        "whose model answers, e.g. ai_task.ollama_ai_task)."
    ),
    "llm_homeassistant_needs_token": N_(
        "MEMORY_LLM_PROVIDER=homeassistant needs SUPERVISOR_TOKEN: it runs in the Home "
        "Assistant add-on, which the Supervisor gives one."
    ),
    "llm_unknown_provider": N_("Unknown MEMORY_LLM_PROVIDER %(provider)s."),
    "llm_timeout": N_(
        "The LLM did not answer within %(seconds)s s (MEMORY_LLM_TIMEOUT); the call was stopped."
    ),
    "llm_reply_too_large": N_(
        "The LLM's reply was larger than %(most)s bytes (MEMORY_LLM_MAX_REPLY_BYTES); it was "
        "not read further."
    ),
    "llm_call_failed": N_("The LLM call failed: %(reason)s"),
    "llm_no_reply": N_("The LLM gave no reply."),
    "llm_reply_unusable": N_(
        "The LLM's reply was not usable: not the JSON array asked for, or it named a memory "
        "that does not exist."
    ),
    # settings (webapp/settings.py)
    "setting_invalid": N_("A setting has a value the program cannot use."),
    "options_unreadable": N_("Cannot read the add-on options file %(path)s: %(reason)s"),
    "options_not_object": N_("The add-on options file %(path)s must hold a JSON object."),
    "setting_not_boolean": N_("%(source)s must be true or false, got %(value)s."),
    "setting_not_choice": N_("%(source)s must be one of %(choices)s; got %(value)s."),
    "setting_not_positive": N_("%(source)s must be a positive integer, got %(value)s."),
    "setting_not_timezone": N_(
        "%(source)s must be a timezone name such as Europe/Berlin or Asia/Taipei, got %(value)s."
    ),
    "token_blank": N_(
        "The access token %(source)s has only %(visible)s visible characters (spaces, "
        "invisible characters and combining marks do not count); use at least %(least)s."
    ),
    "token_repetitive": N_(
        "The access token %(source)s has only %(distinct)s different characters; use at "
        "least %(least)s different ones (a random token)."
    ),
}

# The kinds of names ``UnsafeNameError`` refuses (its ``what`` value).
NAME_KINDS = {
    "skill name": _l("skill name"),
    "reference path": _l("reference path"),
    "reference name": _l("reference name"),
}

# The kinds of secrets ``webapp.sensitive.secrets`` finds (``SecretInputError``'s ``secret`` value, a
# proposal's ``withheld``, a Needs attention reason), as a person reads them.
SECRET_KINDS = {
    "password": _l("password"),
    "access_code": _l("door, alarm or PIN code"),
    "api_key": _l("API key or token"),
    "card_number": _l("card number"),
    "account_number": _l("bank account number"),
    "one_time_code": _l("one-time code"),
    "id_number": _l("national ID number"),
}


def secret_kind(kind: str) -> str:
    """A kind of secret in the page's language (its code when unknown)."""
    name = SECRET_KINDS.get(kind)
    return str(name) if name is not None else kind


# What the operating system said, by errno (its strerror stays English everywhere else).
OS_REASONS = {
    errnos.ENOSPC: _l("No space left on device"),
    errnos.EDQUOT: _l("Disk quota exceeded"),
    errnos.EACCES: _l("Permission denied"),
    errnos.EPERM: _l("Operation not permitted"),
    errnos.EROFS: _l("Read-only file system"),
    errnos.EIO: _l("Input/output error"),
    errnos.ENOENT: _l("No such file or directory"),
    errnos.EISDIR: _l("Is a directory"),
    errnos.ENOTDIR: _l("Not a directory"),
    errnos.EEXIST: _l("File exists"),
    errnos.EMFILE: _l("Too many open files"),
}


def os_reason(errno: int | None, english: str) -> str:
    """The operating system's reason for ``errno`` in the page's language (``english``, its
    own words, when it is not one we know or the page is in English)."""
    known = OS_REASONS.get(errno) if errno is not None else None
    if known is not None and current_language() != "en":
        return str(known)
    return english


def describe(error: Any) -> str:
    """An error (or a form's ``Problem``) in the page's language; see the module's note.

    Something without a known code (a plain ``ValueError``) keeps its own message.
    """
    code = getattr(error, "code", None)
    if not isinstance(code, str) or code not in MESSAGES or current_language() == "en":
        return str(error)
    try:
        return gettext(MESSAGES[code], **shown_values(code, error.values))
    except (KeyError, TypeError, ValueError):  # raised without the values its code needs
        return str(error)


def shown_values(code: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """An error's values as its message shows them in the page's language."""
    shown: dict[str, Any] = {}
    for key, value in values.items():
        if hasattr(value, "code") and hasattr(value, "values"):
            shown[key] = describe(value)
        elif key == "secret":
            shown[key] = secret_kind(str(value))
        elif key == "what":
            kind = NAME_KINDS.get(str(value))
            shown[key] = str(kind) if kind is not None else str(value)
        elif key == "categories":
            labels = [category_label(c) for c in value]
            shown[key] = format_list(labels, style="or", locale=get_locale())
        elif isinstance(value, (list, tuple)):
            shown[key] = format_list([str(v) for v in value], locale=get_locale())
        elif isinstance(value, bool) or value is None or isinstance(value, (str, Path)):
            shown[key] = value
        elif isinstance(value, (int, float)):
            shown[key] = format_number(value)
        else:
            shown[key] = value
    if "reason" in values and "errno" in values:
        shown["reason"] = os_reason(values["errno"], str(values["reason"]))
    if code == "unknown_category":
        shown["category"] = repr(values.get("category"))
    return shown
