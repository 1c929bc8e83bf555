"""Adding Memory Curator: found by Supervisor discovery (the add-on announces
``{"url": "http://<hostname>:8099", "api": 1}``) or typed in (URL and an optional token). Both
ask the add-on's ``info`` first; a wrong address, token or service is a form error."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import probatio
from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    OptionsFlow,
)
from homeassistant.core import callback
from homeassistant.helpers import selector
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.service_info.hassio import HassioServiceInfo

from .client import (
    AssistApiError,
    AssistClient,
    CannotConnect,
    InvalidAuth,
    NoAssistApi,
    NotMemoryCurator,
    Outdated,
)
from .const import (
    CONF_EXCLUDE_AGENTS,
    CONF_EXCLUDE_DEVICES,
    CONF_FEED,
    CONF_TOKEN,
    CONF_URL,
    DOMAIN,
)

TITLE = "Memory Curator"


def _origin(url: str) -> str:
    """The add-on's identity: scheme, host and port (the same add-on is added once)."""
    parts = urlsplit(url.strip())
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


async def _validate(flow: ConfigFlow, url: str, token: str | None) -> str | None:
    """The form error for this add-on, or None when it answers as Memory Curator v1."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "invalid_url"
    client = AssistClient(async_get_clientsession(flow.hass), url, token)
    try:
        await client.info()
    except CannotConnect:
        return "cannot_connect"
    except InvalidAuth:
        return "invalid_auth"
    except NoAssistApi:
        return "not_memory_curator"
    except Outdated as err:
        return err.code
    except NotMemoryCurator:
        return "not_memory_curator"
    except AssistApiError as err:
        return "host_refused" if err.code == "forbidden" else "cannot_connect"
    return None


class MemoryCuratorConfigFlow(ConfigFlow, domain=DOMAIN):
    VERSION = 1

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> MemoryCuratorOptionsFlow:
        return MemoryCuratorOptionsFlow()

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        errors: dict[str, str] = {}
        if user_input is not None:
            url = user_input[CONF_URL].strip().rstrip("/")
            token = (user_input.get(CONF_TOKEN) or "").strip() or None
            if (error := await _validate(self, url, token)) is None:
                await self.async_set_unique_id(_origin(url))
                self._abort_if_unique_id_configured(updates={CONF_URL: url, CONF_TOKEN: token})
                self._data = {CONF_URL: url, CONF_TOKEN: token}
                return await self._async_finish()
            errors["base"] = error
        schema = probatio.Schema(
            {
                probatio.Required(
                    CONF_URL, default=(user_input or {}).get(CONF_URL, "http://")
                ): selector.TextSelector(selector.TextSelectorConfig(type="url")),
                probatio.Optional(probatio.Secret(CONF_TOKEN)): selector.TextSelector(
                    selector.TextSelectorConfig(type="password")
                ),
            }
        )
        return self.async_show_form(step_id="user", data_schema=schema, errors=errors)

    async def async_step_hassio(self, discovery_info: HassioServiceInfo) -> ConfigFlowResult:
        config = discovery_info.config
        url = str(config.get("url") or "").rstrip("/")
        if config.get("api") != 1 or not url:
            return self.async_abort(reason="not_memory_curator")
        await self.async_set_unique_id(_origin(url))
        self._abort_if_unique_id_configured(updates={CONF_URL: url})
        self._data = {CONF_URL: url, CONF_TOKEN: None}
        self.context["title_placeholders"] = {"name": discovery_info.name or TITLE}
        return await self.async_step_hassio_confirm()

    async def async_step_hassio_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        errors: dict[str, str] = {}
        if user_input is not None:
            error = await _validate(self, self._data[CONF_URL], None)
            if error is None:
                return await self._async_finish()
            errors["base"] = error
        return self.async_show_form(
            step_id="hassio_confirm",
            description_placeholders={"url": self._data[CONF_URL]},
            errors=errors,
        )

    async def _async_finish(self) -> ConfigFlowResult:
        """Warn first when HA's own ``mcp`` integration already reaches the same add-on."""
        if self._mcp_same_host():
            return await self.async_step_mcp_too()
        return self.async_create_entry(title=TITLE, data=self._data)

    async def async_step_mcp_too(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        if user_input is not None:
            return self.async_create_entry(title=TITLE, data=self._data)
        return self.async_show_form(
            step_id="mcp_too", description_placeholders={"url": self._data[CONF_URL]}
        )

    def _mcp_same_host(self) -> bool:
        host = urlsplit(self._data[CONF_URL]).hostname
        return any(
            urlsplit(str(entry.data.get("url", ""))).hostname == host
            for entry in self.hass.config_entries.async_entries("mcp")
        )


class MemoryCuratorOptionsFlow(OptionsFlow):
    """Feed conversations or not, and which agents and devices never feed the memory."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        if user_input is not None:
            return self.async_create_entry(data=user_input)
        options = self.config_entry.options
        schema = probatio.Schema(
            {
                probatio.Required(CONF_FEED, default=options.get(CONF_FEED, True)): bool,
                probatio.Optional(
                    CONF_EXCLUDE_AGENTS, default=options.get(CONF_EXCLUDE_AGENTS, [])
                ): selector.EntitySelector(
                    selector.EntitySelectorConfig(domain="conversation", multiple=True)
                ),
                probatio.Optional(
                    CONF_EXCLUDE_DEVICES, default=options.get(CONF_EXCLUDE_DEVICES, [])
                ): selector.DeviceSelector(selector.DeviceSelectorConfig(multiple=True)),
            }
        )
        return self.async_show_form(step_id="init", data_schema=schema)
