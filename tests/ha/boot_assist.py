"""Run inside the Home Assistant chroot with its own Python (tests/ha/test_assist.py): boot
Home Assistant with the Memory Curator integration in its ``custom_components/`` and go through
every phase of the Assist scenario in one boot. Prints one line, ``RESULT {json}``.

    /opt/ha/bin/python boot_assist.py '{"config_dir", "url", "token", "ollama", "model",
                                        "control", "bench_turns"}'
"""

import asyncio
import json
import sys
import time
from typing import Any

DOMAIN = "memory_curator"
FEED_WAIT = 90  # seconds for the queue to empty once the memory server is back


async def settled(feeder: Any) -> None:
    """Wait until the integration has sent every exchange it holds (the last turn's is queued
    a moment after the turn ends)."""
    deadline = time.monotonic() + FEED_WAIT
    await asyncio.sleep(1)
    while feeder.queued and time.monotonic() < deadline:
        await asyncio.sleep(0.2)


async def scenario(cfg: dict[str, Any]) -> dict[str, Any]:
    import probatio
    from homeassistant import bootstrap, runner
    from homeassistant.components import ai_task, conversation
    from homeassistant.core import Context
    from homeassistant.helpers import device_registry as dr
    from homeassistant.helpers import entity_registry as er
    from homeassistant.helpers import issue_registry as ir
    from homeassistant.helpers import llm
    from homeassistant.helpers.aiohttp_client import async_get_clientsession
    from homeassistant.helpers.service_info.hassio import HassioServiceInfo

    config = runner.RuntimeConfig(config_dir=cfg["config_dir"], skip_pip=True, log_no_color=True)
    hass = await bootstrap.async_setup_hass(config)
    assert hass is not None, "Home Assistant did not set up"
    await hass.async_start()
    session = async_get_clientsession(hass)
    result: dict[str, Any] = {}

    async def control(path: str, body: dict[str, Any] | None = None) -> None:
        async with session.post(cfg["control"] + path, json=body or {}) as response:
            assert response.status == 200, await response.text()

    flows = hass.config_entries.flow
    try:
        alice = await hass.auth.async_create_user("Alice")
        bob = await hass.auth.async_create_user("Bob")
        result["users"] = {"alice": alice.id, "bob": bob.id}
        await control("/link", {"user_id": alice.id, "person": "Alice"})
        await control("/link", {"user_id": bob.id, "person": "Bob"})

        # -- the config flow by URL: three wrong ones, then the right URL with its token
        errors = {}
        for label, given in {
            "closed": {"url": "http://127.0.0.1:9"},
            "wrong_token": {"url": cfg["url"], "token": "not-the-token-" + "x" * 30},
            "another_service": {"url": cfg["ollama"]},
            "not_a_url": {"url": "kitchen"},
            "forbidden_host": {"url": cfg["ollama"] + "/forbidden"},
        }.items():
            step = await flows.async_init(DOMAIN, context={"source": "user"})
            step = await flows.async_configure(step["flow_id"], given)
            errors[label] = {"type": str(step["type"]), "errors": step.get("errors")}
            flows.async_abort(step["flow_id"])
        result["flow_errors"] = errors
        step = await flows.async_init(DOMAIN, context={"source": "user"})
        step = await flows.async_configure(
            step["flow_id"], {"url": cfg["url"], "token": cfg["token"]}
        )
        result["by_url"] = {"type": str(step["type"]), "token_kept": None}
        entry = step["result"]
        await hass.async_block_till_done()
        result["by_url"]["token_kept"] = entry.data.get("token") == cfg["token"]
        result["by_url"]["state"] = str(entry.state)
        result["by_url"]["apis"] = sorted(api.id for api in llm.async_get_apis(hass))
        from custom_components.memory_curator.diagnostics import (
            async_get_config_entry_diagnostics,
        )

        result["diagnostics_by_url"] = await async_get_config_entry_diagnostics(hass, entry)
        await hass.config_entries.async_remove(entry.entry_id)

        # -- HA's own mcp integration on the same server, then discovery: the warning step
        step = await flows.async_init("mcp", context={"source": "user"})
        step = await flows.async_configure(step["flow_id"], {"url": cfg["url"] + "/mcp"})
        result["mcp_flow"] = str(step["type"])
        await hass.async_block_till_done()
        discovered = HassioServiceInfo(
            config={"url": cfg["url"], "api": 1},
            name="Memory Curator",
            slug="memory_curator",
            uuid="0123456789abcdef",
        )
        step = await flows.async_init(DOMAIN, context={"source": "hassio"}, data=discovered)
        steps = [step.get("step_id")]
        step = await flows.async_configure(step["flow_id"], {})
        steps.append(step.get("step_id"))
        step = await flows.async_configure(step["flow_id"], {})
        result["discovery"] = {"steps": steps, "type": str(step["type"])}
        entry = step["result"]
        await hass.async_block_till_done()
        again = await flows.async_init(DOMAIN, context={"source": "hassio"}, data=discovered)
        result["discovery"]["again"] = again.get("reason")
        feeder = entry.runtime_data.feeder

        # -- an ollama agent with the "Memory Curator" API, one with Assist only, an AI Task
        step = await flows.async_init("ollama", context={"source": "user"})
        step = await flows.async_configure(step["flow_id"], {"url": cfg["ollama"]})
        ollama_entry = step["result"]
        await hass.async_block_till_done()
        subentries = hass.config_entries.subentries
        for kind, name, apis in (
            ("conversation", "Memory agent", [DOMAIN]),
            ("conversation", "Assist agent", ["assist"]),
            ("ai_task_data", "Memory task", None),
        ):
            step = await subentries.async_init(
                (ollama_entry.entry_id, kind), context={"source": "user"}
            )
            assert step["type"] == "form", (kind, step)
            given = {"name": name, "model": cfg["model"]}
            if apis is not None:
                given["llm_hass_api"] = apis
            step = await subentries.async_configure(step["flow_id"], given)
            assert step["type"] == "create_entry", step
            await hass.async_block_till_done()  # the entry reloads with its new subentry
        entities = er.async_get(hass).entities.values()
        by_name = {
            e.original_name or e.name: e.entity_id for e in entities if e.platform == "ollama"
        }
        agents = {
            e.entity_id for e in entities if e.platform == "ollama" and e.domain == "conversation"
        }
        result["entities"] = by_name
        memory_agent = next(a for a in agents if "memory" in a)
        assist_agent = next(a for a in agents if "assist" in a)
        task_entity = next(
            e.entity_id for e in entities if e.platform == "ollama" and e.domain == "ai_task"
        )
        device = dr.async_get(hass).async_get_or_create(
            config_entry_id=entry.entry_id,
            identifiers={(DOMAIN, "kitchen-satellite")},
            name="Kitchen satellite",
        )

        turns: dict[str, Any] = {}

        async def turn(label, text, user=None, device_id=None, conversation_id=None, agent=None):
            started = time.perf_counter()
            try:
                answer = await conversation.async_converse(
                    hass,
                    f"[{label}] {text}",
                    conversation_id,
                    Context(user_id=user),
                    "en",
                    agent or memory_agent,
                    device_id=device_id,
                )
            except Exception as err:  # the model failed: Home Assistant ends the turn so
                turns[label] = {"error": type(err).__name__}
                return None
            seconds = time.perf_counter() - started
            turns[label] = {
                "conversation_id": answer.conversation_id,
                "speech": answer.response.speech.get("plain", {}).get("speech"),
                "seconds": seconds,
            }
            return answer.conversation_id

        await turn("A1", "What do you know about me?", alice.id)
        await turn("B1", "What do you know about me?", bob.id)
        await turn("D0", "Good morning. My favourite colour is green.", device_id=device.id)
        # chosen for Alice at once, [D0]'s exchange maybe still on its way: the add-on credits
        # an exchange as the device was when it was said (nobody known here), not on arrival
        await control("/device", {"device_id": device.id, "person": "Alice"})
        await turn("D1", "What is on today?", device_id=device.id)
        await turn("A2", "remember: Prefers oat milk.", alice.id)
        a3 = await turn("A3", "What do I drink?", alice.id)
        await turn("A4", "Anything else? I prefer window seats.", alice.id, conversation_id=a3)

        # -- the memory server is killed while Home Assistant talks, then comes back (a kill
        # between an exchange's turns and its key is tests/test_assist_exchanges.py's)
        await settled(feeder)
        await control("/stop")
        b2 = await turn("B2", "remember: Plays chess on Fridays.", bob.id)
        await turn("B3", "Are you still there?", bob.id, conversation_id=b2)
        await asyncio.sleep(1)
        result["queued_while_down"] = feeder.queued
        # the integration reloaded meanwhile: the queue is kept on disk, and the conversation
        # going on still knows who speaks
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        feeder = entry.runtime_data.feeder
        result["queued_after_reload"] = feeder.queued
        await control("/start")
        task = await ai_task.async_generate_data(
            hass,
            task_name="summary",
            entity_id=task_entity,
            instructions="[T1] Summarise the day.",
            structure=probatio.Schema({probatio.Required("summary"): str}),
        )
        result["ai_task"] = {"conversation_id": task.conversation_id, "data": task.data}
        await turn("B4", "Thanks.", bob.id, conversation_id=b2)
        await settled(feeder)

        # -- an agent without the Memory Curator API is fed too, with nobody known; then the
        # options: that agent excluded, then feeding off
        await turn("N1", "Hello there.", alice.id, agent=assist_agent)
        await settled(feeder)
        options = hass.config_entries.options

        async def set_options(given: dict[str, Any]) -> str:
            step = await options.async_init(entry.entry_id)
            step = await options.async_configure(step["flow_id"], given)
            return str(step["type"])

        result["options"] = [
            await set_options(
                {
                    "feed_conversations": True,
                    "exclude_agents": [assist_agent],
                    "exclude_devices": [device.id],
                }
            )
        ]
        await turn("N2", "Hello again.", alice.id, agent=assist_agent)
        await turn("N4", "Hello, kitchen.", device_id=device.id)
        result["options"].append(await set_options({"feed_conversations": False}))
        await turn("N3", "Anyone there?", alice.id)
        await settled(feeder)
        result["options"].append(await set_options({"feed_conversations": True}))

        # -- recall and forget, each for the person speaking only
        await turn("B5", "recall: cello", bob.id)
        await turn("B6", "forget: allergic to peanuts", bob.id)  # Alice's: not Bob's to forget
        await turn("A5", "forget: allergic to peanuts", alice.id)

        # -- a turn that ends in an error is not fed
        await turn("F1", "fail: what now?", alice.id)
        await settled(feeder)

        # -- Home Assistant calls chat log subscribers without a guard: a fault in the feed
        # must never reach the user's turn
        def broken(*args: Any) -> None:
            raise RuntimeError("a fault in the feed")

        feeder._handle = broken
        await turn("E1", "Is the feed broken?", alice.id)
        del feeder._handle
        result["turns"] = turns

        # -- the add-on refusing this Host (403) for a while: the exchange waits, not dropped
        good = dict(entry.data)
        hass.config_entries.async_update_entry(
            entry, data={**good, "url": cfg["ollama"] + "/forbidden"}
        )
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        await turn("A6", "Is my memory there?", alice.id)
        await asyncio.sleep(2)
        feeder = entry.runtime_data.feeder
        result["refused_host"] = {
            "state": str(entry.state),
            "queued": feeder.queued,
            "rejected": feeder.rejected,
        }
        hass.config_entries.async_update_entry(entry, data=good)
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        feeder = entry.runtime_data.feeder
        await settled(feeder)

        # -- diagnostics of the entry found by discovery (no token): how the feed did
        result["diagnostics"] = await async_get_config_entry_diagnostics(hass, entry)

        # -- an add-on without the Assist API (the fake model's server answers 404): a repair
        # issue at setup, gone once the address is right again
        hass.config_entries.async_update_entry(entry, data={**good, "url": cfg["ollama"]})
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        issues = ir.async_get(hass).issues
        result["issues_outdated"] = [
            {"id": i.issue_id, "key": i.translation_key}
            for i in issues.values()
            if i.domain == DOMAIN
        ]
        # an add-on newer than the integration: the other issue, and the first one goes
        hass.config_entries.async_update_entry(
            entry, data={**good, "url": cfg["ollama"] + "/newer"}
        )
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        result["issues_newer"] = [
            {"id": i.issue_id, "key": i.translation_key}
            for i in issues.values()
            if i.domain == DOMAIN
        ]
        hass.config_entries.async_update_entry(entry, data=good)
        await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        result["issues_after"] = [i.issue_id for i in issues.values() if i.domain == DOMAIN]
        result["entry_state"] = str(entry.state)

        # -- the benchmark: first turns with the Memory Curator API against Assist only
        bench: dict[str, list[float]] = {"memory_curator": [], "assist": []}
        for n in range(cfg["bench_turns"]):
            for name, agent in (("memory_curator", memory_agent), ("assist", assist_agent)):
                label = f"X{n}"
                await turn(label, "Hello.", alice.id, agent=agent)
                bench[name].append(turns.pop(label)["seconds"])
        if cfg["bench_turns"]:
            result["bench"] = bench
    finally:
        await hass.async_stop()
    return result


def main() -> None:
    cfg = json.loads(sys.argv[1])
    sys.path.insert(0, cfg["config_dir"])  # custom_components, as Home Assistant loads it
    result = asyncio.run(scenario(cfg))
    print("RESULT " + json.dumps(result, default=str), flush=True)


if __name__ == "__main__":
    main()
