"""The dashboard speaks the person's language: complete catalogs, the language each request
gets, the switcher, and formatting for the language."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from tests.support.data import make_settings
from tests.support.web import CsrfClient
from webapp import create_app
from webapp.web.blueprints.i18n import language_of
from webapp.web.plumbing.formatting import time_filter

REPO = Path(__file__).resolve().parents[2]
LOCALES = REPO / "webapp" / "locales"
TRANSLATED = ("zh_Hant", "zh_Hans")


def read_catalog(path: Path):
    with path.open("rb") as handle:
        return read_mo(handle) if path.suffix == ".mo" else read_po(handle)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> dict:
    """Every message in the code now: pybabel over templates, Python views and JavaScript."""
    pot = tmp_path_factory.mktemp("pot") / "messages.pot"
    subprocess.run(
        [
            Path(sys.executable).with_name("pybabel"),
            "-q",
            "extract",
            "-F",
            "babel.cfg",
            "-k",
            "_l",
            "-o",
            str(pot),
            ".",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return {m.id: m for m in read_catalog(pot) if m.id}


def test_extraction_covers_templates_python_and_javascript(extracted):
    places = {path for message in extracted.values() for path, _line in message.locations}
    assert any(p.startswith("templates/") for p in places)
    assert any(p.startswith("webapp/web/") for p in places)
    assert any(p.startswith("static/") and p.endswith(".js") for p in places)


@pytest.mark.parametrize("language", TRANSLATED)
def test_catalog_translates_every_message(extracted, language):
    """A message the code shows but the catalog lacks (or marks fuzzy) would appear in English."""
    catalog = {
        m.id: m for m in read_catalog(LOCALES / language / "LC_MESSAGES" / "messages.po") if m.id
    }
    missing = [
        str(msgid)
        for msgid in extracted
        if msgid not in catalog
        or not catalog[msgid].string
        or (isinstance(catalog[msgid].string, tuple) and not all(catalog[msgid].string))
    ]
    fuzzy = [str(msgid) for msgid, m in catalog.items() if m.fuzzy]
    assert not missing, f"{language} lacks translations for {missing}"
    assert not fuzzy, f"{language} has fuzzy translations for {fuzzy}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_javascript_gets_every_message_it_asks_for_translated(
    client: CsrfClient, extracted, language
):
    """The scripts look their messages up by the very id pybabel extracted: the page carries
    each one, translated as the catalog says (an id read back differently, as "—" and "·"
    once were, left the character counter in English)."""
    catalog = {
        m.id: m.string
        for m in read_catalog(LOCALES / language / "LC_MESSAGES" / "messages.po")
        if m.id
    }
    wanted = {
        msgid
        for msgid, message in extracted.items()
        if any(path.startswith("static/") for path, _line in message.locations)
    }
    page = client.get("/memories/", headers={"Accept-Language": language.replace("_", "-")})
    match = re.search(r'data-messages="([^"]*)"', page.get_data(as_text=True))
    assert match
    shipped = json.loads(html.unescape(match.group(1)))
    assert sorted(shipped) == sorted(wanted)
    assert {msgid: shipped[msgid] for msgid in wanted} == {
        msgid: catalog[msgid] for msgid in wanted
    }


PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_keep_the_placeholders(language):
    """A translation that drops ``%(text)s`` loses what the page meant to show, and one naming
    a placeholder the English lacks fails at run time; Babel's own check (what `pybabel compile`
    runs) must find nothing either, so scripts/i18n.sh stays clean."""
    path = LOCALES / language / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as handle:
        catalog = read_po(handle, locale=language)
    problems = [f"{m.id!r}: {[str(e) for e in errors]}" for m, errors in catalog.check()]
    for m in catalog:
        if not m.id or not m.string:
            continue
        forms = m.id if isinstance(m.id, tuple) else (m.id,)
        names = [set(PLACEHOLDER.findall(form)) for form in forms]
        for translation in m.string if isinstance(m.string, tuple) else (m.string,):
            used = set(PLACEHOLDER.findall(translation))
            if not names[0] <= used or not used <= set().union(*names):
                problems.append(f"{forms[0]!r} -> {translation!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("language", TRANSLATED)
def test_compiled_catalog_matches_its_source(language):
    """The .mo the app loads holds exactly the .po's translations (run scripts/i18n.sh)."""
    folder = LOCALES / language / "LC_MESSAGES"
    source = {
        key(m): text(m.string)
        for m in read_catalog(folder / "messages.po")
        if m.id and m.string and (not isinstance(m.string, tuple) or all(m.string))
    }
    compiled = {key(m): text(m.string) for m in read_catalog(folder / "messages.mo") if m.id}
    assert compiled == source


