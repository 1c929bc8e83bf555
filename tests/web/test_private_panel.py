"""Private in the panel too: two Home Assistant users behind ingress (Flask's test client, the
trusted proxy's address and headers). Ben sees, searches, changes and previews his own data and
the household's; Ana's private memory, thread and proposals are not listed, counted by name,
offered as "most similar", reachable by URL (404, as for nothing) or changeable by a crafted
request. The Supervisor that says who is an administrator is a real HTTP server on 127.0.0.1
speaking its documented wire format."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support.web import CsrfClient
from webapp import create_app
from webapp.curator import Curator
from webapp.settings import Settings
from webapp.stores import ConversationStore, Memory, Proposal, ReviewItem

HA = "172.30.32.2"  # the default trusted proxy
ANA = {
    "X-Remote-User-Id": "u-ana",
    "X-Remote-User-Name": "ana",
    "X-Remote-User-Display-Name": "Ana",
}
BEN = {
    "X-Remote-User-Id": "u-ben",
    "X-Remote-User-Name": "ben",
    "X-Remote-User-Display-Name": "Ben",
}
NEW = {
    "X-Remote-User-Id": "u-cai",
    "X-Remote-User-Name": "cai",
    "X-Remote-User-Display-Name": "Cai",
}
# Ana's private memory, her thread's message and her proposal: none may show to Ben.
ANAS = ("Is allergic to penicillin", "My doctor says", "penicillin tablets")
THREAD = "ha:ana-thread"


@dataclass
class Household:
    curator: Curator
    ana: str
    ben: str
    ana_memory: Memory
    ben_memory: Memory
    shared: Memory
    ana_item: ReviewItem
    ben_item: ReviewItem

    def memory(self, memory_id: str) -> Memory | None:
        return self.curator.memories.get(memory_id)


@pytest.fixture
def household(settings: Settings) -> Household:
    curator = Curator.from_settings(settings)
    curator.memories.init()
    ana = curator.people.add("Ana", identities=(("ha", "u-ana"),)).id
    ben = curator.people.add("Ben", identities=(("ha", "u-ben"),)).id
    ana_memory = curator.remember("Is allergic to penicillin", person=ana)
    ben_memory = curator.remember("Likes jazz records", person=ben)
    shared = curator.remember("Bins go out on Tuesday")
    ConversationStore.from_settings(settings).add_exchange(
        THREAD, "My doctor says I am allergic to penicillin", "Noted.", person=ana
    )
    ana_item, ben_item = curator.review.submit(
        [
            Proposal("add", "Takes penicillin tablets on Mondays", person=ana),
            Proposal("add", "Is allergic to peanuts", person=ben),
        ]
    )
    return Household(curator, ana, ben, ana_memory, ben_memory, shared, ana_item, ben_item)


def as_user(client: CsrfClient, method: str, url: str, user: dict[str, str], **kw: Any):
    return getattr(client, method)(url, headers=user, environ_base={"REMOTE_ADDR": HA}, **kw)


def text(response) -> str:
    return response.get_data(as_text=True)


def leaks(page: str) -> list[str]:
    """What of Ana's private data ``page`` shows."""
    return [words for words in ANAS if words in page]


# ------------------------------------------------------------------ memories
@pytest.mark.parametrize(
    "url",
    [
        "/memories/",
        "/memories/?q=penicillin",
        "/memories/?q=allergic",
        "/memories/?whose={ana}",
        "/memories/whose-options",
        "/memories/summary",
        "/memories/meter",
        "/people/",
    ],
)
def test_lists_searches_and_counts_show_nothing_of_anothers(client, household, url):
    page = text(as_user(client, "get", url.format(ana=household.ana), BEN))
    assert not leaks(page)
    assert "Ana (1)" not in page and "Ana 1" not in page  # not counted by name


def test_the_memories_page_shows_ones_own_and_the_households(client, household):
    page = text(as_user(client, "get", "/memories/", BEN))
    assert "Likes jazz records" in page and "Bins go out on Tuesday" in page
    assert leaks(text(as_user(client, "get", "/memories/", ANA)))


