"""Skill documents: one JSON file per skill or reference in the skills folder, shared by processes.

A *skill* is an instruction for a kind of task (e.g. writing classical Chinese poems) and a
*reference* is a file that skill relies on (``references/qijue.md``). Each lives in its own
JSON file in ``Settings.skills_dir`` (``data/skills/``; ``/data/skills/`` in the add-on):

- ``{skill}-skill-{hash8}.json`` or ``{skill}-reference-{reference}-{hash8}.json`` where
  ``skill`` and ``reference`` are kebab-case (see ``kebab_case``) and ``hash8`` is the first 8 hex
  digits of the SHA-256 of ``content``;
- deprecated documents move to ``.deprecated/`` inside the folder;
- every write takes ``<folder>/.lock`` and replaces files atomically; readers never lock and
  re-read a file only when its (inode, mtime_ns, size) or the folder changed;
- the JSON shape is ``webapp/schemas/skill-document.schema.json``; a file that breaks it is
  skipped by listings and reported by ``problems()``, never overwritten.

At most one live document exists per *key* (kebab skill name, type, kebab reference name): a
second one is refused with ``SkillDocumentConflictError``. Names that differ only by case or
width (``Poem-Writer``, ``poem-writer``, ``ＰＯＥＭ-writer``) have the same key and file prefix,
so they can never collide on a case-insensitive file system.

Runtime memories are skill/reference memories a host program keeps in process (the same
fields, as dicts or ``SkillDocument``). ``merge_memories`` and ``SkillDocumentStore.search``
combine them with the documents; pass them per call (``search(q, runtime=...)``) or once to
the constructor (``SkillDocumentStore(runtime=registry.all)``, a list or a zero-argument callable
read at every call).

The modules: ``naming`` (file names, keys), ``validation`` (the schema), ``documents`` (the
model), ``drafts`` (what a form sends, checked and made a record), ``folder`` (the read
cache), ``merge``, ``search``, ``importing`` (skill folders),
``archive`` (uploaded zips), ``staging`` (uploads kept between an import's preview and its
confirmation) and ``store`` (``SkillDocumentStore``). Everything public is
importable from here.
"""

from ...text import fold
from .archive import MAX_ZIP_BYTES, MAX_ZIP_MEMBERS
from .documents import SNIPPET_CHARS, TYPES, SkillDocument, as_document, derive_snippet
from .drafts import (
    NEEDS_DESCRIPTION,
    description_of,
    edited_record,
    name_problems,
    new_record,
    text_problems,
)
from .errors import (
    InvalidSkillDocumentError,
    SkillDocumentConflictError,
    SkillDocumentError,
    SkillEditedHereError,
    SkillImportError,
    UnsafeNameError,
)
from .folder import DEPRECATED_DIR, MAX_FILE_BYTES, SkillDocumentProblem
from .importing import (
    MAX_REFERENCES,
    MAX_SOURCE_BYTES,
    ImportPlan,
    ImportReport,
    PlannedDocument,
)
from .merge import MergedMemory, Origin, RuntimeSource, merge_memories
from .naming import (
    MAX_NAME_BYTES,
    content_hash,
    document_file_name,
    document_key,
    kebab_case,
    reference_slug,
)
from .search import MAX_QUERY_CHARS, SearchHit, score_document, search_entries
from .staging import STAGED_MAX_AGE_S, StagedImport, StagedImportGoneError
from .store import LOCK_NAME, SkillDocumentStore
from .validation import (
    schema,
    validate_record,
)

__all__ = [
    "description_of",
    "edited_record",
    "name_problems",
    "new_record",
    "text_problems",
    "DEPRECATED_DIR",
    "LOCK_NAME",
    "MAX_FILE_BYTES",
    "MAX_NAME_BYTES",
    "MAX_QUERY_CHARS",
    "MAX_REFERENCES",
    "MAX_SOURCE_BYTES",
    "MAX_ZIP_BYTES",
    "MAX_ZIP_MEMBERS",
    "NEEDS_DESCRIPTION",
    "SNIPPET_CHARS",
    "TYPES",
    "ImportPlan",
    "ImportReport",
    "InvalidSkillDocumentError",
    "MergedMemory",
    "Origin",
    "PlannedDocument",
    "RuntimeSource",
    "SearchHit",
    "SkillDocument",
    "SkillDocumentConflictError",
    "SkillDocumentError",
    "SkillDocumentProblem",
    "SkillEditedHereError",
    "SkillDocumentStore",
    "STAGED_MAX_AGE_S",
    "StagedImport",
    "StagedImportGoneError",
    "SkillImportError",
    "UnsafeNameError",
    "as_document",
    "content_hash",
    "derive_snippet",
    "document_file_name",
    "document_key",
    "fold",
    "kebab_case",
    "merge_memories",
    "reference_slug",
    "schema",
    "score_document",
    "search_entries",
    "validate_record",
]
