"""The stores under the Assist API: the exchange keys stay bounded (by age and by count) and
are taken once by threads racing one key; ``people.json``'s added ``devices`` key survives the
writes that know nothing of it, and past its cap only a device nobody chose for goes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from webapp.problems import CodedError
from webapp.stores import exchanges
from webapp.stores.exchanges import ExchangeKeyStore
from webapp.stores.people import MAX_DEVICES, PeopleStore


def test_exchange_keys_older_than_30_days_are_forgotten(tmp_path: Path) -> None:
    path = tmp_path / "assist-exchanges.json"
    path.write_text(
        json.dumps(
            {
                "old": {"at": "2020-01-01T00:00:00.000Z", "conversation": "c"},
                "recent": {"at": "2999-01-01T00:00:00.000Z", "conversation": "c"},
            }
        )
    )
    store = ExchangeKeyStore(path)
    stored: list[str] = []
    assert store.once("new", {"conversation": "c"}, lambda: stored.append("new") is None)
    kept = json.loads(path.read_text())
    assert sorted(kept) == ["new", "recent"] and stored == ["new"]
    assert not store.once("recent", {}, lambda: stored.append("again") is None)
    assert stored == ["new"]


def test_exchange_keys_beyond_the_cap_go_oldest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exchanges, "MAX_KEYS", 3)
    store = ExchangeKeyStore(tmp_path / "assist-exchanges.json")
    for number in range(5):
        assert store.once(f"k{number}", {}, lambda: True)
    assert sorted(json.loads(store.path.read_text())) == ["k2", "k3", "k4"]


def test_threads_racing_one_key_store_it_once_and_a_failed_write_records_nothing(
    tmp_path: Path,
) -> None:
    store = ExchangeKeyStore(tmp_path / "assist-exchanges.json")
    stored: list[int] = []
    start = threading.Barrier(8)

    def send(number: int) -> None:
        start.wait()
        store.once("same", {}, lambda: stored.append(number) is None)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(stored) == 1

    def fails() -> bool:
        raise OSError("disk full")

    with pytest.raises(OSError):
        store.once("failed", {}, fails)
    assert "failed" not in json.loads(store.path.read_text())
    with pytest.raises(CodedError):
        store.once("x" * 201, {}, lambda: True)


def test_devices_survive_writes_that_know_nothing_of_them(tmp_path: Path) -> None:
    people = PeopleStore(tmp_path / "people.json")
    people.seen_device("dev-1", label="Kitchen")
    ana = people.add("Ana", identities=(("ha", "u-ana"),))
    people.seen("ha", "u-zoe", label="Zoe")
    people.rename(ana.id, "Ana Souza")
    data = json.loads(people.path.read_text())
    assert data["devices"]["dev-1"]["label"] == "Kitchen"
    # a reader of the older format finds its keys as they were
    assert set(data) == {"people", "unlinked", "devices"}
    assert [p.name for p in people.people()] == ["Ana Souza"]
    people.choose_device("dev-1", "person", ana.id)
    people.remove(ana.id)
    device = people.device("dev-1")
    assert device is not None and (device.choice, device.person) == ("person", ana.id)


def test_past_the_cap_only_a_device_nobody_chose_for_goes(tmp_path: Path) -> None:
    people = PeopleStore(tmp_path / "people.json")
    people.seen_device("chosen", label="First seen, chosen")
    people.choose_device("chosen", "household")
    for number in range(MAX_DEVICES):
        people.seen_device(f"d{number:03}")
    ids = {d.id for d in people.devices()}
    assert len(ids) == MAX_DEVICES and "chosen" in ids and "d000" not in ids