@pytest.mark.parametrize(
    "url", ["/memories/{id}/edit", "/memories/{id}/row", "/memories/{id}/history"]
)
def test_anothers_memory_is_not_found_by_url(client, household, url):
    answer = as_user(client, "get", url.format(id=household.ana_memory.id), BEN)
    assert answer.status_code == 404 and not leaks(text(answer))
    assert as_user(client, "get", url.format(id=household.ben_memory.id), BEN).status_code != 404


def test_crafted_edit_delete_and_merge_change_nothing_of_anothers(client, household):
    ana_id, version = household.ana_memory.id, household.ana_memory.version
    edit = as_user(
        client,
        "post",
        f"/memories/{ana_id}",
        BEN,
        data={"content": "Is not allergic", "category": "fact", "expected_updated_at": version},
    )
    assert edit.status_code == 404
    assert as_user(client, "post", f"/memories/{ana_id}/delete", BEN).status_code == 404
    as_user(client, "post", "/memories/delete-many", BEN, data={"ids": [ana_id]})
    as_user(
        client,
        "post",
        "/attention/merge",
        BEN,
        data={
            "keep": household.ben_memory.id,
            "drop": ana_id,
            "content": "Likes jazz records",
            f"version-{ana_id}": version,
            f"version-{household.ben_memory.id}": household.ben_memory.version,
        },
    )
    as_user(
        client,
        "post",
        "/attention/household",
        BEN,
        data={
            "id": [household.shared.id, ana_id],
            f"version-{ana_id}": version,
            f"version-{household.shared.id}": household.shared.version,
        },
    )
    as_user(client, "post", "/attention/delete", BEN, data={"id": ana_id})
    assert household.memory(ana_id) == household.ana_memory


def test_anothers_deleted_memory_is_not_listed_restored_or_purged(client, household):
    ana_id = household.ana_memory.id
    household.curator.forget(ana_id)
    assert not leaks(text(as_user(client, "get", "/memories/deleted", BEN)))
    assert leaks(text(as_user(client, "get", "/memories/deleted", ANA)))
    restore = as_user(client, "post", "/memories/restore", BEN, data={"ref": ana_id})
    assert restore.status_code == 404
    as_user(client, "post", "/memories/deleted/restore", BEN, data={"id": ana_id})
    as_user(client, "post", "/attention/undelete", BEN, data={"id": ana_id})
    assert household.memory(ana_id) is None
    purge = as_user(client, "post", "/memories/deleted/purge", BEN, data={"id": ana_id})
    assert purge.status_code == 404
    assert household.curator.memories.deleted(ana_id) is not None  # still restorable by Ana
    assert as_user(client, "post", "/memories/restore", ANA, data={"ref": ana_id}).status_code in (
        200,
        303,
    )
    assert household.memory(ana_id) is not None


def test_nobody_adds_as_someone_else(client, household):
    answer = as_user(
        client, "post", "/memories/", BEN, data={"content": "Hates cats", "person": household.ana}
    )
    assert answer.status_code == 422
    assert not [m for m in household.curator.memories.get_all() if m.content == "Hates cats"]
    mine = as_user(client, "post", "/memories/", BEN, data={"content": "Hates cats"})
    assert mine.status_code in (200, 303)
    (added,) = [m for m in household.curator.memories.get_all() if m.content == "Hates cats"]
    assert added.person == household.ben


def test_exports_hold_only_ones_own_and_the_households(client, household):
    for url in ("/memories/export", "/memories/bring/export?format=json"):
        body = text(as_user(client, "get", url, BEN))
        assert "Likes jazz records" in body and not leaks(body)
    for fmt in ("markdown", "mem0", "csv"):
        assert not leaks(text(as_user(client, "get", f"/memories/bring/export?format={fmt}", BEN)))


