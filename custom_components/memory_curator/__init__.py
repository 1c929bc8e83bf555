"""Memory Curator for Home Assistant's Assist: the speaker's memories in the prompt, tools to
remember, forget and recall, and every conversation fed to the add-on (docs: DOCS.md, "Make
Assist remember"; the wire contract: docs/assist-api.md)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryError
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers import llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession

from .client import (
    AssistApiError,
    AssistClient,
    CannotConnect,
    InvalidAuth,
    NotMemoryCurator,
    Outdated,
)
from .const import CONF_TOKEN, CONF_URL, DOMAIN
from .feed import ChatLogFeeder
from .llm_api import MemoryCuratorAPI

_LOGGER = logging.getLogger(__name__)
OUTDATED_ISSUES = ("addon_outdated", "integration_outdated")


@dataclass(slots=True)
class MemoryCuratorData:
    client: AssistClient
    feeder: ChatLogFeeder
    api_id: str


MemoryCuratorConfigEntry = ConfigEntry[MemoryCuratorData]


def api_id_for(hass: HomeAssistant, entry: ConfigEntry) -> str:
    """``memory_curator`` for the first add-on; a second one gets an id of its own."""
    taken = {api.id for api in llm.async_get_apis(hass)}
    return DOMAIN if DOMAIN not in taken else f"{DOMAIN}-{entry.entry_id}"


async def async_check_version(
    hass: HomeAssistant, entry: ConfigEntry, client: AssistClient
) -> bool:
    """Read ``info``; an add-on without the Assist API v1 raises a repair issue naming the fix
    (update the add-on, or the integration), removed again once it answers. False when the add-on
    does not serve version 1; True when it does or could not be asked (down); InvalidAuth when
    the token is refused."""
    try:
        await client.info()
    except Outdated as err:
        for issue in OUTDATED_ISSUES:
            if issue != err.code:
                ir.async_delete_issue(hass, DOMAIN, f"{issue}_{entry.entry_id}")
        ir.async_create_issue(
            hass,
            DOMAIN,
            f"{err.code}_{entry.entry_id}",
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key=err.code,
            translation_placeholders={"url": client.url},
        )
        return False
    except NotMemoryCurator:
        ir.async_create_issue(
            hass,
            DOMAIN,
            f"addon_outdated_{entry.entry_id}",
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="addon_outdated",
            translation_placeholders={"url": client.url},
        )
        return False
    except CannotConnect:
        return True
    except InvalidAuth:
        raise
    except AssistApiError as err:  # e.g. 403: this Host refused; the calls will say so too
        _LOGGER.warning("Memory Curator at %s refused the version check: %s", client.url, err)
        return True
    for issue in OUTDATED_ISSUES:
        ir.async_delete_issue(hass, DOMAIN, f"{issue}_{entry.entry_id}")
    return True


async def async_setup_entry(hass: HomeAssistant, entry: MemoryCuratorConfigEntry) -> bool:
    client = AssistClient(
        async_get_clientsession(hass), entry.data[CONF_URL], entry.data.get(CONF_TOKEN)
    )
    try:
        served = await async_check_version(hass, entry, client)
    except InvalidAuth as err:
        raise ConfigEntryError(translation_domain=DOMAIN, translation_key="invalid_auth") from err
    if not served:
        _LOGGER.error(
            "The Memory Curator add-on at %s does not serve the Assist API v1: see Repairs",
            client.url,
        )

    async def check() -> bool:
        return await async_check_version(hass, entry, client)

    feeder = ChatLogFeeder(hass, entry, client, check)
    await feeder.async_start()
    api_id = api_id_for(hass, entry)
    api = MemoryCuratorAPI(
        hass=hass, id=api_id, name="Memory Curator", client=client, feeder=feeder
    )
    entry.async_on_unload(llm.async_register_api(hass, api))
    entry.runtime_data = MemoryCuratorData(client, feeder, api_id)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: MemoryCuratorConfigEntry) -> bool:
    await entry.runtime_data.feeder.async_stop()
    return True
