"""The dashboard's language: which one a request gets, the switcher, and formatting for it.

Interface text goes through gettext (Flask-Babel) with catalogs in ``webapp/locales``;
what is stored (memories, turns, skill documents) is never translated. The language is,
in order: the one picked on the page (kept in the session), ``MEMORY_LANGUAGE`` when it is
not ``auto``, the browser's ``Accept-Language`` (Home Assistant's ingress passes it
through), else English.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.messages.extract import extract
from babel.numbers import format_decimal as babel_format_decimal
from flask import Blueprint, Flask, current_app, redirect, request, session, url_for
from flask_babel import Babel, format_decimal, get_locale
from jinja2 import Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from werkzeug.wrappers import Response

from ..plumbing.formatting import page_translations

# Catalog name -> what the switcher shows (each in its own language).
LANGUAGES: dict[str, str] = {"en": "English", "zh_Hant": "繁體中文", "zh_Hans": "简体中文"}
# Catalog name -> the BCP 47 tag for <html lang> and MEMORY_LANGUAGE.
HTML_LANG: dict[str, str] = {"en": "en", "zh_Hant": "zh-Hant", "zh_Hans": "zh-Hans"}
SESSION_KEY = "language"
LOCALES_DIR = Path(__file__).resolve().parents[2] / "locales"

bp = Blueprint("i18n", __name__)


def language_of(tag: str) -> str | None:
    """The catalog for a language tag: zh-TW/zh-HK/zh-MO/zh-Hant-* are Traditional,
    zh/zh-CN/zh-SG/zh-Hans-* Simplified, en-* English; None for anything else."""
    parts = tag.strip().replace("_", "-").lower().split("-")
    if parts[0] == "en":
        return "en"
    if parts[0] != "zh":
        return None
    rest = parts[1:]
    if "hans" in rest:
        return "zh_Hans"
    if "hant" in rest or any(region in ("tw", "hk", "mo") for region in rest):
        return "zh_Hant"
    return "zh_Hans"


def select_language() -> str:
    """The catalog for this request (see the module's docstring for the order)."""
    chosen = session.get(SESSION_KEY)
    if isinstance(chosen, str) and chosen in LANGUAGES:
        return chosen
    fixed = current_app.config["MEMORY_SETTINGS"].language
    if fixed != "auto":
        return language_of(fixed) or "en"
    for tag, _quality in request.accept_languages:
        found = language_of(tag)
        if found:
            return found
    return "en"


def current_language() -> str:
    """The catalog name of the language this request is answered in."""
    locale = get_locale()
    if locale is None:
        return "en"
    name = str(locale)
    return name if name in LANGUAGES else "en"


@bp.post("/language")
def set_language() -> Response:
    """Remember the language picked on the page and go back to where the person was."""
    picked = request.form.get("language", "")
    if picked in LANGUAGES:
        session[SESSION_KEY] = picked
    return redirect(_safe_next(request.form.get("next", "")), code=303)


def _safe_next(target: str) -> str:
    """Only a path of this app (under the ingress prefix) is a place to go back to."""
    root = request.script_root
    if (
        target.startswith(root + "/")
        and not target.startswith("//")
        and "\\" not in target
        and not any(ord(c) < 32 for c in target)
    ):
        return target
    return url_for("index")


@cache
def _js_message_ids(static_folder: str) -> tuple[str, ...]:
    """Every ``gettext("…")`` in the static JavaScript, read by Babel's own JavaScript
    extractor: the ids are exactly the catalog's (escapes and non-ASCII such as "—" alike)."""
    found: set[str] = set()
    for script in sorted(Path(static_folder).rglob("*.js")):
        if "vendor" in script.parts:
            continue
        with script.open("rb") as handle:
            for _line, message, _comments, _context in extract(
                "javascript", handle, keywords={"gettext": None}
            ):
                found.add(message if isinstance(message, str) else message[0])
    return tuple(sorted(found))


def js_messages() -> dict[str, str]:
    """The JavaScript's messages in this request's language (rendered into the page)."""
    t = page_translations()
    return {msgid: t.gettext(msgid) for msgid in _js_message_ids(current_app.static_folder or "")}


def format_number(value: int | float) -> str:
    """A number with the language's grouping ("10,000")."""
    locale = get_locale()
    if locale is None or type(value) is not int:
        return format_decimal(value)
    # A page shows a dozen counts (Babel reads the locale's pattern anew each time: 30 µs)
    return _grouped(value, str(locale))


@lru_cache(maxsize=4096)
def _grouped(value: int, locale: str) -> str:
    return babel_format_decimal(value, locale=locale)


def language_name(tag: str) -> str:
    """A language tag (``en``, ``zh-Hant``: what the stores record about a text) named in the
    page's language by CLDR ("中文 (繁體)"); a tag Babel does not know is shown as it is."""
    try:
        return Locale.parse(tag.replace("-", "_")).get_display_name(get_locale()) or tag
    except (ValueError, TypeError):
        return tag


def template_globals() -> dict[str, Any]:
    """What base.html needs: the page's language tag, the switcher, the JS messages."""
    language = current_language()
    return {
        "html_lang": HTML_LANG[language],
        "current_language": language,
        "languages": LANGUAGES,
        "html_lang_of": HTML_LANG,
        "js_messages": js_messages(),
    }


def _remember_translated(env: Environment) -> None:
    """``_("…")`` without values, in an HTML template, keeps its result per catalog: a page
    says some 50 of them, each a catalog lookup, a Markup and a format of its own before
    (0.29 ms of a Memories page's 1.28 ms). The result is Jinja's own, with values or
    without autoescaping too (the format with no values still turns %% into %)."""
    plain: Callable[..., str] = env.globals["gettext"]  # type: ignore[assignment]

    @pass_context
    def gettext(context: Context, string: str, /, **variables: Any) -> str:
        if variables or not context.eval_ctx.autoescape:
            return plain(context, string, **variables)
        translations = page_translations()
        done: dict[str, Markup] = vars(translations).setdefault(_TRANSLATED, {})
        text = done.get(string)
        if text is None:
            text = done[string] = Markup(translations.ugettext(string)) % {}
        return text

    env.globals.update(gettext=gettext, _=gettext)


_TRANSLATED = "_memory_curator_translated"


def init_app(app: Flask) -> None:
    """Set up Flask-Babel with our catalogs, the language switcher and the formatting filters."""
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(LOCALES_DIR))
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "en")
    app.config.setdefault("BABEL_DEFAULT_TIMEZONE", "UTC")
    Babel(app, locale_selector=select_language)
    # Flask-Babel's template callables, with the catalog looked up once per request.
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=lambda s: page_translations().ugettext(s),
        ngettext=lambda s, p, n: page_translations().ungettext(s, p, n),
        newstyle=True,
        pgettext=lambda c, s: page_translations().upgettext(c, s),
        npgettext=lambda c, s, p, n: page_translations().unpgettext(c, s, p, n),
    )
    _remember_translated(app.jinja_env)
    app.register_blueprint(bp)
    app.context_processor(template_globals)
    app.add_template_filter(format_number, "number")
    app.add_template_filter(language_name, "language_name")
