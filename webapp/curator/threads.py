"""Forget what a conversation gave, and undo that: the stores' part (``stores.forget_conversation``,
``stores.undo_forget``) and the decisions it takes back or makes again, through the curator's one
undo and one approve (``reviewing``), so a deletion brought back is no longer remembered as
forgotten and one approved again is, and nothing is approved past the tombstone or the secrets
check."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from ..extraction.run import ExtractionResult, extract_conversation, extract_due
from ..stores import (
    Forgotten,
    MemoryFullError,
    NotFoundError,
    derived_from,
    forget_conversation,
    undo_forget,
)
from ..stores.conversations import Stored
from .forgetting import Forgetting
from .people import EVERYONE, check_person, check_thread, ref_in_view
from .reviewing import Reviewing, refuse_forgotten


class Threads(Reviewing, Forgetting):
    """Conversations: extracting facts from them, forgetting what one gave, clearing one."""

    def forget_conversation(
        self,
        conversation_id: str,
        *,
        seen: Mapping[str, str] | None = None,
        actor: str | None = None,
    ) -> Forgotten:
        """Take back what a conversation added or changed, only as the person saw it
        (``stores.forget_conversation``), and what its approved deletions took: each decision
        undone (``Reviewing.undo_decision``: the memory back, its tombstone lifted), then rejected.
        Another person's thread is unknown, and so, within a view, is one that left anything
        outside it (``conversation_not_found``)."""
        self.check_thread(conversation_id)
        who = actor or self.actor
        deleted = derived_from(self._review_queue, conversation_id).deleted
        done = forget_conversation(self._review_queue, conversation_id, actor=who, seen=seen)
        undeleted = []
        for gone in deleted:
            try:
                self.undo_decision(gone.item_id, actor=who)
                self._review_queue.reject(gone.item_id, actor=who)
            except (NotFoundError, MemoryFullError):
                continue  # pruned or deleted forever meanwhile, or no room: it stays deleted
            undeleted.append(gone.item_id)
        return replace(done, undeleted_ids=undeleted)

    def undo_forget_conversation(
        self,
        *,
        memory_ids: Iterable[str],
        rejected_ids: Iterable[str],
        reverted_hids: Iterable[str] = (),
        undeleted_ids: Iterable[str] = (),
        actor: str | None = None,
    ) -> tuple[int, int]:
        """Undo ``forget_conversation``, of the memories and proposals this curator's view may see:
        the stores' part (``stores.undo_forget``), and the conversation's deletions approved
        again through the curator's approve (``Reviewing.approve``: remembered as forgotten,
        refused when the fact was deleted forever meanwhile). (memories restored, proposals
        pending again)."""
        who = actor or self.actor
        queue = self._review_queue
        if self.view is not EVERYONE:
            memory_ids = [i for i in memory_ids if ref_in_view(self, i)]
            undeleted_ids = [i for i in undeleted_ids if self.sees_item(queue.get(i))]
            reverted_hids = [h for h in reverted_hids if ref_in_view(self, h)]
            rejected_ids = [i for i in rejected_ids if self.sees_item(queue.get(i))]
        restored, reopened = undo_forget(queue, memory_ids, rejected_ids, reverted_hids, actor=who)
        for item_id in undeleted_ids:
            item = queue.get(item_id)
            if item is None or item.status != "rejected" or item.action != "delete":
                continue
            try:
                refuse_forgotten(self, item)
            except NotFoundError:
                continue  # deleted forever meanwhile: it stays rejected
            queue.undo(item_id, actor=who)  # a rejection: the record only
            if self.approve(item_id, actor=who).applied_action == "delete":
                restored += 1
        return restored, reopened

    def extract(
        self,
        conversation_id: str | None = None,
        *,
        all_threads: bool = False,
        dry_run: bool = False,
        actor: str | None = None,
        force: bool = True,
    ) -> list[ExtractionResult]:
        """Extract facts from one conversation (every message of it; without ``force``, only
        its new messages and only when due) or from every thread that is due (``all_threads``:
        that has any new message), queued or applied by the review mode. First, a memory a
        host program deleted without a tombstone gets one, so its fact is not proposed again
        as new. ``dry_run`` decides everything and saves nothing."""
        who = actor or self.actor
        if conversation_id is not None:
            check_thread(self, conversation_id)
        elif self.view is not EVERYONE:  # a person's: their threads' new messages, one by one
            threads = [
                s.id
                for s in self._conversation_store.list_conversations()
                if self.sees_thread(s.speakers)
            ]
            return [
                found
                for thread in threads
                for found in self.extract(thread, dry_run=dry_run, actor=actor, force=False)
            ]
        if not dry_run:
            self.settle_deletions()
        mine = (
            self._memory_store,
            self._conversation_store,
            self._review_queue,
        )  # their caches are warm
        if conversation_id is not None:
            return [
                extract_conversation(
                    self.settings,
                    conversation_id,
                    force=force,
                    dry_run=dry_run,
                    actor=who,
                    stores=mine,
                )
            ]
        return extract_due(
            self.settings, all_threads=all_threads, dry_run=dry_run, actor=who, stores=mine
        )

    def clear_conversation(self, conversation_id: str) -> bool:
        """Delete a thread's messages (the memories it gave stay); False when it had none;
        another person's thread is unknown (``conversation_not_found``)."""
        check_thread(self, conversation_id)
        return self._conversation_store.clear(conversation_id)

    def keep_exchange(
        self,
        *,
        conversation_id: str,
        said: str,
        reply: str,
        person: str | None = None,
    ) -> Stored:
        """Keep what was said and the assistant's reply at the end of the thread
        ``conversation_id``, stamped now, as said by ``person`` (None: nobody known), for
        extraction to read (``ConversationStore.add_exchange``). Another person's thread is
        unknown (``conversation_not_found``), and nothing is kept as said by a person outside
        the curator's view (``person_unknown``)."""
        check_person(person, self.view)
        check_thread(self, conversation_id)
        return self._conversation_store.add_exchange(conversation_id, said, reply, person=person)
