"""Settings read once from the environment and, in the Home Assistant add-on, /data/options.json.

Nothing here runs at import time: call ``Settings.from_env()`` where the program starts.
"""

from __future__ import annotations

import json
import os
import unicodedata
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .problems import CodedError

# This release (``webapp.__version__``; the add-on's config.yaml and the integration's manifest
# name the same one: tests/test_addon_config.py checks).
VERSION = "0.7.0"

ADDON_OPTIONS_FILE = Path("/data/options.json")
ADDON_DATA_DIR = Path("/data")
# The folder the add-on shares with Home Assistant and other add-ons (config.yaml maps it);
# memory_data_dir names a folder in it.
ADDON_SHARE_DIR = Path("/share")
# What the move of /data into that folder leaves in it (webapp.web.plumbing.shared_folder): the
# marker written last, and the lock one mover at a time holds.
MOVE_MARKER = ".memory-moved.json"
MOVE_LOCK = ".memory-move.lock"
STANDALONE_DATA_DIR = Path("data")  # relative to the working directory

REVIEW_MODES = ("manual", "auto")
LLM_PROVIDERS = ("none", "claude-cli", "openai", "anthropic", "homeassistant")
THEMES = ("auto", "light", "dark")
LANGUAGES = ("auto", "en", "zh-Hant", "zh-Hans")


class SettingsError(CodedError, ValueError):
    """A setting has a value the program cannot use; the message names the variable
    (``source``) and ``value`` is what it holds."""

    code = "setting_invalid"  # what the server's own checks (webapp.web.plumbing.serve) raise
    codes: tuple[str, ...] = (
        "setting_invalid",
        "options_unreadable",
        "options_not_object",
        "setting_not_boolean",
        "setting_not_choice",
        "setting_not_positive",
        "token_blank",
        "token_repetitive",
        "setting_not_timezone",
    )