def test_an_own_export_cannot_change_anothers_memory(client, household):
    record = dict(household.ana_memory.to_dict(), content="Is not allergic to anything")
    payload = json.dumps([record])
    preview = as_user(client, "post", "/memories/import", BEN, data={"payload": payload})
    confirm = as_user(client, "post", "/memories/import/confirm", BEN, data={"payload": payload})
    assert preview.status_code == 422 and confirm.status_code == 422
    assert household.memory(household.ana_memory.id) == household.ana_memory


def test_another_systems_import_as_another_owner_is_refused(client, household):
    before = len(household.curator.review.pending())
    form = {"pasted": "Is allergic to penicillin\n", "format": "text", "owner": household.ana}
    preview = as_user(client, "post", "/memories/bring/preview", BEN, data=form)
    confirm = as_user(client, "post", "/memories/bring/confirm", BEN, data=form)
    assert preview.status_code == 422 and confirm.status_code == 422
    assert "Is allergic to penicillin" not in text(preview).replace(
        "Is allergic to penicillin\n", ""
    )
    assert len(household.curator.review.pending()) == before
    mine = dict(form, owner=household.ben)  # as his own, it is previewed
    assert as_user(client, "post", "/memories/bring/preview", BEN, data=mine).status_code == 200


# ------------------------------------------------------------------ conversations
def test_anothers_thread_is_not_listed_opened_cleared_forgotten_or_extracted(client, household):
    assert THREAD not in text(as_user(client, "get", "/conversations/", BEN))
    assert not leaks(text(as_user(client, "get", "/conversations/?q=penicillin", BEN)))
    for url in (f"/conversations/thread/{THREAD}", f"/conversations/forget/{THREAD}"):
        answer = as_user(client, "get", url, BEN)
        assert answer.status_code == 404 and not leaks(text(answer))
    assert as_user(client, "post", f"/conversations/clear/{THREAD}", BEN).status_code == 404
    assert as_user(client, "post", f"/conversations/forget/{THREAD}", BEN).status_code == 404
    as_user(client, "post", f"/conversations/extract/{THREAD}", BEN)
    assert household.curator.conversations.get_history(THREAD)  # still there
    assert len(household.curator.review.pending()) == 2  # nothing extracted from it
    assert as_user(client, "get", f"/conversations/thread/{THREAD}", ANA).status_code == 200


# ------------------------------------------------------------------ prompt
@pytest.mark.parametrize("person", ["{ana}", "everyone", ""])
def test_the_prompt_preview_never_shows_anothers_memory(client, household, person):
    values = {"person": person.format(ana=household.ana), "message": "hello"}
    page = text(as_user(client, "get", "/prompt/", BEN, query_string=values))
    assert not leaks(page)
    page = text(as_user(client, "get", "/prompt/", BEN, query_string={"conversation": THREAD}))
    assert not leaks(page)
    assert 'value="everyone"' not in page  # "Everyone (every memory)" is not offered


# ------------------------------------------------------------------ review
def test_review_lists_and_compares_within_ones_own_view(client, household):
    page = text(as_user(client, "get", "/review/", BEN))
    assert "Is allergic to peanuts" in page  # Ben's proposal, with its most similar
    assert not leaks(page)  # neither Ana's proposal nor her memory as "most similar"
    household.curator.reject(household.ana_item.id)
    assert not leaks(text(as_user(client, "get", "/review/?tab=decided", BEN)))
    assert leaks(text(as_user(client, "get", "/review/?tab=decided", ANA)))


def test_an_administrators_review_compares_each_proposal_within_its_owners_view(
    household, settings, supervisor
):
    supervisor.admins = ("ben",)
    url = supervisor.url  # type: ignore[attr-defined]
    admin = CsrfClient(
        create_app(replace(settings, supervisor_url=url, admins_see_all=True)).test_client()
    )
    page = text(as_user(admin, "get", "/review/", BEN))
    assert "Takes penicillin tablets on Mondays" in page  # an administrator sees Ana's too
    card = page[page.index("Is allergic to peanuts") :]
    card = card[: card.index("</article>")]
    assert "Is allergic to penicillin" not in card  # Ben's proposal is not compared with hers


