"""A host program written against the names the docs showed before the layout sweep of issue
#45 keeps working: every import the README and docs/*.md gave a host program in 0.6.0, and the
package APIs they named (the secrets reader among them, now the package webapp.sensitive)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import REPO

IMPORTS = [
    "from webapp.library import CodedError, ConversationStore, MemoryStore, PeopleStore, Settings",
    "from webapp.library import compose_prompt, slack_key, slack_person",
    "from webapp.stores import MemoryStore, ConversationStore, PeopleStore, slack_key, slack_person",
    "from webapp.stores import ReviewQueue, DuplicateMemoryError, SecretInputError, write_atomic",
    "from webapp.prompts import compose_prompt",
    "from webapp.settings import Settings",
    "from webapp.curator import Curator, SimilarMemoryError",
    "from webapp.extraction import LlmMemoryExtractor, MemoryExtractor, OpenAiCaller",
    "from webapp.extraction import extract_conversation",
    "from webapp.sensitive import find_secrets, mask_secrets",
    "from webapp import create_app, __version__",
]


@pytest.mark.parametrize("line", IMPORTS)
def test_a_documented_import_still_works_in_a_fresh_process(line: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", line], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_secrets_reader_answers_through_its_package() -> None:
    from webapp.sensitive import find_secrets

    assert find_secrets("The garage door code is 4821.") is not None
    assert find_secrets("Prefers tea without sugar.") is None
