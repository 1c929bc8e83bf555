"""The served dashboard guards a loopback server without a login against DNS rebinding."""

from __future__ import annotations

import http.client
from dataclasses import replace

import pytest

from webapp.web.plumbing.serve import allowed_hosts


def get(server, host_header: str) -> tuple[int, str]:
    port = int(server.url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/memories/", headers={"Host": host_header})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_a_loopback_server_answers_only_to_this_machines_names(live_server):
    live_server.memories().add("A private fact")
    for name in ("127.0.0.1:{port}", "localhost:{port}", "LOCALHOST"):
        status, body = get(live_server, name.format(port=live_server.url.rsplit(":", 1)[1]))
        assert status == 200 and "A private fact" in body
    for name in ("attacker.example", "attacker.example:8099", "127.0.0.1.attacker.example", ""):
        status, body = get(live_server, name)
        assert status == 400, name
        assert "A private fact" not in body
        assert "addressed to this machine" in body


@pytest.mark.parametrize(
    "changes, host, expected",
    [
        ({}, "127.0.0.1", {"localhost", "127.0.0.1", "::1"}),
        ({}, "127.0.0.2", {"localhost", "127.0.0.1", "::1", "127.0.0.2"}),
        ({}, "[::1]", {"localhost", "127.0.0.1", "::1"}),
        ({"dashboard_token": "a-long-enough-token"}, "127.0.0.1", None),
        ({"is_addon": True}, "0.0.0.0", None),
        ({"dashboard_token": "a-long-enough-token"}, "0.0.0.0", None),
    ],
)
def test_which_servers_check_the_host(settings, changes, host, expected):
    result = allowed_hosts(replace(settings, **changes), host)
    assert (None if result is None else set(result)) == expected