def test_crafted_review_decisions_change_nothing_of_anothers(client, household):
    item = household.ana_item.id
    for url in (f"/review/{item}", f"/review/{item}/edit"):
        assert as_user(client, "get", url, BEN).status_code == 404
    for url in (f"/review/{item}/approve", f"/review/{item}/reject"):
        assert as_user(client, "post", url, BEN, data={}).status_code == 404
    as_user(client, "post", "/review/bulk", BEN, data={"ids": [item], "action": "approve"})
    assert household.curator.review.get(item).status == "pending"
    as_user(
        client,
        "post",
        f"/review/{household.ben_item.id}/approve",
        BEN,
        data={"person": household.ana},
    )
    assert household.curator.review.get(household.ben_item.id).status == "pending"
    assert not [m for m in household.curator.memories.get_all() if "peanuts" in m.content]


# ------------------------------------------------------------------ needs attention
def test_needs_attention_shows_no_finding_about_anothers_memory(client, household):
    # A first-person sentence is hard for an assistant to use: a finding, in Ana's view only.
    household.curator.remember(
        "I am allergic to penicillin tablets", person=household.ana, allow_similar=True
    )
    seen_by_ana = ""
    for _ in range(40):  # the background scan finishes within a few seconds
        seen_by_ana = text(as_user(client, "get", "/attention/?kind=hard", ANA))
        if "penicillin tablets" in seen_by_ana:
            break
    assert leaks(seen_by_ana)  # the finding exists, in Ana's view
    for kind in ("duplicate", "contradiction", "stale", "hard", "secret", "expired"):
        assert not leaks(text(as_user(client, "get", f"/attention/?kind={kind}", BEN)))


# ------------------------------------------------------------------ people
def test_nobody_links_renames_or_removes_someone_else(client, household):
    people = household.curator.people
    as_user(
        client,
        "post",
        "/people/link",
        BEN,
        data={"person": household.ben, "kind": "ha", "value": "u-ana"},
    )
    as_user(
        client,
        "post",
        "/people/link",
        BEN,
        data={"person": household.ana, "kind": "name", "value": "x"},
    )
    as_user(client, "post", f"/people/{household.ana}/rename", BEN, data={"name": "Mallory"})
    as_user(
        client,
        "post",
        f"/people/{household.ana}/unlink",
        BEN,
        data={"kind": "ha", "value": "u-ana"},
    )
    assert people.get(household.ana).name == "Ana"
    assert people.resolve("ha", "u-ana").id == household.ana
    assert [i.value for i in people.get(household.ana).identities] == ["u-ana"]
    # Someone new cannot claim a person who owns private data: they would see it.
    ana_without_ha = people.unlink(household.ana, "ha", "u-ana")
    as_user(client, "get", "/memories/", NEW)
    as_user(client, "post", "/people/me/link", NEW, data={"person": ana_without_ha.id})
    assert people.resolve("ha", "u-cai") is None
    assert not leaks(text(as_user(client, "get", "/memories/", NEW)))


def test_a_user_linked_to_nobody_sees_the_households_alone(client, household):
    page = text(as_user(client, "get", "/memories/", NEW))
    assert "Bins go out on Tuesday" in page
    assert not leaks(page) and "Likes jazz records" not in page


def test_standalone_the_dashboard_is_the_households_curator_view(client, household):
    page = text(client.get("/memories/"))
    assert leaks(page) and "Likes jazz records" in page


