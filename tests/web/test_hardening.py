"""The dashboard against hostile input and careless operators: deep JSON and YAML, alias bombs,
a damaged secret key, saved cookies after logout, login guessing, proxies, caching, huge posts,
and writers waiting on a lock held by another process."""

from __future__ import annotations

import concurrent.futures
import io
import json
import logging
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile

import pytest

from tests.support.auth import TOKEN, log_in, serve_command
from tests.support.cli import clean_env
from tests.support.data import make_settings
from tests.support.mcp_http import free_port
from tests.support.web import start_server, stop_server
from webapp import create_app
from webapp.web.blueprints import auth
from webapp.web.blueprints.auth import MAX_FAILURES

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def token_app(tmp_path):
    app = create_app(make_settings(tmp_path, dashboard_token=TOKEN))
    app.config.update(TESTING=True)
    return app


# ----------------------------------------------------------------- 6. deep JSON in an import
@pytest.mark.parametrize("depth", [100_000, 970])
def test_an_import_file_nested_too_deep_gets_a_message_not_an_error_page(client, depth):
    if depth == 970:
        payload = '[{"id": "a", "content": "x", "extra": ' + "[" * depth + "]" * depth + "}]"
    else:
        payload = "[" * depth + "]" * depth
    for url in ("/memories/import", "/memories/import/confirm"):
        response = client.post(url, data={"payload": payload})
        assert response.status_code == 422, response.status_code
        assert "nested too deep" in response.get_data(as_text=True)
    assert client.get("/memories/").status_code == 200


def test_an_import_file_with_a_huge_number_gets_a_message(client):
    payload = '[{"id": "a", "content": "x", "n": ' + "9" * 5000 + "}]"
    response = client.post("/memories/import", data={"payload": payload})
    assert response.status_code == 422
    assert "number" in response.get_data(as_text=True)


