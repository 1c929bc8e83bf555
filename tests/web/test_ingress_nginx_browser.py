"""Home Assistant ingress, simulated for real: Debian's nginx in front of the app strips
``/api/hassio_ingress/TESTTOKEN`` and adds the headers Home Assistant adds; a real Chromium
opens the "Home Assistant" page that embeds the panel in an iframe and uses every page.
Every request the browser made, and every request nginx saw, must stay under the prefix."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.support.mcp_http import free_port
from tests.support.web import assert_accessible, screenshot
from webapp.settings import Settings
from webapp.stores import ConversationStore, MemoryStore, PeopleStore, ReviewQueue
from webapp.stores.review import Proposal

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
TOKEN = "TESTTOKEN"
PREFIX = f"/api/hassio_ingress/{TOKEN}"
USER_NAME = "Zoë Lovelace"  # non-ASCII: HA sends UTF-8 header bytes


def image_start_command() -> list[str]:
    """The add-on image's CMD, exactly as the Dockerfile says it (exec form)."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text(encoding="utf-8"))
    match = re.search(r"^CMD\s+(\[.*\])\s*$", text, re.M)
    assert match, "the Dockerfile has an exec-form CMD"
    return json.loads(match.group(1))


@dataclass
class Ingress:
    """nginx on 127.0.0.1 (the Home Assistant front end) and the add-on process behind it."""

    url: str
    data_dir: Path
    access_log: Path
    settings: Settings

    def nginx_paths(self) -> list[str]:
        """Every request path nginx logged."""
        paths = []
        for line in self.access_log.read_text(encoding="utf-8").splitlines():
            match = re.search(r'"[A-Z]+ (\S+)"', line)
            assert match, f"unexpected access log line: {line}"
            paths.append(match.group(1))
        return paths

    def memories(self) -> MemoryStore:
        return MemoryStore(self.settings.memory_file, lock_timeout=5)


