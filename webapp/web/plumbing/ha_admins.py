"""Which Home Assistant users are administrators, asked of the Supervisor.

Home Assistant's ingress tells the add-on who the user is (``X-Remote-User-Id``,
``X-Remote-User-Name``, ``X-Remote-User-Display-Name``) but not whether they are an
administrator. The Supervisor's ``GET /auth/list`` (the add-on needs ``auth_api: true``)
answers ``{"result": "ok", "data": {"users": [{"username", "name", "is_owner", "is_active",
"local_only", "group_ids"}]}}``; an administrator is an active user in the ``system-admin``
group (the owner is one too). The users are matched by their user name, the one
``X-Remote-User-Name`` carries. Only asked when ``memory_admins_see_all`` is on, at most
once a minute; any failure means "not an administrator" (a person then sees their own data
and the household's, never everyone's by mistake).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

import httpx

log = logging.getLogger(__name__)

ADMIN_GROUP = "system-admin"
CACHE_SECONDS = 60.0
TIMEOUT_SECONDS = 5.0


class Administrators:
    """The user names of Home Assistant's administrators, read from the Supervisor and kept
    for ``CACHE_SECONDS`` (a failed read too, so a Supervisor that is down is not asked on
    every page)."""

    def __init__(self, supervisor_url: str, token: str | None = None) -> None:
        self.url = supervisor_url.rstrip("/") + "/auth/list"
        self.token = os.environ.get("SUPERVISOR_TOKEN", "") if token is None else token
        self.lock = threading.Lock()
        self.names: frozenset[str] = frozenset()
        self.read_at: float | None = None

    def is_admin(self, user_name: str | None) -> bool:
        """Whether the Home Assistant user ``user_name`` is an administrator."""
        if not user_name:
            return False
        with self.lock:
            now = time.monotonic()
            if self.read_at is None or now - self.read_at >= CACHE_SECONDS:
                self.names = self._read()
                self.read_at = now
            return user_name in self.names

    def _read(self) -> frozenset[str]:
        if not self.token:
            log.warning("No SUPERVISOR_TOKEN: nobody is taken for a Home Assistant administrator")
            return frozenset()
        try:
            answer = httpx.get(
                self.url,
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=TIMEOUT_SECONDS,
            )
            answer.raise_for_status()
            users = answer.json()["data"]["users"]
            return frozenset(str(user["username"]) for user in users if _admin(user))
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning("Could not ask the Supervisor who the administrators are: %s", exc)
            return frozenset()


def _admin(user: Any) -> bool:
    if not isinstance(user, dict) or not user.get("username") or not user.get("is_active"):
        return False
    groups = user.get("group_ids") or []
    return bool(user.get("is_owner")) or (isinstance(groups, list) and ADMIN_GROUP in groups)