# (field name, environment variable, kind, default). The add-on option key is the
# lower-case environment variable name, so config.yaml and the environment agree.
_SPECS: tuple[tuple[str, str, str | tuple[str, ...], Any], ...] = (
    ("memory_max_items", "MEMORY_MAX_ITEMS", "posint", 100),
    ("memory_max_chars", "MEMORY_MAX_CHARS", "posint", 10000),
    ("conversation_max_turns", "CONVERSATION_MAX_TURNS", "posint", 20),
    ("conversation_max_chars", "CONVERSATION_MAX_CHARS", "posint", 8000),
    ("conversation_max_age_days", "CONVERSATION_MAX_AGE_DAYS", "posint", 7),
    ("memory_stale_days", "MEMORY_STALE_DAYS", "posint", 180),
    ("review_mode", "MEMORY_REVIEW_MODE", REVIEW_MODES, "manual"),
    ("llm_provider", "MEMORY_LLM_PROVIDER", LLM_PROVIDERS, "none"),
    ("llm_model", "MEMORY_LLM_MODEL", "str", ""),
    ("llm_base_url", "MEMORY_LLM_BASE_URL", "str", ""),
    ("llm_api_key", "MEMORY_LLM_API_KEY", "str", ""),
    # The provider ``homeassistant``: the AI Task entity whose model answers (through the
    # Supervisor's proxy to Home Assistant's REST API, ``supervisor_url``).
    ("ha_ai_task_entity", "MEMORY_HA_AI_TASK_ENTITY", "str", ""),
    ("llm_timeout", "MEMORY_LLM_TIMEOUT", "posint", 60),
    ("llm_max_reply_bytes", "MEMORY_LLM_MAX_REPLY_BYTES", "posint", 1_000_000),
    # Needs attention's LLM tier: what one scan may send (the rest waits for the next scan).
    ("llm_pairs_per_scan", "MEMORY_LLM_PAIRS_PER_SCAN", "posint", 100),
    ("llm_tokens_per_scan", "MEMORY_LLM_TOKENS_PER_SCAN", "posint", 20_000),
    ("llm_seconds_per_scan", "MEMORY_LLM_SECONDS_PER_SCAN", "posint", 120),
    ("max_facts_per_thread", "MEMORY_MAX_FACTS_PER_THREAD", "posint", 20),
    # The dashboard's server extracts due threads by itself (webapp.curator.background),
    # looking for them every so many seconds.
    ("auto_extract", "MEMORY_AUTO_EXTRACT", "bool", True),
    ("auto_extract_every", "MEMORY_AUTO_EXTRACT_EVERY", "posint", 15),
    ("lock_timeout", "MEMORY_LOCK_TIMEOUT", "posint", 10),
    ("theme", "MEMORY_THEME", THEMES, "auto"),
    ("language", "MEMORY_LANGUAGE", LANGUAGES, "auto"),
    ("context_window", "MEMORY_CONTEXT_WINDOW", "posint", 200000),
    ("dashboard_token", "MEMORY_DASHBOARD_TOKEN", "str", ""),
    ("allow_direct_access", "MEMORY_ALLOW_DIRECT_ACCESS", "bool", False),
    # Behind Home Assistant's ingress each person sees their own private data and the
    # household's; with this on, Home Assistant administrators see everyone's.
    ("admins_see_all", "MEMORY_ADMINS_SEE_ALL", "bool", False),
    ("trusted_proxies", "MEMORY_TRUSTED_PROXIES", "list", ("172.30.32.2",)),
    ("timezone", "MEMORY_TIMEZONE", "timezone", "UTC"),
    # Where the stores live; in the add-on, a folder under /share (a name is taken as one).
    ("data_folder", "MEMORY_DATA_DIR", "str", ""),
    # MCP over HTTP (webapp.mcp.http): who may call without a token (IPs and CIDRs, comma
    # separated; empty: 172.30.32.1 in the add-on, this machine standalone), the token the
    # others present (or a file holding it), the person a call that names nobody is for
    # (empty: the household), and extra host names the token-less callers may use.
    ("mcp_trusted", "MEMORY_MCP_TRUSTED", "str", ""),
    ("mcp_token", "MEMORY_MCP_TOKEN", "str", ""),
    ("mcp_token_file", "MEMORY_MCP_TOKEN_FILE", "str", ""),
    ("mcp_default_person", "MEMORY_MCP_DEFAULT_PERSON", "str", ""),
    ("mcp_allowed_hosts", "MEMORY_MCP_ALLOWED_HOSTS", "str", ""),
    # The server (webapp.web.plumbing.guard): connections open at once from the clients that are not
    # exempt, from one address, seconds a connection may sit idle, and seconds one request
    # may take to arrive whole.
    ("server_connections", "MEMORY_SERVER_CONNECTIONS", "posint", 100),
    ("server_connections_per_client", "MEMORY_SERVER_CONNECTIONS_PER_CLIENT", "posint", 20),
    ("server_idle_timeout", "MEMORY_SERVER_IDLE_TIMEOUT", "posint", 60),
    ("server_request_timeout", "MEMORY_SERVER_REQUEST_TIMEOUT", "posint", 60),
    # The Supervisor's API, which the add-on asks for its host name and tells of its MCP server.
    ("supervisor_url", "MEMORY_SUPERVISOR_URL", "str", "http://supervisor"),
)

# Every setting's default, written once: the dataclass below and the stores' constructors read
# it from here.
DEFAULTS: dict[str, Any] = {name: default for name, _, _, default in _SPECS}
OPTION_ENV_VARS: dict[str, str] = {env.lower(): env for _, env, _, _ in _SPECS}
# Setting field -> its environment variable, in the order docs/settings.md's tables list them.
SETTING_VARS: dict[str, str] = {name: env for name, env, _, _ in _SPECS}
# Settings whose value is a secret: shown as set or not, never printed.
SECRET_SETTINGS = frozenset({"llm_api_key", "dashboard_token", "mcp_token"})
# Where the add-on's options are read from instead of /data/options.json (for trying an
# options file outside the add-on, and for the tests that start the real program with one).
OPTIONS_FILE_VAR = "MEMORY_OPTIONS_FILE"


