"""Diagnostics: the entry without its token, and how the conversation feed is doing."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from . import MemoryCuratorConfigEntry
from .const import CONF_TOKEN

TO_REDACT = {CONF_TOKEN}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: MemoryCuratorConfigEntry
) -> dict[str, Any]:
    feeder = entry.runtime_data.feeder
    return {
        "entry": {
            "data": async_redact_data(dict(entry.data), TO_REDACT),
            "options": dict(entry.options),
        },
        "llm_api_id": entry.runtime_data.api_id,
        "feed": {
            "queued": feeder.queued,
            "dropped": feeder.dropped,
            "rejected": feeder.rejected,
            "sent": feeder.sent,
            "expired": feeder.expired,
            "last_error": feeder.last_error,
        },
    }
