"""What every command of ``memory-curator`` shares: the settings, ``--data-dir``, the curator
and the stores of the data folder, and how errors a person can act on end (a one-line message
and a non-zero exit status, never a traceback)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from ..curator import Curator
from ..problems import CodedError, InputError
from ..settings import Settings, SettingsError
from ..stores import ConversationStore, MemoryStore, StoreError
from ..stores.readers import ConversationReader, MemoryReader


def load_settings(data_dir: str | None = None) -> Settings:
    """Settings from the environment, with ``--data-dir`` taking precedence over it."""
    settings = Settings.from_env()
    return settings.with_data_dir(data_dir) if data_dir else settings


def data_dir_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--data-dir DIR`` to a command."""
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False),
        default=None,
        help="Folder holding the stores (default: MEMORY_DATA_DIR, or ./data; /data in the add-on).",
    )(func)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn settings, store and file-system errors, and any coded refusal of the curator (a
    name two people share, say), into a one-line message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (SettingsError, StoreError, CodedError) as exc:
            click.echo(f"Error: {exc}{_code(exc)}", err=True)
            sys.exit(2)
        except OSError as exc:  # unreadable file or folder, a file where a folder belongs…
            click.echo(f"Error: {describe_os_error(exc)}", err=True)
            sys.exit(2)

    return wrapper


def _code(exc: Exception) -> str:
    """`` [code]`` after an error's message: the stable code a script can test for."""
    code = getattr(exc, "code", None)
    return f" [{code}]" if isinstance(code, str) and code else ""


def curator_of(data_dir: str | None) -> Curator:
    """The curator of the data folder the settings (or ``--data-dir``) name, acting as "cli"."""
    return Curator.from_settings(load_settings(data_dir), actor="cli")


def describe_os_error(exc: OSError) -> str:
    """An OSError as one line that names the file: ``Cannot use data/x.json: Permission denied``."""
    if exc.filename is None:
        return str(exc)
    return f"Cannot use {exc.filename}: {exc.strerror or exc}."


def memory_store(settings: Settings, actor: str = "cli") -> MemoryReader:
    """The long-term memory store as the settings describe it."""
    return MemoryStore.from_settings(settings, actor=actor)


def conversation_store(settings: Settings) -> ConversationReader:
    """The conversation store as the settings describe it."""
    return ConversationStore.from_settings(settings)


def input_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """What a person typed that the library refuses: its message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            click.echo(f"Error: {exc}{_code(exc)}", err=True)
            sys.exit(2)

    return wrapper