@dataclass(frozen=True)
class Settings:
    """Where the stores live and the limits they keep."""

    is_addon: bool = False
    data_dir: Path = field(
        default_factory=lambda: _standalone_paths(STANDALONE_DATA_DIR)["data_dir"]
    )
    memory_file: Path = field(
        default_factory=lambda: _standalone_paths(STANDALONE_DATA_DIR)["memory_file"]
    )
    conversation_file: Path = field(
        default_factory=lambda: _standalone_paths(STANDALONE_DATA_DIR)["conversation_file"]
    )
    review_file: Path = field(
        default_factory=lambda: _standalone_paths(STANDALONE_DATA_DIR)["review_file"]
    )
    skills_dir: Path = field(
        default_factory=lambda: _standalone_paths(STANDALONE_DATA_DIR)["skills_dir"]
    )
    memory_max_items: int = DEFAULTS["memory_max_items"]
    memory_max_chars: int = DEFAULTS["memory_max_chars"]
    conversation_max_turns: int = DEFAULTS["conversation_max_turns"]
    conversation_max_chars: int = DEFAULTS["conversation_max_chars"]
    conversation_max_age_days: int = DEFAULTS["conversation_max_age_days"]
    memory_stale_days: int = DEFAULTS["memory_stale_days"]
    review_mode: str = DEFAULTS["review_mode"]
    llm_provider: str = DEFAULTS["llm_provider"]
    llm_model: str = DEFAULTS["llm_model"]
    llm_base_url: str = DEFAULTS["llm_base_url"]
    llm_api_key: str = DEFAULTS["llm_api_key"]
    llm_timeout: int = DEFAULTS["llm_timeout"]  # seconds a whole call may take
    llm_max_reply_bytes: int = DEFAULTS["llm_max_reply_bytes"]  # read no further
    ha_ai_task_entity: str = DEFAULTS["ha_ai_task_entity"]  # e.g. ai_task.ollama_ai_task
    llm_pairs_per_scan: int = DEFAULTS["llm_pairs_per_scan"]  # pairs one attention scan asks
    llm_tokens_per_scan: int = DEFAULTS["llm_tokens_per_scan"]  # prompt tokens, estimated
    llm_seconds_per_scan: int = DEFAULTS["llm_seconds_per_scan"]  # no new request after
    max_facts_per_thread: int = DEFAULTS["max_facts_per_thread"]  # facts one run may propose
    auto_extract: bool = DEFAULTS["auto_extract"]  # the server extracts due threads itself
    auto_extract_every: int = DEFAULTS["auto_extract_every"]  # seconds between its looks
    lock_timeout: int = DEFAULTS["lock_timeout"]
    theme: str = DEFAULTS["theme"]
    language: str = DEFAULTS["language"]
    context_window: int = DEFAULTS[
        "context_window"
    ]  # tokens the model takes; the prompt preview's gauge
    dashboard_token: str = DEFAULTS["dashboard_token"]
    allow_direct_access: bool = DEFAULTS["allow_direct_access"]
    admins_see_all: bool = DEFAULTS["admins_see_all"]
    trusted_proxies: tuple[str, ...] = DEFAULTS["trusted_proxies"]
    # The household's IANA timezone: "until Friday" ends at midnight there.
    timezone: str = DEFAULTS["timezone"]
    data_folder: str = DEFAULTS["data_folder"]
    mcp_trusted: str = DEFAULTS["mcp_trusted"]
    mcp_token: str = DEFAULTS["mcp_token"]
    mcp_token_file: str = DEFAULTS["mcp_token_file"]
    mcp_default_person: str = DEFAULTS["mcp_default_person"]
    mcp_allowed_hosts: str = DEFAULTS["mcp_allowed_hosts"]
    server_connections: int = DEFAULTS["server_connections"]
    server_connections_per_client: int = DEFAULTS["server_connections_per_client"]
    server_idle_timeout: int = DEFAULTS["server_idle_timeout"]  # seconds without a byte
    server_request_timeout: int = DEFAULTS["server_request_timeout"]  # seconds for a request
    supervisor_url: str = DEFAULTS["supervisor_url"]
    # The add-on's private folder (where options.json is) when memory_data_dir moved the
    # stores elsewhere: what was there moves on the first start (webapp.relocate).
    moved_from: Path | None = None

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        options_file: Path | None = None,
        cwd: Path | None = None,
    ) -> Settings:
        """Build settings from ``environ`` (default ``os.environ``) and the add-on options file."""
        env = dict(os.environ if environ is None else environ)
        if options_file is None:
            options_file = Path(env[OPTIONS_FILE_VAR]) if env.get(OPTIONS_FILE_VAR) else None
        options_path = ADDON_OPTIONS_FILE if options_file is None else Path(options_file)
        is_addon = bool(env.get("SUPERVISOR_TOKEN")) or options_path.exists()
        values: dict[str, Any] = {}
        options = _read_options(options_path) if options_path.exists() else {}
        sources: dict[str, str] = {}
        for name, var, kind, default in _SPECS:
            raw: Any = default
            source = var
            option_key = var.lower()
            if option_key in options and options[option_key] is not None:
                raw, source = options[option_key], f"{option_key} in {options_path}"
            if env.get(var, "") != "":
                raw, source = env[var], var
            values[name] = _coerce(raw, kind, source) if raw is not default else default
            sources[name] = source
        folder = values["data_folder"].strip()
        shared = is_addon and bool(folder) and sources["data_folder"] != "MEMORY_DATA_DIR"
        if shared:
            # An add-on option: a folder under /share (the name alone is enough).
            folder = str(ADDON_SHARE_DIR / folder)
            values["moved_from"] = options_path.parent
        values.update(_paths(env, folder, is_addon, Path.cwd() if cwd is None else Path(cwd)))
        return cls(is_addon=is_addon, **values)

    def public_values(self) -> dict[str, Any]:
        """Every setting by its environment variable, as the program uses it; secrets are
        given as ``"(set)"`` or ``""`` instead of their value."""
        shown: dict[str, Any] = {}
        for name, var in SETTING_VARS.items():
            value = getattr(self, name)
            if name in SECRET_SETTINGS:
                value = "(set)" if value else ""
            elif name == "data_folder":  # the folder used, wherever it was named
                value = str(self.data_dir)
            elif isinstance(value, tuple):
                value = list(value)
            shown[var] = value
        return shown

    def with_data_dir(self, data_dir: str | os.PathLike[str]) -> Settings:
        """The same settings with every store under ``data_dir`` (standalone layout)."""
        paths = _standalone_paths(Path(data_dir))
        current = {f.name: getattr(self, f.name) for f in fields(self)}
        current.update(paths, data_folder=str(data_dir), moved_from=None)
        return Settings(**current)


