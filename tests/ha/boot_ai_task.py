"""Run inside the Home Assistant chroot with its own Python (tests/ha/test_ai_task_provider.py):
boot Home Assistant with ``http`` on 127.0.0.1 and its REST ``api``, add an ``ollama`` entry
with an AI Task subentry (the model the fake server lists), create an administrator with a
long-lived access token, print ``READY {json}`` (the token and the AI Task entity), then keep
running until the file ``CONFIG_DIR/done`` appears. Prints ``RESULT {json}`` at the end.

    /opt/ha/bin/python boot_ai_task.py CONFIG_DIR OLLAMA_URL MODEL
"""

import asyncio
import json
import os
import sys
from datetime import timedelta
from typing import Any


async def scenario(config_dir: str, ollama_url: str, model: str) -> dict[str, Any]:
    from homeassistant import bootstrap, runner
    from homeassistant.auth.const import GROUP_ID_ADMIN
    from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN
    from homeassistant.helpers import entity_registry

    config = runner.RuntimeConfig(config_dir=config_dir, skip_pip=True, log_no_color=True)
    hass = await bootstrap.async_setup_hass(config)
    assert hass is not None, "Home Assistant did not set up"
    await hass.async_start()
    result: dict[str, Any] = {}
    try:
        flows = hass.config_entries.flow
        step = await flows.async_init("ollama", context={"source": "user"})
        step = await flows.async_configure(step["flow_id"], {"url": ollama_url})
        assert step["type"] == "create_entry", step
        entry = step["result"]
        await hass.async_block_till_done()
        subentries = hass.config_entries.subentries
        step = await subentries.async_init(
            (entry.entry_id, "ai_task_data"), context={"source": "user"}
        )
        step = await subentries.async_configure(
            step["flow_id"], {"name": "Memory AI Task", "model": model}
        )
        assert step["type"] == "create_entry", step
        await hass.async_block_till_done()
        [entity] = [
            e.entity_id
            for e in entity_registry.async_get(hass).entities.values()
            if e.platform == "ollama" and e.domain == "ai_task"
        ]
        user = await hass.auth.async_create_user("Memory test", group_ids=[GROUP_ID_ADMIN])
        refresh = await hass.auth.async_create_refresh_token(
            user,
            client_name="Memory Curator test",
            token_type=TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
            access_token_expiration=timedelta(days=1),
        )
        token = hass.auth.async_create_access_token(refresh)
        print("READY " + json.dumps({"token": token, "entity": entity}), flush=True)
        result["entity"] = entity
        done = os.path.join(config_dir, "done")
        for _ in range(2400):  # 240 s at most
            if os.path.exists(done):
                break
            await asyncio.sleep(0.1)
        state = hass.states.get(entity)
        result["entity_state"] = state.state if state else None
    finally:
        await hass.async_stop()
    return result


def main() -> None:
    config_dir, ollama_url, model = sys.argv[1:4]
    result = asyncio.run(scenario(config_dir, ollama_url, model))
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