# ------------------------------------------------------------------ administrators
class FakeSupervisor(BaseHTTPRequestHandler):
    """``GET /auth/list`` as the Supervisor answers it (supervisor/api/auth.py)."""

    token = "supervisor-token"
    admins: tuple[str, ...] = ()

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        if self.path != "/auth/list" or self.headers.get("Authorization") != f"Bearer {self.token}":
            self.send_response(401)
            self.end_headers()
            return
        users = [
            {
                "username": name,
                "name": name.title(),
                "is_owner": False,
                "is_active": True,
                "local_only": False,
                "group_ids": ["system-admin"] if name in self.admins else ["system-users"],
            }
            for name in ("ana", "ben", "cai")
        ]
        body = json.dumps({"result": "ok", "data": {"users": users}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def supervisor(monkeypatch) -> Iterator[type[FakeSupervisor]]:
    handler = type("Supervisor", (FakeSupervisor,), {"admins": ()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("SUPERVISOR_TOKEN", FakeSupervisor.token)
    handler.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    yield handler
    server.shutdown()
    server.server_close()


def test_an_administrator_sees_everyones_only_with_the_option(settings, household, supervisor):
    supervisor.admins = ("ben",)
    url = supervisor.url  # type: ignore[attr-defined]
    off = CsrfClient(create_app(replace(settings, supervisor_url=url)).test_client())
    assert not leaks(text(as_user(off, "get", "/memories/", BEN)))
    on = CsrfClient(
        create_app(replace(settings, supervisor_url=url, admins_see_all=True)).test_client()
    )
    page = text(as_user(on, "get", "/memories/", BEN))
    assert leaks(page) and "data-seeing-all" in page  # and the page says whose it shows
    ana_page = text(as_user(on, "get", "/memories/", ANA))  # not an administrator
    assert "Likes jazz records" not in ana_page and "data-seeing-all" not in ana_page


def test_an_unanswering_supervisor_makes_nobody_an_administrator(
    settings, household, supervisor, monkeypatch
):
    supervisor.admins = ("ben",)
    monkeypatch.setenv("SUPERVISOR_TOKEN", "a-token-the-supervisor-refuses")  # 401
    url = supervisor.url  # type: ignore[attr-defined]
    on = CsrfClient(
        create_app(replace(settings, supervisor_url=url, admins_see_all=True)).test_client()
    )
    page = text(as_user(on, "get", "/memories/", BEN))
    assert not leaks(page) and "data-seeing-all" not in page


def test_a_memory_moved_to_the_household_shows_no_earlier_private_words(client, household):
    # Found in review (issue 42): the history page of a memory one person's copy became the
    # household's listed that person's earlier private wording to everyone.
    curator = household.curator
    hers = curator.remember("Takes a pill for migraines at night", person=household.ana)
    hers = curator.revise(hers.id, content="Bins go out on Wednesday nights").after
    his = curator.remember("Bins go out on Wednesday nights", person=household.ben)
    moved = curator.move_to_household(
        [hers.id, his.id], expected={hers.id: hers.version, his.id: his.version}
    )
    assert moved.person is None
    page = as_user(client, "get", f"/memories/{moved.id}/history", BEN)
    assert page.status_code == 200 and "Bins go out on Wednesday nights" in text(page)
    assert "migraines" not in text(page)
    # Ana, whose words they were, still sees them
    assert "migraines" in text(as_user(client, "get", f"/memories/{moved.id}/history", ANA))


def test_a_crafted_key_dismisses_none_of_anothers_findings(client, household, settings):
    # Found in review (issue 42): /attention/dismiss took any key, so Ben could hide (or bring
    # back) a finding over Ana's private memories by naming it.
    from webapp.attention.findings import finding_key

    curator = household.curator
    other = curator.remember("Takes penicillin for ear infections", person=household.ana)
    key = finding_key("duplicate", [household.ana_memory, other])
    dismissed = settings.memory_file.with_name("attention-dismissed.json")
    for action in ("dismiss", "undismiss"):
        answer = as_user(client, "post", f"/attention/{action}", BEN, data={"key": key})
        assert answer.status_code == 422 and not leaks(text(answer))
    assert not dismissed.exists() or key not in json.loads(dismissed.read_text("utf-8"))
    # Ana may dismiss her own finding; a key over memories as they no longer are is refused
    mine = as_user(client, "post", "/attention/dismiss", ANA, data={"key": key})
    assert mine.status_code in (200, 303)
    assert key in json.loads(dismissed.read_text("utf-8"))
    stale = finding_key("duplicate", [household.ana_memory, household.ben_memory])
    assert (
        as_user(client, "post", "/attention/dismiss", ANA, data={"key": stale}).status_code == 422
    )