# ----------------------------------------------------------------- 6, 7. skill front matter
def skill_zip(front_matter: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", f"---\n{front_matter}\n---\nDo the thing.\n")
    return buffer.getvalue()


BILLION_LAUGHS = "\n".join(
    [
        "name: lol",
        "description: x",
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
    ]
)


@pytest.mark.parametrize(
    "front_matter, message",
    [
        (BILLION_LAUGHS, "alias"),
        ("name: deep\ndescription: x\nmeta: " + "[" * 5000 + "]" * 5000, "nested too deep"),
        ("name: set\ndescription: x\ntags: !!set {a: null}", "tags is !!set"),
        ("name: nan\ndescription: x\nmeta: {v: .nan}", "meta.v is .nan"),
        ('name: clash\ndescription: x\nmeta: {2001-01-01: a, "2001-01-01": b}', "two keys"),
    ],
    ids=["aliases", "5000 deep", "a set", "not a number", "a date key beside the same text"],
)
def test_hostile_front_matter_is_refused_with_a_message(client, settings, front_matter, message):
    started = time.monotonic()
    response = client.post(
        "/skills/import", data={"archive": (io.BytesIO(skill_zip(front_matter)), "bomb.zip")}
    )
    assert time.monotonic() - started < 10
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "Nothing was imported" in html and message in html
    assert not list(settings.skills_dir.glob("*.json"))


def test_a_date_as_a_key_in_front_matter_is_imported_as_iso_text(client, settings):
    front_matter = (
        "name: dated\ndescription: x\nreleased: 2001-12-14t21:59:43Z\nmeta: {2001-01-01: x}"
    )
    response = client.post(
        "/skills/import", data={"archive": (io.BytesIO(skill_zip(front_matter)), "dated.zip")}
    )
    assert response.status_code == 200
    assert "Imported dated: 1 added" in response.get_data(as_text=True)
    (stored,) = settings.skills_dir.glob("*.json")
    assert json.loads(stored.read_bytes())["meta"] == {
        "name": "dated",
        "description": "x",
        "released": "2001-12-14T21:59:43+00:00",
        "meta": {"2001-01-01": "x"},
    }


def test_a_document_too_large_to_load_is_never_written(tmp_path):
    from webapp.stores import InvalidSkillDocumentError, SkillDocumentStore
    from webapp.stores.skills.folder import MAX_FILE_BYTES

    store = SkillDocumentStore(tmp_path / "skills", lock_timeout=5)
    huge = {
        "type": "skill",
        "skill": "big",
        "skillDescription": "big",
        "content": "text",
        "meta": {"padding": ["x" * 1000] * (MAX_FILE_BYTES // 1000)},
    }
    with pytest.raises(InvalidSkillDocumentError, match="too large"):
        store.save(huge)
    assert store.list() == [] and not list((tmp_path / "skills").glob("*.json"))


# ----------------------------------------------------------------- 10. the secret key file
@pytest.mark.parametrize("content", [b"", b"   \n", b"\xff\xfe\x00garbage"], ids=str)
def test_a_damaged_secret_key_file_is_replaced_with_a_warning(tmp_path, content, caplog):
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    key_file = settings.data_dir / ".secret_key"
    key_file.write_bytes(content)
    with caplog.at_level(logging.WARNING):
        app = create_app(settings)
    assert app.test_client().get("/memories/").status_code == 200
    assert len(key_file.read_text(encoding="ascii").strip()) >= 32
    assert ".secret_key" in caplog.text and "new" in caplog.text
    assert [p.read_bytes() for p in settings.data_dir.glob(".secret_key.corrupt-*")] == [content]


def test_the_secret_key_is_written_durably(tmp_path, monkeypatch):
    from webapp.web.plumbing.secret_key import secret_key_for

    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    settings = make_settings(tmp_path)
    key = secret_key_for(settings)
    assert key and any(".secret_key" in name for name in synced)
    assert str(settings.data_dir) in synced  # the folder, so the new name is durable too


# ----------------------------------------------------------------- 11. logout ends the session
def test_a_cookie_saved_before_logout_no_longer_works(token_app):
    client = token_app.test_client()
    log_in(client)
    saved = client.get_cookie("memory_curator_session").value
    html = client.get("/memories/").get_data(as_text=True)
    client.post("/logout", data={"csrf_token": CSRF.search(html).group(1)})

    thief = token_app.test_client()
    thief.set_cookie("memory_curator_session", saved)
    assert thief.get("/memories/").status_code == 303


def test_logging_out_in_one_browser_leaves_the_other_logged_in(token_app):
    first, second = token_app.test_client(), token_app.test_client()
    log_in(first)
    log_in(second)
    html = first.get("/memories/").get_data(as_text=True)
    first.post("/logout", data={"csrf_token": CSRF.search(html).group(1)})
    assert second.get("/memories/").status_code == 200


# ----------------------------------------------------------------- 12. login guessing
def _guess_from_many_addresses(app, count: int = auth.GLOBAL_MAX_FAILURES) -> None:
    for n in range(count):
        client = app.test_client()
        response = log_in(client, token=f"guess-{n}", remote=f"127.0.{n // 250}.{n % 250 + 1}")
        assert response.status_code == 401, n


def test_failed_logins_from_many_addresses_hit_a_global_limit(token_app):
    """After 30 wrong guesses from anywhere, an address that guessed wrong gets no more tries,
    though it is far from its own limit of 5, not even with the right token."""
    _guess_from_many_addresses(token_app)
    assert log_in(token_app.test_client(), token="one more", remote="127.0.0.1").status_code == 429
    assert log_in(token_app.test_client(), remote="127.0.0.2").status_code == 429


def test_the_owner_gets_in_past_the_global_limit_from_an_address_that_has_not_failed(token_app):
    """The global limit once locked the owner out too, for 15 minutes, wherever they were."""
    _guess_from_many_addresses(token_app)
    owner = token_app.test_client()
    assert log_in(owner, remote="192.0.2.10").status_code == 303
    assert owner.get("/memories/").status_code == 200
    # A new address that guesses wrong has failed now: the global limit holds it.
    assert log_in(token_app.test_client(), token="nope", remote="192.0.2.11").status_code == 401
    assert log_in(token_app.test_client(), remote="192.0.2.11").status_code == 429


def _via_proxy(client, token: str, client_address: str, proxy: str = "127.0.0.1"):
    data = {"token": token, "csrf_token": CSRF.search(client.get("/login").get_data(True))[1]}
    return client.post(
        "/login",
        data=data,
        environ_base={"REMOTE_ADDR": proxy},
        headers={"X-Forwarded-For": client_address},
    )


def test_behind_a_trusted_proxy_each_client_has_its_own_limit(tmp_path):
    app = create_app(make_settings(tmp_path, dashboard_token=TOKEN, trusted_proxies=("127.0.0.1",)))
    for n in range(MAX_FAILURES):
        assert _via_proxy(app.test_client(), f"bad {n}", "203.0.113.5").status_code == 401
    assert _via_proxy(app.test_client(), "bad again", "203.0.113.5").status_code == 429
    assert _via_proxy(app.test_client(), TOKEN, "198.51.100.7").status_code == 303


def test_a_forwarded_address_from_an_untrusted_peer_is_ignored(tmp_path):
    app = create_app(make_settings(tmp_path, dashboard_token=TOKEN, trusted_proxies=()))
    for n in range(MAX_FAILURES):
        _via_proxy(app.test_client(), f"bad {n}", f"203.0.113.{n + 1}", proxy="192.0.2.1")
    response = _via_proxy(app.test_client(), "bad", "203.0.113.99", proxy="192.0.2.1")
    assert response.status_code == 429  # rotating X-Forwarded-For does not escape the limit


def test_a_short_environment_token_is_refused_on_a_public_address(tmp_path):
    result = subprocess.run(
        serve_command(free_port(), tmp_path / "data"),
        env=clean_env(MEMORY_DASHBOARD_TOKEN="x"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "MEMORY_DASHBOARD_TOKEN" in result.stderr and "16 characters" in result.stderr


BLANK_TOKENS = {
    "16 spaces": " " * 16,
    "tabs and spaces": " \t" * 10,
    "ideographic spaces": "\u3000" * 20,
    "zero-width spaces": "\u200b" * 16,
    "three letters and spaces": "abc" + " " * 20,
    "hangul fillers and no-break spaces": "\u3164\u00a0" * 10,
    "16 combining marks": "\u0301" * 16,
    "letters carrying combining marks": "abc" + "\u0308\u0323" * 10,
    "a letter and its accent, NFKC one": "e\u0301" * 9 + "abcdef",
}


WEAK_TOKENS = {
    "one letter 16 times": "a" * 16,
    "two letters 20 times": "ab" * 20,
    "full-width and half-width, NFKC one": "ａa" * 8 + "bcdef",
}


@pytest.mark.parametrize("token", BLANK_TOKENS.values(), ids=BLANK_TOKENS.keys())
def test_a_blank_environment_token_is_refused_on_a_public_address(tmp_path, token):
    """Spaces, invisible characters and combining marks are no secret: the token must have
    16 others."""
    try:
        result = subprocess.run(
            serve_command(free_port(), tmp_path / "data"),
            env=clean_env(MEMORY_DASHBOARD_TOKEN=token),
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the server started on 0.0.0.0 with a blank token")
    assert result.returncode == 2
    assert "Refusing to listen on 0.0.0.0" in result.stderr
    assert "spaces, invisible characters and combining marks do not count" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("token", WEAK_TOKENS.values(), ids=WEAK_TOKENS.keys())
def test_a_token_of_few_different_characters_is_refused_on_a_public_address(tmp_path, token):
    """16 × "a" is 16 visible characters and no secret: a token needs 8 different ones."""
    try:
        result = subprocess.run(
            serve_command(free_port(), tmp_path / "data"),
            env=clean_env(MEMORY_DASHBOARD_TOKEN=token),
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the server started on 0.0.0.0 with a repetitive token")
    assert result.returncode == 2
    assert "Refusing to listen on 0.0.0.0" in result.stderr
    assert "different characters; use at least 8 different ones" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_blank_token_file_is_refused(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("\u200b" * 32 + "\n", encoding="utf-8")
    result = subprocess.run(
        serve_command(free_port(), tmp_path / "data", "--token-file", str(token_file)),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 2
    assert "spaces, invisible characters and combining marks do not count" in result.stderr


# ----------------------------------------------------------------- 13. cookie, caching, size
def _set_cookie(response) -> str:
    return next(v for k, v in response.headers.items() if k == "Set-Cookie")


def test_the_session_cookie_is_secure_over_https(tmp_path):
    app = create_app(make_settings(tmp_path, dashboard_token=TOKEN, trusted_proxies=("127.0.0.1",)))
    direct = app.test_client().get("/login", base_url="https://localhost")
    assert "Secure" in _set_cookie(direct)
    proxied = app.test_client().get("/login", headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in _set_cookie(proxied)
    plain = app.test_client().get("/login")
    assert "Secure" not in _set_cookie(plain)
    forged = app.test_client().get(
        "/login", headers={"X-Forwarded-Proto": "https"}, environ_base={"REMOTE_ADDR": "192.0.2.1"}
    )
    assert "Secure" not in _set_cookie(forged)


@pytest.mark.parametrize("url", ["/memories/export", "/memories/", "/memories/meter"])
def test_memories_are_never_cached(client, url):
    assert client.get(url).headers.get("Cache-Control") == "no-store"


def test_a_huge_post_to_memories_talks_about_memories(client):
    response = client.post(
        "/memories/", data={"content": "x" * (50 * 1024 * 1024), "category": "general"}
    )
    assert response.status_code == 413
    html = response.get_data(as_text=True)
    assert "A memory is one short sentence" in html and "memory export" not in html


# ----------------------------------------------------------------- 9. waiting writers
def test_waiting_writers_do_not_starve_page_loads(tmp_path):
    server = start_server(tmp_path / "data", {"MEMORY_LOCK_TIMEOUT": "20"})
    holder = None
    try:
        page = urllib.request.urlopen(server.url + "/memories/", timeout=10).read().decode()
        token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
        cookie_jar = urllib.request.HTTPCookieProcessor()
        opener = urllib.request.build_opener(cookie_jar)
        page = opener.open(server.url + "/memories/", timeout=10).read().decode()
        token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
        lock = server.data_dir / "memories.json.lock"
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, fcntl, os\n"
                "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "print('held', flush=True)\n"
                "sys.stdin.readline()\n",
                str(lock),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout.readline().strip() == "held"

        def add(n: int) -> int:
            request = urllib.request.Request(
                server.url + "/memories/",
                data=f"content=waiting+{n}&category=general".encode(),
                headers={"X-CSRFToken": token, "HX-Request": "true"},
            )
            try:
                return opener.open(request, timeout=60).status
            except urllib.error.HTTPError as exc:
                return exc.code

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            writes = [pool.submit(add, n) for n in range(8)]
            time.sleep(1.0)  # every write is waiting for the lock or has been refused
            timings = {}
            for path in ("/healthz", "/memories/", "/memories/?q=tea"):
                started = time.monotonic()
                with opener.open(server.url + path, timeout=30) as response:
                    response.read()
                timings[path] = time.monotonic() - started
            holder.communicate("\n", timeout=5)
            statuses = [w.result(timeout=60) for w in writes]
        assert all(t < 1.0 for t in timings.values()), timings
        assert set(statuses) <= {200, 503} and 200 in statuses, statuses
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        stop_server(server)


# ----------------------------------------------------------------- lone surrogates on the way out
SURROGATE_MEMORY = (
    '[{"id": "bad000000001", "content": "Likes tea \\ud800 a lot", '
    '"createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z", '
    '"category": "preference"}]\n'
)


@pytest.fixture
def surrogate_client(settings):
    """A dashboard over a memory file another program wrote a lone surrogate into."""
    settings.memory_file.parent.mkdir(parents=True, exist_ok=True)
    settings.memory_file.write_text(SURROGATE_MEMORY, encoding="ascii")
    app = create_app(settings)
    app.config.update(TESTING=True)
    return app.test_client()


@pytest.mark.parametrize(
    "url",
    [
        "/prompt/",
        "/prompt/?message=What+do+I+like%3F",
        "/memories/",
        "/memories/?q=tea",
        "/memories/bad000000001/history",
    ],
)
def test_a_lone_surrogate_in_a_memory_is_shown_as_a_replacement_character(surrogate_client, url):
    response = surrogate_client.get(url)
    assert response.status_code == 200
    assert "Likes tea \ufffd a lot" in response.get_data(as_text=True)


def test_the_export_of_a_memory_with_a_lone_surrogate_is_valid_utf8(surrogate_client):
    response = surrogate_client.get("/memories/export")
    assert response.status_code == 200
    exported = json.loads(response.data.decode("utf-8"))
    assert [m["content"] for m in exported] == ["Likes tea \ufffd a lot"]
