"""People of the household as the dashboard's tests act for them: the Home Assistant users
ingress names, through its trusted proxy."""

from __future__ import annotations

HA = "172.30.32.2"  # the default trusted proxy

MAYA = {"X-Remote-User-Id": "u-maya", "X-Remote-User-Display-Name": "Maya"}


LEO = {"X-Remote-User-Id": "u-leo", "X-Remote-User-Display-Name": "Leo"}


def as_user(client, method, url, user, remote=HA, **kw):
    return getattr(client, method)(url, headers=user, environ_base={"REMOTE_ADDR": remote}, **kw)