def key(message) -> tuple:
    """A message's context and id as a .po gives them (a .mo gives the context as bytes and a
    plural's id as a list)."""
    context = message.context or ""
    return (context.decode() if isinstance(context, bytes) else context, text(message.id))


def text(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("zh-TW", "zh_Hant"),
        ("zh-HK", "zh_Hant"),
        ("zh-MO", "zh_Hant"),
        ("zh-Hant", "zh_Hant"),
        ("zh-Hant-TW", "zh_Hant"),
        ("zh_TW", "zh_Hant"),
        ("zh-CN", "zh_Hans"),
        ("zh-SG", "zh_Hans"),
        ("zh-Hans", "zh_Hans"),
        ("zh-Hans-HK", "zh_Hans"),
        ("zh", "zh_Hans"),
        ("en", "en"),
        ("en-GB", "en"),
        ("fr-FR", None),
        ("", None),
    ],
)
def test_language_tags_map_to_catalogs(tag, language):
    assert language_of(tag) == language


def html_lang(response) -> str:
    match = re.search(r'<html lang="([^"]+)"', response.get_data(as_text=True))
    assert match
    return match.group(1)


@pytest.mark.parametrize(
    ("header", "lang", "nav"),
    [
        ("zh-TW,zh;q=0.9,en;q=0.8", "zh-Hant", "記憶"),
        ("zh-CN,zh;q=0.9", "zh-Hans", "记忆"),
        ("fr-FR,zh-HK;q=0.8", "zh-Hant", "記憶"),
        ("en-US,en;q=0.9", "en", "Memories"),
        ("de-DE", "en", "Memories"),
    ],
)
def test_language_follows_accept_language(client: CsrfClient, header, lang, nav):
    response = client.get("/memories/", headers={"Accept-Language": header})
    assert response.status_code == 200
    assert html_lang(response) == lang
    assert f">{nav}" in response.get_data(as_text=True)


def test_setting_fixes_the_language(tmp_path):
    app = create_app(make_settings(tmp_path, language="zh-Hans"))
    app.config.update(TESTING=True)
    response = app.test_client().get("/memories/", headers={"Accept-Language": "en-US"})
    assert html_lang(response) == "zh-Hans"


def test_switcher_is_remembered_in_the_session(client: CsrfClient):
    response = client.post("/language", data={"language": "zh_Hant", "next": "/conversations/"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/conversations/")
    page = client.get("/review/", headers={"Accept-Language": "zh-CN"})
    assert html_lang(page) == "zh-Hant", "the person's pick beats the browser's header"
    client.post("/language", data={"language": "en", "next": "/"})
    assert html_lang(client.get("/memories/", headers={"Accept-Language": "zh-CN"})) == "en"


@pytest.mark.parametrize(
    "target", ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:x"]
)
def test_switcher_goes_back_only_inside_the_app(client: CsrfClient, target):
    response = client.post("/language", data={"language": "zh_Hans", "next": target})
    assert response.status_code == 303
    assert (
        "evil" not in response.headers["Location"]
        and "javascript" not in response.headers["Location"]
    )


def test_switcher_ignores_unknown_languages(client: CsrfClient):
    client.post("/language", data={"language": "xx", "next": "/memories/"})
    assert html_lang(client.get("/memories/", headers={"Accept-Language": "zh-TW"})) == "zh-Hant"


def test_switcher_needs_the_csrf_token(client: CsrfClient):
    response = client.post("/language", data={"language": "zh_Hant"}, csrf=False)
    assert response.status_code == 400


def test_javascript_messages_are_rendered_translated(client: CsrfClient):
    page = client.get("/memories/", headers={"Accept-Language": "zh-TW"}).get_data(as_text=True)
    match = re.search(r'data-messages="([^"]*)"', page)
    assert match
    messages = json.loads(html.unescape(match.group(1)))
    assert messages["Copied"] == "已複製"  # gettext("Copied") in static/app.js


@pytest.mark.parametrize(
    ("language", "delta", "expected"),
    [
        ("en", timedelta(days=-3), ">3 days ago<"),
        ("en", timedelta(days=6, hours=5), ">in 6 days<"),
        ("en", timedelta(days=-13), ">13 days ago<"),
        ("zh_Hant", timedelta(days=-3), ">3 天前<"),
        ("zh_Hant", timedelta(seconds=-10), ">剛剛<"),
        ("zh_Hans", timedelta(days=6), ">6天后<"),
        ("zh_Hans", timedelta(hours=-2, minutes=-50), ">2小时前<"),
        ("en", timedelta(seconds=-10), ">just now<"),
    ],
)
def test_relative_times_in_the_language(app, language, delta, expected):
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    with app.test_request_context("/"):
        from flask import session

        session["language"] = language
        assert expected in time_filter(now + delta, "relative", now=now).replace("\u202f", " ")


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", ">2026-11-22 01:54 UTC<"),
        ("zh_Hant", ">2026年11月22日 01:54 UTC<"),
        ("zh_Hans", ">2026年11月22日 01:54 UTC<"),
    ],
)
def test_absolute_times_in_the_language(app, language, expected):
    with app.test_request_context("/"):
        from flask import session

        session["language"] = language
        assert expected in time_filter("2026-11-22T01:54:44Z", "absolute")


