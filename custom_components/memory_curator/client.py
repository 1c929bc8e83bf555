"""The add-on's Assist API v1 over HTTP (docs/assist-api.md), with Home Assistant's aiohttp
session: one method per endpoint, and one exception per way a call can fail."""

from __future__ import annotations

from typing import Any

import aiohttp

from .const import API_VERSION, CALL_TIMEOUT, SERVICE


class AssistApiError(Exception):
    """A call to the add-on failed; ``code`` says how (the add-on's error code when it gave one)."""

    def __init__(self, code: str, message: str = "", status: int | None = None) -> None:
        super().__init__(message or code)
        self.code = code
        self.status = status


class CannotConnect(AssistApiError):
    """The add-on did not answer (down, restarting, wrong address, or too slow)."""


class InvalidAuth(AssistApiError):
    """The add-on refused the caller (401): no token where one is needed, or a wrong one."""


class NotMemoryCurator(AssistApiError):
    """Something answered, but not Memory Curator's Assist API (another service, a page)."""


class Outdated(AssistApiError):
    """The add-on has no Assist API, or none this integration speaks; ``code`` is the repair
    issue to raise: ``addon_outdated`` or ``integration_outdated``."""


class NoAssistApi(Outdated):
    """Nothing at the Assist API's path (404 without its answer): an add-on older than 0.6, or
    another service."""


def _outdated(supported: Any) -> str:
    """Which side to update, by the versions the add-on says it serves."""
    newer = isinstance(supported, list) and any(
        isinstance(v, int) and v > API_VERSION for v in supported
    )
    return "integration_outdated" if newer else "addon_outdated"


class AssistClient:
    """Calls ``<url>/api/assist/v1/...`` with the token, when there is one."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str | None) -> None:
        self._session = session
        self.url = url.rstrip("/")
        self._token = token or None

    async def info(self) -> dict[str, Any]:
        """What the add-on serves; Outdated when it is not API version 1."""
        try:
            body = await self._call("GET", "info", None, CALL_TIMEOUT)
        except NotMemoryCurator as err:
            if err.status == 404:
                raise NoAssistApi("addon_outdated", "The add-on has no Assist API", 404) from err
            raise
        if body.get("service") != SERVICE:
            raise NotMemoryCurator("not_memory_curator", "Not Memory Curator's Assist API")
        supported = body.get("supported")
        if not isinstance(supported, list) or API_VERSION not in supported:
            raise Outdated(_outdated(supported), f"The add-on serves {supported!r}")
        return body

    async def prompt(self, context: dict[str, Any], timeout: float) -> str:
        body = await self._call("POST", "prompt", {"context": context}, timeout)
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise NotMemoryCurator("not_memory_curator", "The prompt answer has no prompt")
        return prompt

    async def tool(
        self, name: str, context: dict[str, Any], arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """The tool's answer: ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``."""
        payload = {"context": context, "arguments": arguments}
        return await self._call("POST", f"tools/{name}", payload, CALL_TIMEOUT)

    async def exchange(self, payload: dict[str, Any]) -> dict[str, Any]:
        return await self._call("POST", "exchanges", payload, CALL_TIMEOUT)

    async def _call(
        self, method: str, path: str, payload: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        address = f"{self.url}/api/assist/v{API_VERSION}/{path}"
        try:
            async with self._session.request(
                method,
                address,
                json=payload,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                allow_redirects=False,
            ) as response:
                status = response.status
                try:
                    body = await response.json(content_type=None)
                except ValueError:
                    body = None
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            # ValueError: a URL aiohttp cannot use
            raise CannotConnect("cannot_connect", str(err) or type(err).__name__) from err
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("code") == "api_version":
            # an add-on that does not serve this version (answered in its own version's shape)
            assert isinstance(body, dict)
            message = str(error.get("message") or "")
            raise Outdated(_outdated(body.get("supported")), message, status)
        if not isinstance(body, dict) or body.get("api") != API_VERSION:
            if status == 401:
                raise InvalidAuth("invalid_auth", status=status)
            if status in (502, 503, 504):  # a proxy in front of an add-on that is restarting
                raise CannotConnect("cannot_connect", f"HTTP {status}", status)
            raise NotMemoryCurator("not_memory_curator", f"HTTP {status}", status)
        if status >= 400:
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            code = str(error.get("code") or "error")
            message = str(error.get("message") or f"HTTP {status}")
            if status == 401:
                raise InvalidAuth(code, message, status)
            if status >= 500:
                raise CannotConnect(code, message, status)
            raise AssistApiError(code, message, status)
        return body
