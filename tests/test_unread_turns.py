"""Issue 36, item 1: trimming never loses a message extraction has not read, and the background
extraction reads due threads by itself.

A host program that only uses the library (no dashboard running) adds exchanges; the caps trim
the thread's window (``get_history``, what the prompt gets) as before, but the turns they drop
before extraction read them are kept aside in the thread until it does (``turns_to_read``).
Once read they go; clearing the thread drops them; a dry run leaves them. The background
extraction (``curator.background``) reads due threads through the curator with the seed's
pacing, one at a time, in a free extraction place, never a thread another process claimed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.data import make_settings
from webapp.curator import Curator
from webapp.curator.background import BackgroundExtraction
from webapp.extraction.batch import ExtractionBatch, job_document
from webapp.extraction.state import ExtractionState
from webapp.extraction.waiting import waiting
from webapp.settings import Settings
from webapp.stores import Changed, ConversationStore
from webapp.stores.timefmt import to_iso

FACT_SAID = "I'm allergic to penicillin."
FACT = "Is allergic to penicillin"
LAST_SAID = "My favourite colour is green."
LAST_FACT = "Favourite colour is green"
THREAD = "cli:host"


def filler(i: int) -> str:
    return f"What's the weather like on day {i}?"


def host_adds(conversations: ConversationStore, exchanges: int = 13, thread: str = THREAD):
    """A host's thread: the fact in the first exchange, small talk after it."""
    conversations.add_exchange(thread, FACT_SAID, "Noted, I'll keep that in mind.")
    for i in range(1, exchanges):
        conversations.add_exchange(thread, filler(i), "Sunny, 21 degrees.")


def pending(curator: Curator) -> list[str]:
    return [item.content for item in curator.review.pending()]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)  # the default caps: 20 turns, 8,000 characters


def test_a_library_only_host_loses_no_turn_to_the_cap(settings):
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations)  # 26 turns, the cap is 20

    window = conversations.get_history(THREAD)
    assert len(window) == 20 and FACT_SAID not in [t.content for t in window]  # as before
    read = [t.content for t in conversations.turns_to_read(THREAD)]
    assert len(read) == 26 and read[0] == FACT_SAID and read[2] == filler(1)
    assert read[6:] == [t.content for t in window]
    (summary,) = conversations.list_conversations()
    assert summary.trimmed == 6 and summary.kept_aside == 6 and summary.turn_count == 20

    found = waiting(settings)
    assert found.unread_turns == 26 and found.kept_aside == 6 and found.due == (THREAD,)
    assert found.last_run is None

    # The extraction a host or the server runs (due, new messages only) reads the kept turns.
    curator = Curator.from_settings(settings, actor="host")
    (result,) = curator.extract(THREAD, force=False)
    assert result.ran and result.new_messages == 26
    assert FACT in pending(curator)
    # Read: what was kept aside goes; the window is as it was.
    assert [t.content for t in conversations.turns_to_read(THREAD)] == [t.content for t in window]
    after = waiting(settings)
    assert after.threads == () and after.last_run is not None


def test_the_characters_cap_keeps_unread_turns_too(tmp_path):
    settings = make_settings(tmp_path, conversation_max_chars=120)
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations, exchanges=4)
    assert FACT_SAID not in [t.content for t in conversations.get_history(THREAD)]
    assert conversations.turns_to_read(THREAD)[0].content == FACT_SAID
    curator = Curator.from_settings(settings)
    curator.extract(THREAD, force=False)
    assert FACT in pending(curator)


def test_turns_extraction_has_read_are_trimmed_as_before(settings):
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations, exchanges=2)  # 4 messages: due
    curator = Curator.from_settings(settings)
    (result,) = curator.extract(THREAD, force=False)
    assert result.ran and FACT in pending(curator)
    for i in range(2, 13):
        conversations.add_exchange(THREAD, filler(i), "Sunny.")
    conversations.add_exchange(THREAD, LAST_SAID, "Lovely.")
    # 28 turns: the 8 trimmed are the 4 read ones (gone) and 4 unread (kept aside)
    read = [t.content for t in conversations.turns_to_read(THREAD)]
    assert len(read) == 24 and FACT_SAID not in read and read[0] == filler(2)
    assert waiting(settings).threads[0].kept_aside == 4
    # Not due again within 60 s of the last run (the seed's pacing); due with all_threads.
    (again,) = curator.extract(THREAD, force=False)
    assert not again.ran and "not due" in again.reason
    (again,) = curator.extract(all_threads=True)
    assert again.ran and again.new_messages == 24 and LAST_FACT in pending(curator)
    assert len(conversations.turns_to_read(THREAD)) == 20


