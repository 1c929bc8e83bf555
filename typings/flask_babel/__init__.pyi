# Flask-Babel 4 ships partial annotations but no py.typed marker, so mypy would see every
# name as Any; these are the signatures of the names webapp uses, as the release defines them.
from collections.abc import Callable
from typing import Any

from babel import Locale
from babel.support import NullTranslations, Translations
from flask import Flask

from .speaklater import LazyString

class Babel:
    def __init__(
        self,
        app: Flask | None = None,
        date_formats: dict[str, str | None] | None = None,
        configure_jinja: bool = True,
        *args: Any,
        **kwargs: Any,
    ) -> None: ...
    def init_app(
        self,
        app: Flask,
        default_locale: str = "en",
        default_domain: str = "messages",
        default_translation_directories: str = "translations",
        default_timezone: str = "UTC",
        locale_selector: Callable[[], str | Locale | None] | None = None,
        timezone_selector: Callable[[], Any] | None = None,
    ) -> None: ...

def get_translations() -> Translations | NullTranslations: ...
def get_locale() -> Locale | None: ...
def format_decimal(number: float | int | str, format: str | None = None) -> str: ...
def gettext(string: str, **variables: Any) -> str: ...
def ngettext(singular: str, plural: str, num: int, **variables: Any) -> str: ...
def pgettext(context: str, string: str, **variables: Any) -> str: ...
def lazy_gettext(string: str, **variables: Any) -> LazyString: ...