def wait_for(port: int, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out = process.stdout.read().decode("utf-8", "replace") if process.stdout else ""
            raise RuntimeError(f"{what} exited early ({process.returncode}):\n{out}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start within 30 s")


def stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if process.stdout:
        process.stdout.close()


def seed(settings: Settings) -> None:
    """Memories, a conversation and pending review items, as the assistant would leave them."""
    memories = MemoryStore(settings.memory_file, actor="assistant").init()
    memories.add("Prefers tea over coffee in the morning", category="preference", source="slack")
    memories.add("Works on the garden irrigation project", category="project", source="slack")
    memories.add("Uses vim with relative line numbers", category="tool", source="cli")
    conversations = ConversationStore(settings.conversation_file).init()
    conversations.add_exchange(
        "slack:1731900000.123456",
        "Remind me what I prefer to drink?",
        "You prefer tea in the morning.",
    )
    queue = ReviewQueue(settings.review_file, memories).init()
    queue.submit(
        [
            Proposal("add", "Owns a cat named Miso", "general", confidence=0.9),
            Proposal("add", "Likes hiking on weekends", "preference", confidence=0.8),
        ],
        conversation_id="slack:1731900000.123456",
    )


@pytest.fixture(scope="module")
def ingress(tmp_path_factory) -> Iterator[Ingress]:
    root = tmp_path_factory.mktemp("ingress")
    data_dir = root / "data"
    app_port, nginx_port = free_port(), free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "CONVERSATION_", "SUPERVISOR"))
    }
    env.update(
        SUPERVISOR_TOKEN="test-supervisor-token",
        MEMORY_TRUSTED_PROXIES="127.0.0.1",
        MEMORY_DATA_DIR=str(data_dir),
    )
    settings = Settings.from_env(environ=env, options_file=root / "no-options.json")
    assert settings.is_addon and settings.data_dir == data_dir
    seed(settings)

    argv = image_start_command()
    argv[0] = str(Path(sys.executable).with_name(argv[0]))  # the console script of this venv
    # Exactly the image's arguments, but a free port (8099 may be taken on a shared machine)
    # and a temporary data folder instead of /data.
    argv[argv.index("--port") + 1] = str(app_port)
    argv += ["--data-dir", str(data_dir)]
    app = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    nginx_dir = root / "nginx"
    nginx_dir.mkdir()
    fill = {
        "@DIR@": str(nginx_dir),
        "@PORT@": str(nginx_port),
        "@APP_PORT@": str(app_port),
        "@TOKEN@": TOKEN,
        "@USER_NAME@": USER_NAME,
        "@USER@": "user root;" if os.geteuid() == 0 else "",
    }
    for name, target in (("nginx.conf.template", "nginx.conf"), ("ha.html", "ha.html")):
        text = (REPO / "tests" / "nginx" / name).read_text(encoding="utf-8")
        for key, value in fill.items():
            text = text.replace(key, value)
        (nginx_dir / target).write_text(text, encoding="utf-8")
    nginx = subprocess.Popen(
        [
            NGINX,
            "-p",
            str(nginx_dir),
            "-c",
            str(nginx_dir / "nginx.conf"),
            "-e",
            str(nginx_dir / "error.log"),
            "-g",
            "daemon off;",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(app_port, app, "the add-on")
        wait_for(nginx_port, nginx, "nginx")
        yield Ingress(
            f"http://127.0.0.1:{nginx_port}", data_dir, nginx_dir / "access.log", settings
        )
    finally:
        stop(nginx)
        stop(app)


def test_the_add_on_refuses_direct_requests(ingress):
    """Straight to the add-on's port (not through the proxy address): 403, even with forged headers."""
    import urllib.error
    import urllib.request

    app_url = None
    for line in (ingress.data_dir.parent / "nginx" / "nginx.conf").read_text().splitlines():
        if "proxy_pass" in line:
            app_url = line.split()[1].rstrip(";")
    host_ip = _non_loopback_ip()
    if host_ip is None:
        pytest.fail("this machine has no non-loopback address to test a direct request from")
    direct = app_url.replace("127.0.0.1", host_ip) + "memories/"
    request = urllib.request.Request(
        direct, headers={"X-Ingress-Path": PREFIX, "X-Remote-User-Display-Name": "Mallory"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 403
    caught.value.close()


def _non_loopback_ip() -> str | None:
    """This machine's address on its default route (the add-on listens on 0.0.0.0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
            address = sock.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_panel_in_an_iframe_uses_every_page_under_the_prefix(ingress, page):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(ingress.url + "/")
    panel = page.frame_locator("#panel")
    frame = page.frame_locator("#panel")

    # Memories: the HA user's name, add, search, edit, delete.
    frame.get_by_role("heading", name="Memories").first.wait_for()
    assert panel.get_by_text(USER_NAME).first.is_visible()
    frame.get_by_label("What should the assistant remember?").fill("Waters the tomatoes at 7")
    frame.get_by_role("button", name="Add memory").click()
    frame.locator(".memory-row", has_text="Waters the tomatoes at 7").wait_for()
    row = frame.locator(".memory-row", has_text="Waters the tomatoes at 7")
    row.get_by_role("button", name="Edit").click()
    frame.get_by_label("Memory text").fill("Waters the tomatoes at 6")
    frame.get_by_role("button", name="Save").click()
    frame.locator(".memory-row", has_text="Waters the tomatoes at 6").wait_for()
    search = frame.get_by_role("searchbox", name="Search")
    search.press_sequentially("tomatoes", delay=20)
    frame.locator("#results mark", has_text="tomatoes").wait_for()
    frame.locator(".memory-row", has_text="irrigation").wait_for(state="detached")
    search.fill("")
    search.press("Enter")
    frame.locator(".memory-row", has_text="vim").wait_for()
    page.wait_for_timeout(500)  # let the debounced search settle before acting on its rows
    frame.locator(".memory-row", has_text="vim").get_by_role("button", name="Delete").click()
    frame.locator("tr.deleted", has_text="vim").get_by_role("button", name="Undo").wait_for()
    screenshot(page, "ingress-memories")
    assert_accessible(page, "memories inside the Home Assistant iframe")

    # Conversations: the list and a thread.
    frame.get_by_role("navigation", name="Main").get_by_role("link", name="Conversations").click()
    frame.get_by_role("link", name="slack:1731900000.123456").click()
    frame.get_by_text("You prefer tea in the morning.").first.wait_for()

    # Prompt: the preview follows the typed message.
    frame.get_by_role("navigation", name="Main").get_by_role("link", name="Prompt").click()
    frame.get_by_label("Next message").press_sequentially("What do I drink?", delay=15)
    frame.locator("#prompt-text", has_text="What do I drink?").wait_for()
    assert "Waters the tomatoes at 6" in frame.locator("#prompt-text").inner_text()

    # Review: approve one pending fact.
    frame.get_by_role("navigation", name="Main").get_by_role("link", name="Review").click()
    item = frame.locator("article, li, section", has_text="Owns a cat named Miso").last
    item.get_by_role("button", name="Approve", exact=True).click()
    # The card goes; the notice above the list says what was approved (issue 12).
    frame.locator("article.review-item", has_text="Owns a cat named Miso").wait_for(
        state="detached"
    )
    frame.locator("#review-notice", has_text="Approved “Owns a cat named Miso”").wait_for()

    # Skills: the page and its Deprecated tab.
    frame.get_by_role("navigation", name="Main").get_by_role("link", name="Skills").click()
    frame.locator("#skills-panel").wait_for()
    frame.get_by_role("link", name=re.compile(r"^Deprecated")).click()
    frame.locator("#skills-panel").wait_for()
    screenshot(page, "ingress-skills")

    assert not page.watch.dialogs or all(d.startswith("confirm") for d in page.watch.dialogs)
    assert not page.watch.page_errors, page.watch.page_errors
    assert not [e for e in page.watch.console_errors if "Content Security Policy" in e]

    # Every request the browser made stayed under the prefix (or was the HA page itself).
    outside = [
        u
        for u in requests
        if urlsplit(u).path != "/"
        and not urlsplit(u).path.startswith(PREFIX + "/")
        and not u.startswith("data:")
    ]
    assert not outside, f"requests outside the ingress prefix: {outside}"
    assert len(requests) > 20, "the journey made too few requests to mean anything"
    # ... and nginx saw nothing outside it either.
    seen = ingress.nginx_paths()
    stray = [p for p in seen if p != "/" and not p.startswith(PREFIX + "/")]
    assert not stray, f"nginx saw requests outside the prefix: {stray}"
    assert sum(1 for p in seen if p.startswith(PREFIX + "/")) > 10

    # The store on disk, with the Home Assistant user as the actor in the history log.
    contents = {m.content for m in ingress.memories().get_all()}
    assert "Waters the tomatoes at 6" in contents and "Owns a cat named Miso" in contents
    assert not any("vim" in c for c in contents)
    history = ingress.memories().history()
    ours = [e for e in history if e["actor"] == USER_NAME]
    assert {e["action"] for e in ours} >= {"add", "update", "delete"}, history[-6:]


SECOND_PREFIX = f"{PREFIX}2"  # the second Home Assistant user's ingress session
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def _whose(page: str, content: str) -> str:
    """What the Whose cell of the row holding ``content`` says."""
    import html

    row = re.search(
        r'<td class="content"[^>]*>'
        + re.escape(html.escape(content))
        + r'</td>.*?class="whose"[^>]*>(.*?)</td>',
        page,
        re.S,
    )
    assert row, f"no row for {content!r}"
    return html.unescape(row.group(1).strip())


def test_two_home_assistant_users_each_see_you_on_their_own_memory(ingress):
    """Two users (two X-Remote-User-Id values from the trusted proxy) each make themselves a
    person and add a memory: theirs by default, "You" to them, not listed to the other (a
    person's private memory is theirs in the panel); a user header a client adds is
    replaced by the proxy's."""
    import httpx

    users = {
        "Zoë": (PREFIX, "Zoë practises cello on Sundays"),
        "Grace": (SECOND_PREFIX, "Grace takes oat milk"),
    }
    clients = {name: httpx.Client(base_url=ingress.url, timeout=20) for name in users}
    try:
        for name, (prefix, content) in users.items():
            client = clients[name]
            page = client.get(f"{prefix}/memories/")
            assert page.status_code == 200
            token = _CSRF.search(page.text).group(1)
            me = client.post(f"{prefix}/people/me", data={"csrf_token": token, "next": "memories"})
            assert me.status_code == 303 and me.headers["Location"].startswith(prefix + "/")
            added = client.post(
                f"{prefix}/memories/", data={"csrf_token": token, "content": content}
            )
            assert added.status_code == 303, added.text
        people = PeopleStore.from_settings(ingress.settings)
        zoe = people.resolve("ha", "8f0c2d7e4b1a4c53a1f0b5d6e7c8d9a0")
        grace = people.resolve("ha", "3c9e1b7a2d4f4e6a9b8c7d6e5f4a3b2c")
        assert zoe is not None and zoe.name == USER_NAME
        assert grace is not None and grace.name == "Grace Hopper"
        whose = {m.content: m.person for m in ingress.memories().get_all()}
        assert whose["Zoë practises cello on Sundays"] == zoe.id
        assert whose["Grace takes oat milk"] == grace.id

        zoes_page = clients["Zoë"].get(f"{PREFIX}/memories/").text
        graces_page = clients["Grace"].get(f"{SECOND_PREFIX}/memories/").text
        assert _whose(zoes_page, "Zoë practises cello on Sundays") == "You"
        assert "Grace takes oat milk" not in zoes_page
        assert _whose(graces_page, "Grace takes oat milk") == "You"
        assert "cello" not in graces_page
        # A client cannot pose as the other user through the proxy: nginx sets the header.
        posing = (
            clients["Grace"]
            .get(
                f"{SECOND_PREFIX}/memories/",
                headers={"X-Remote-User-Id": "8f0c2d7e4b1a4c53a1f0b5d6e7c8d9a0"},
            )
            .text
        )
        assert _whose(posing, "Grace takes oat milk") == "You"
    finally:
        for client in clients.values():
            client.close()

    # Straight to the add-on's port, not from the proxy: the forged user is never believed.
    app_url = next(
        line.split()[1].rstrip(";")
        for line in (ingress.data_dir.parent / "nginx" / "nginx.conf").read_text().splitlines()
        if "proxy_pass" in line
    )
    host_ip = _non_loopback_ip()
    if host_ip is None:
        pytest.fail("this machine has no non-loopback address to test a direct request from")
    before = ingress.memories().path.read_bytes()
    forged = httpx.post(
        app_url.replace("127.0.0.1", host_ip) + "memories/",
        data={"content": "Forged by Mallory"},
        headers={"X-Remote-User-Id": "8f0c2d7e4b1a4c53a1f0b5d6e7c8d9a0", "X-Ingress-Path": PREFIX},
        timeout=20,
    )
    assert forged.status_code == 403
    assert ingress.memories().path.read_bytes() == before


def test_nginx_config_is_what_the_test_uses():
    """The template is complete: every placeholder the fixture fills, and only those."""
    text = (REPO / "tests" / "nginx" / "nginx.conf.template").read_text(encoding="utf-8")
    assert set(re.findall(r"@[A-Z_]+@", text)) == {
        "@DIR@",
        "@PORT@",
        "@APP_PORT@",
        "@TOKEN@",
        "@USER_NAME@",
        "@USER@",
    }
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    assert image_start_command()[-1] == str(config["ingress_port"])


def test_one_users_private_memory_is_not_in_the_others_panel(ingress, page):
    """Chromium as Grace (her own ingress session) through nginx: Zoë's private memory, her
    thread and her proposal are on none of Grace's pages, and a crafted delete of it from
    Grace's browser is a 404 that changes nothing; Zoë's panel still shows it."""
    people = PeopleStore.from_settings(ingress.settings)
    zoe = people.resolve("ha", "8f0c2d7e4b1a4c53a1f0b5d6e7c8d9a0") or people.person_from(
        "ha", "8f0c2d7e4b1a4c53a1f0b5d6e7c8d9a0", name=USER_NAME
    )
    if people.resolve("ha", "3c9e1b7a2d4f4e6a9b8c7d6e5f4a3b2c") is None:
        people.person_from("ha", "3c9e1b7a2d4f4e6a9b8c7d6e5f4a3b2c", name="Grace Hopper")
    secret = ingress.memories().add("Is allergic to penicillin", person=zoe.id)
    ConversationStore(ingress.settings.conversation_file).add_exchange(
        "slack:zoe-doctor", "My doctor says I am allergic to penicillin", "Noted.", person=zoe.id
    )
    ReviewQueue(ingress.settings.review_file, ingress.memories()).submit(
        [Proposal("add", "Takes penicillin tablets on Mondays", person=zoe.id)]
    )
    grace = ingress.url + SECOND_PREFIX
    for path in (
        "/memories/",
        "/memories/?q=penicillin",
        "/conversations/",
        "/review/",
        "/prompt/",
    ):
        page.goto(grace + path)
        page.get_by_role("heading").first.wait_for()
        shown = page.locator("main").inner_text()
        assert "allergic to penicillin" not in shown and "penicillin tablets" not in shown, path
    assert page.goto(grace + f"/memories/{secret.id}/edit").status == 404
    assert page.goto(grace + "/conversations/thread/slack:zoe-doctor").status == 404
    page.goto(grace + "/memories/")
    token = _CSRF.search(page.content()).group(1)
    crafted = page.request.post(grace + f"/memories/{secret.id}/delete", form={"csrf_token": token})
    assert crafted.status == 404
    assert ingress.memories().get(secret.id) == secret
    page.goto(ingress.url + PREFIX + "/memories/")  # Zoë's own session
    page.locator(".memory-row", has_text="Is allergic to penicillin").wait_for()