def test_a_dry_run_reads_the_kept_turns_and_lets_none_go(settings):
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations)
    curator = Curator.from_settings(settings)
    (result,) = curator.extract(THREAD, dry_run=True)
    assert [i.content for i in result.queued] == [FACT] and pending(curator) == []
    assert len(conversations.turns_to_read(THREAD)) == 26


def test_messages_added_while_extraction_reads_stay_unread(settings):
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations)
    read = conversations.turns_to_read(THREAD)
    host_adds(conversations, exchanges=3)  # said after the run read the thread
    conversations.mark_read(THREAD, read[-1].timestamp)
    left = [t.content for t in conversations.turns_to_read(THREAD)]
    assert left.count(FACT_SAID) == 1 and len(left) == 20  # the newer fact, in the window


def test_clearing_a_thread_drops_what_was_kept_aside(settings):
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations)
    assert b"penicillin" in settings.conversation_file.read_bytes()
    assert conversations.clear(THREAD)
    assert conversations.turns_to_read(THREAD) == []
    assert b"penicillin" not in settings.conversation_file.read_bytes()


def test_a_damaged_kept_aside_list_is_reported_not_read(settings):
    conversations = ConversationStore.from_settings(settings).init()
    host_adds(conversations)
    data = json.loads(settings.conversation_file.read_text("utf-8"))
    data[THREAD]["keptAside"] = "not a list"
    settings.conversation_file.write_text(json.dumps(data), "utf-8")
    assert ConversationStore.from_settings(settings).status() == "corrupt"


HOST = """
import sys
from webapp.settings import Settings
from webapp.stores import Changed, ConversationStore
from webapp.stores.timefmt import to_iso
conversations = ConversationStore.from_settings(Settings.from_env())
conversations.add_exchange("cli:host", "I'm allergic to penicillin.", "Noted.")
for i in range(1, 13):
    conversations.add_exchange("cli:host", f"What's the weather like on day {i}?", "Sunny.")
"""