def _paths(env: Mapping[str, str], folder: str, is_addon: bool, cwd: Path) -> dict[str, Path]:
    if folder:
        paths = _standalone_paths(Path(folder))
    elif is_addon:
        paths = {
            "data_dir": ADDON_DATA_DIR,
            "memory_file": ADDON_DATA_DIR / "memories" / "memories.json",
            "conversation_file": ADDON_DATA_DIR / "conversations" / "conversations.json",
            "review_file": ADDON_DATA_DIR / "memories" / "review.json",
            "skills_dir": ADDON_DATA_DIR / "skills",
        }
    else:
        paths = _standalone_paths(cwd / STANDALONE_DATA_DIR)
    if env.get("MEMORY_SKILLS_DIR"):
        paths["skills_dir"] = Path(env["MEMORY_SKILLS_DIR"])
    return paths


def _standalone_paths(data_dir: Path) -> dict[str, Path]:
    return {
        "data_dir": data_dir,
        "memory_file": data_dir / "memories.json",
        "conversation_file": data_dir / "conversations" / "conversations.json",
        "review_file": data_dir / "review.json",
        "skills_dir": data_dir / "skills",
    }


def _read_options(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # not UTF-8 or JSON, too deep, …
        raise SettingsError(
            f"Cannot read the add-on options file {path}: {exc}",
            code="options_unreadable",
            path=path,
            reason=str(exc),
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(
            f"The add-on options file {path} must hold a JSON object.",
            code="options_not_object",
            path=path,
        )
    return data


def _coerce(raw: Any, kind: Any, source: str) -> Any:
    if kind == "posint":
        return _positive_int(raw, source)
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise SettingsError(
            f"{source} must be true or false, got {raw!r}.",
            code="setting_not_boolean",
            source=source,
            value=repr(raw),
        )
    if kind == "timezone":
        return _timezone(raw, source)
    if kind == "list":
        items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
        return tuple(str(item).strip() for item in items if str(item).strip())
    if isinstance(kind, tuple):
        # Case does not matter (``ZH-hant``, ``Dark``); the value kept is the choice as spelled
        # in the list, so ``zh-Hant`` stays ``zh-Hant``.
        text = str(raw).strip().lower()
        for choice in kind:
            if choice.lower() == text:
                return choice
        raise SettingsError(
            f"{source} must be one of {', '.join(kind)}; got {raw!r}.",
            code="setting_not_choice",
            source=source,
            choices=kind,
            value=repr(raw),
        )
    return str(raw)


def _timezone(raw: Any, source: str) -> str:
    """An IANA timezone name the system knows (``Europe/Berlin``, ``Asia/Taipei``, ``UTC``)."""
    name = str(raw).strip()
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise SettingsError(
            f"{source} must be a timezone name such as Europe/Berlin or Asia/Taipei, got {raw!r}.",
            code="setting_not_timezone",
            source=source,
            value=repr(raw),
        ) from None
    return name


def _positive_int(raw: Any, source: str) -> int:
    if isinstance(raw, bool):
        raise _not_positive(raw, source)
    if isinstance(raw, int):
        value = raw
    else:
        text = str(raw).strip()
        if not text.isdigit() or not text.isascii():
            raise _not_positive(raw, source)
        value = int(text)
    if value <= 0:
        raise _not_positive(raw, source)
    return value


def _not_positive(raw: Any, source: str) -> SettingsError:
    return SettingsError(
        f"{source} must be a positive integer, got {raw!r}.",
        code="setting_not_positive",
        source=source,
        value=repr(raw),
    )


# ---- access tokens: what counts as one strong enough to guard the dashboard and MCP over HTTP


class UnsafeBindError(SettingsError):
    """Listening beyond this machine without an access token would expose every memory."""

    code = "setting_invalid"  # no token at all (the server's own check)
    codes = ("setting_invalid", "token_blank", "token_repetitive")  # a weak one


MIN_TOKEN_LENGTH = 16
MIN_TOKEN_DISTINCT = 8  # different characters among them: not "aaaaaaaaaaaaaaaa"
# Letters that show as nothing but are not spaces (Hangul fillers, the blank braille pattern).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Controls, format characters, separators, and combining marks (which only decorate the
# character before them, or nothing).
_NOT_COUNTED = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Mc", "Me"})
BLANK_NOTE = "spaces, invisible characters and combining marks do not count"
MAKE_ONE = '`python3 -c "import secrets; print(secrets.token_urlsafe(32))"`'


def counted_characters(token: str) -> str:
    """The characters of ``token`` worth guessing, after Unicode normalisation (NFKC: "é" as
    one letter or as "e" and its accent is one, full-width "Ａ" is "A"): spaces, controls,
    invisible characters (zero-width space, no-break space, Hangul filler…) and combining
    marks are not."""
    return "".join(
        c
        for c in unicodedata.normalize("NFKC", token)
        if not c.isspace()
        and c not in _BLANK_LETTERS
        and unicodedata.category(c) not in _NOT_COUNTED
    )


def token_problem(token: str, where: str, refusing: str = "") -> SettingsError | None:
    """The error for a token too weak to guard anything, or None: fewer than
    MIN_TOKEN_LENGTH characters that count (``counted_characters``), or fewer than
    MIN_TOKEN_DISTINCT different ones among them. ``where`` names the setting that holds
    it; ``refusing`` starts the sentence saying what the server will not do."""
    counted = counted_characters(token)
    distinct = len(set(counted))
    kind = UnsafeBindError if refusing else SettingsError
    if len(counted) < MIN_TOKEN_LENGTH:
        problem = (
            f"the access token {where} has only {len(counted)} visible characters of "
            f"{len(token)} ({BLANK_NOTE}); use at least {MIN_TOKEN_LENGTH} characters, e.g. from "
            f"{MAKE_ONE}."
        )
        code, values = "token_blank", {"visible": len(counted), "least": MIN_TOKEN_LENGTH}
    elif distinct < MIN_TOKEN_DISTINCT:
        problem = (
            f"the access token {where} has only {distinct} different characters; use at "
            f"least {MIN_TOKEN_DISTINCT} different ones (a random one, e.g. from {MAKE_ONE})."
        )
        code, values = "token_repetitive", {"distinct": distinct, "least": MIN_TOKEN_DISTINCT}
    else:
        return None
    message = refusing + problem if refusing else problem[0].upper() + problem[1:]
    return kind(message, code=code, source=where, **values)