def notice_text(body: str, marker: str) -> str:
    """The sentence of the notice carrying ``marker``, tags dropped (its Undo left out)."""
    found = re.search(rf"{marker}[^>]*>\s*(?:<p>)?(.*?)</p>", body, re.S)
    assert found, f"no {marker} in the answer"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


@pytest.mark.parametrize(
    ("header", "typed", "said"),
    [
        ("en", "Drinks two litres of water", "Added “Drinks two litres of water”."),
        ("en", "Drinks two litres of water.", "Added “Drinks two litres of water.”"),
        ("zh-TW", "每天喝水兩公升", "已新增「每天喝水兩公升」。"),
        ("zh-TW", "每天喝水兩公升。", "已新增「每天喝水兩公升。」"),
        ("zh-CN", "每天喝水两公升", "已添加“每天喝水两公升”。"),
    ],
)
def test_a_quoted_memory_takes_the_languages_marks_and_one_stop(
    client: CsrfClient, header, typed, said
):
    body = client.post(
        "/memories/",
        htmx=True,
        headers={"Accept-Language": header},
        data={"content": typed, "category": "general"},
    ).get_data(as_text=True)
    assert notice_text(body, 'role="status"') == said


@pytest.mark.parametrize(
    ("header", "fact", "said"),
    [
        ("zh-CN", "对花生过敏。", "已拒绝，之后不会再提出：“对花生过敏。”"),
        ("zh-CN", "对花生过敏", "已拒绝，之后不会再提出：“对花生过敏”。"),
        ("zh-TW", "對花生過敏。", "已拒絕，之後不會再提出：「對花生過敏。」"),
    ],
)
def test_a_rejected_fact_is_said_with_its_punctuation(
    client: CsrfClient, settings, header, fact, said
):
    from webapp.stores import MemoryStore, ReviewQueue
    from webapp.stores.review import Proposal

    queue = ReviewQueue(settings.review_file, MemoryStore.from_settings(settings), lock_timeout=5)
    [item] = queue.submit([Proposal("add", fact, "general")], conversation_id="cli:session-1")
    body = client.post(
        f"/review/{item.id}/reject", htmx=True, headers={"Accept-Language": header}
    ).get_data(as_text=True)
    assert notice_text(body, 'id="review-notice"') == said


@pytest.mark.parametrize("language", ["en", *TRANSLATED])
def test_a_message_kept_per_catalog_renders_as_jinja_renders_it(app, language):
    """``_("…")`` keeps its result per catalog (issue 46: a page says some 50): what a
    template shows is still Jinja's own newstyle gettext's, with values, Markup values, %%,
    and without autoescaping."""
    from jinja2.ext import _make_new_gettext

    from webapp.web.plumbing.formatting import page_translations

    said = [
        '{{ _("Memories") }}|{{ _("Memories") }}',
        '{{ _("Show all %(total)s", total="<b>") }}',
        '{{ _("Show all %(total)s", total="<b>" | safe) }}',
        '{{ _("100%% sure") }}',
        '{{ _("Memory added.") }}',
    ]
    sources = [f"{{% autoescape {on} %}}{s}{{% endautoescape %}}" for s in said for on in (1, 0)]
    with app.test_request_context("/", headers={"Accept-Language": "en"}):
        from flask import session

        session["language"] = language
        kept = [app.jinja_env.from_string(s).render() for s in sources]
        app.jinja_env.from_string('{{ _("Memories") }}').render()  # from the kept result
        jinja = _make_new_gettext(lambda s: page_translations().ugettext(s))
        globals_before = dict(app.jinja_env.globals)
        app.jinja_env.globals.update(gettext=jinja, _=jinja)
        try:
            own = [app.jinja_env.from_string(s).render() for s in sources]
        finally:
            app.jinja_env.globals.update(globals_before)
    assert kept == own
    if language == "en":
        assert kept[6:8] == ["100% sure", "100% sure"]
        assert kept[2] == "Show all &lt;b&gt;"