def test_a_host_process_keeps_the_turns_and_a_later_extract_reads_them(tmp_path):
    """Two real processes: a host program that only uses the library, then `extract`."""
    data = tmp_path / "data"
    env = {"PATH": "/usr/bin:/bin", "MEMORY_DATA_DIR": str(data), "HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-c", HOST], env=env, check=True, timeout=120)
    out = subprocess.run(
        [sys.executable, "-m", "webapp", "stats"], env=env, capture_output=True, text=True
    ).stdout
    assert "Extraction:    last ran never" in out, out
    assert "26 unread messages in 1 thread, 1 thread due now" in out, out
    assert "6 messages trimmed from the threads, kept until extraction reads them" in out, out
    done = subprocess.run(
        [sys.executable, "-m", "webapp", "extract"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    review = json.loads((data / "review.json").read_text("utf-8"))
    assert FACT in [item["content"] for item in review]
    out = subprocess.run(
        [sys.executable, "-m", "webapp", "stats"], env=env, capture_output=True, text=True
    ).stdout
    assert "nothing waits: every message has been read" in out, out


# ----------------------------------------------------------------- claims across processes
def test_a_claim_is_exclusive_until_released_or_stale(settings):
    clock = [1_000_000.0]
    state = ExtractionState(settings.review_file.with_name("extraction-state.json"))
    other = ExtractionState(state.path, clock=lambda: clock[0])
    token = state.claim(THREAD, stale_after=60)
    assert token is not None
    clock[0] = datetime.now(UTC).timestamp() + 30
    assert other.claim(THREAD, stale_after=60) is None  # another process holds it
    other.release(THREAD, "not-its-token")
    assert other.claim(THREAD, stale_after=60) is None
    clock[0] += 31  # its process died: the claim is taken over
    taken = other.claim(THREAD, stale_after=60)
    assert taken is not None
    state.release(THREAD, token)  # the dead process's late release leaves the new claim
    assert state.claim(THREAD, stale_after=60) is None
    other.release(THREAD, taken)
    assert THREAD not in state.read()  # a thread never extracted leaves nothing behind


def test_the_background_reads_a_due_thread_through_the_curator(settings):
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    background = BackgroundExtraction(curator, slots=threading.BoundedSemaphore(2))
    (result,) = background.run_once()
    assert result.ran and FACT in pending(curator)
    assert background.run_once() == []  # nothing new
    item = curator.review.pending()[0]
    assert item.conversation_id == THREAD
    assert "claim" not in json.dumps(ExtractionState.from_settings(settings).read())


def test_the_background_applies_in_auto_mode(tmp_path):
    settings = make_settings(tmp_path, review_mode="auto")
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    BackgroundExtraction(curator).run_once()
    assert FACT in [m.content for m in curator.memories.get_all()]


def test_the_background_leaves_a_thread_that_is_not_due(settings):
    conversations = ConversationStore.from_settings(settings)
    conversations.add_exchange(THREAD, FACT_SAID, "Noted.")  # 2 new messages: not due
    curator = Curator.from_settings(settings)
    assert BackgroundExtraction(curator).run_once() == []
    assert pending(curator) == []


def test_the_background_never_reads_a_thread_another_process_claimed(settings):
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    other = ExtractionState.from_settings(settings)
    token = other.claim(THREAD, stale_after=600)
    assert token is not None
    assert BackgroundExtraction(curator).run_once() == []
    assert pending(curator) == []
    other.release(THREAD, token)
    assert len(BackgroundExtraction(curator).run_once()) == 1


def test_the_background_leaves_a_thread_to_a_running_extract_all(settings):
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    batch = ExtractionBatch(settings, caller=None)
    batch.start()
    job = job_document(settings)
    assert job.read()["status"] == "running"
    claim = batch._claim()  # a step of the batch is reading the thread
    assert claim == THREAD
    assert BackgroundExtraction(curator).run_once() == []


def test_the_background_waits_for_a_free_extraction_place(settings):
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    slots = threading.BoundedSemaphore(2)
    slots.acquire()
    slots.acquire()  # two extractions under way on the dashboard
    background = BackgroundExtraction(curator, slots=slots)
    assert background.run_once() == []
    slots.release()
    assert len(background.run_once()) == 1


def test_the_background_stops_when_asked(settings):
    host_adds(ConversationStore.from_settings(settings))
    curator = Curator.from_settings(settings)
    background = BackgroundExtraction(curator, every=0.05).start()
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    while FACT not in pending(curator) and datetime.now(UTC) < deadline:
        threading.Event().wait(0.05)
    assert FACT in pending(curator)
    assert background.stop(timeout=10)
    host_adds(ConversationStore.from_settings(settings), thread="cli:later")
    threading.Event().wait(0.3)
    assert [i.conversation_id for i in curator.review.pending()] == [THREAD]


def test_the_pacing_is_the_seeds(settings):
    """4 new messages and 60 s since the thread's last extraction (ExtractionState)."""
    conversations = ConversationStore.from_settings(settings)
    host_adds(conversations, exchanges=2)
    curator = Curator.from_settings(settings)
    background = BackgroundExtraction(curator)
    assert len(background.run_once()) == 1
    conversations.add_exchange(THREAD, LAST_SAID, "Lovely.")
    assert background.run_once() == []  # 2 new messages
    conversations.add_exchange(THREAD, filler(5), "Sunny.")
    assert background.run_once() == []  # 4 new messages, but within 60 s
    assert waiting(settings).threads[0].unread == 4

    def a_minute_ago(data: dict) -> Changed[None]:
        data[THREAD]["extractedAt"] = to_iso(datetime.now(UTC) - timedelta(seconds=61))
        return Changed(None)

    ExtractionState.from_settings(settings).update(a_minute_ago)
    assert waiting(settings).due == (THREAD,)
    (result,) = background.run_once()
    assert result.ran and result.new_messages == 4 and LAST_FACT in pending(curator)


# ----------------------------------------------------------------- forgotten is gone
def test_delete_forever_masks_the_words_in_the_turns_kept_aside(tmp_path):
    """Issue 35's forgotten-is-gone, for what the trim keeps: a fact deleted forever leaves no
    file under the data folder holding its words (read as bytes), kept-aside turns included."""
    from tests.support.forgetting import EN_SAID, EN_WORDS, files_holding

    settings = make_settings(tmp_path, review_mode="auto")
    conversations = ConversationStore.from_settings(settings)
    conversations.add_exchange("cli:first", EN_SAID, "Noted.")
    conversations.add_exchange("cli:first", filler(1), "Sunny.")
    curator = Curator.from_settings(settings)
    curator.extract("cli:first")
    (memory,) = curator.memories.get_all()
    # said again in another thread, trimmed from its window before any extraction read it
    conversations.add_exchange("cli:again", f"As I said, {EN_SAID}", "Yes.")
    for i in range(1, 13):
        conversations.add_exchange("cli:again", filler(i), "Sunny.")
    assert conversations.list_conversations()[0].kept_aside == 6
    assert files_holding(settings.data_dir, EN_WORDS)

    run_cli("delete", memory.id, "--forever", data_dir=settings.data_dir, ok=True)

    assert files_holding(settings.data_dir, EN_WORDS) == []
    kept = conversations.turns_to_read("cli:again")
    assert len(kept) == 26 and "[words deleted forever]" in kept[0].content
