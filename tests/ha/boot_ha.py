"""Run inside the Home Assistant chroot with its own Python (tests/ha): boot Home Assistant on
a configuration folder, add the ``mcp`` integration through its config flow (discovered, as
the Supervisor hands Home Assistant the add-on's announcement), an ``ollama`` entry and
conversation agent with that MCP server's API, and have one conversation turn. Prints one line, ``RESULT {json}``: what Home Assistant saw.

    /opt/ha/bin/python boot_ha.py CONFIG_DIR MCP_URL OLLAMA_URL MODEL
"""

import asyncio
import dataclasses
import json
import sys
from typing import Any


async def scenario(config_dir: str, mcp_url: str, ollama_url: str, model: str) -> dict[str, Any]:
    from homeassistant import bootstrap, runner
    from homeassistant.components import conversation
    from homeassistant.core import Context
    from homeassistant.helpers import entity_registry, llm
    from homeassistant.helpers.service_info.hassio import HassioServiceInfo

    config = runner.RuntimeConfig(config_dir=config_dir, skip_pip=True, log_no_color=True)
    hass = await bootstrap.async_setup_hass(config)
    assert hass is not None, "Home Assistant did not set up"
    await hass.async_start()
    result: dict[str, Any] = {}
    try:
        flows = hass.config_entries.flow
        # as the Supervisor hands Home Assistant the add-on's announcement (service "mcp"):
        # the mcp integration's discovery step, then its confirmation
        discovered = HassioServiceInfo(
            config={"url": mcp_url}, name="Memory Curator", slug="memory_curator", uuid="feed"
        )
        step = await flows.async_init("mcp", context={"source": "hassio"}, data=discovered)
        result["mcp_discovery_step"] = step.get("step_id")
        step = await flows.async_configure(step["flow_id"], {})
        result["mcp_flow"] = {"type": str(step["type"]), "errors": step.get("errors")}
        assert step["type"] == "create_entry", step
        mcp_entry = step["result"]
        await hass.async_block_till_done()
        result["tools"] = {
            tool.name: dataclasses.asdict(tool.annotations) for tool in mcp_entry.runtime_data.data
        }
        [api] = [api for api in llm.async_get_apis(hass) if api.id.startswith("mcp-")]

        step = await flows.async_init("ollama", context={"source": "user"})
        step = await flows.async_configure(step["flow_id"], {"url": ollama_url})
        assert step["type"] == "create_entry", step
        ollama_entry = step["result"]
        await hass.async_block_till_done()
        subentries = hass.config_entries.subentries
        step = await subentries.async_init(
            (ollama_entry.entry_id, "conversation"), context={"source": "user"}
        )
        step = await subentries.async_configure(
            step["flow_id"], {"name": "Memory test", "model": model, "llm_hass_api": [api.id]}
        )
        assert step["type"] == "create_entry", step
        await hass.async_block_till_done()
        [agent] = [
            e.entity_id
            for e in entity_registry.async_get(hass).entities.values()
            if e.platform == "ollama" and e.domain == "conversation"
        ]
        answer = await conversation.async_converse(
            hass, "What do you remember about my plants?", None, Context(), "en", agent
        )
        response = answer.response
        result["answer"] = {
            "type": str(response.response_type),
            "speech": response.speech.get("plain", {}).get("speech"),
            "error_code": str(response.error_code) if response.error_code else None,
        }
    finally:
        await hass.async_stop()
    return result


def main() -> None:
    config_dir, mcp_url, ollama_url, model = sys.argv[1:5]
    result = asyncio.run(scenario(config_dir, mcp_url, ollama_url, model))
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
