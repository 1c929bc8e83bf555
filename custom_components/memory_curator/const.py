"""Names shared by the Memory Curator integration's modules."""

from __future__ import annotations

from typing import Final

DOMAIN: Final = "memory_curator"
API_VERSION: Final = 1  # the Assist API version this integration speaks (/api/assist/v1/)
SERVICE: Final = "memory_curator"  # what GET /api/assist/v1/info names itself

CONF_URL: Final = "url"
CONF_TOKEN: Final = "token"
CONF_FEED: Final = "feed_conversations"
CONF_EXCLUDE_AGENTS: Final = "exclude_agents"
CONF_EXCLUDE_DEVICES: Final = "exclude_devices"

PROMPT_TIMEOUT: Final = 3.0  # seconds the first turn may wait for the speaker's memories
CALL_TIMEOUT: Final = 10.0  # seconds for a tool call or one exchange sent

QUEUE_MAX_ITEMS: Final = 1000
QUEUE_MAX_AGE: Final = 7 * 24 * 3600  # seconds
RETRY_FIRST: Final = 1.0  # seconds before the first retry; doubles up to RETRY_MAX
RETRY_MAX: Final = 60.0

# What the model reads before the add-on's memory block.
INSTRUCTIONS: Final = (
    "You have a long-term memory of this household, kept by Memory Curator. "
    "What it holds about the person speaking and the household is below. "
    "When the person tells you something worth keeping (a preference, a plan, a fact about "
    "themselves or the home), call remember with it as one short fact. "
    "When they ask you to forget something, call forget. "
    "When you need something that is not below, call recall. "
    "Never store passwords, codes or other secrets."
)
UNAVAILABLE: Final = (
    "<long_term_memory>\nMemory is unavailable right now: answer without it, and do not "
    "promise to remember anything in this turn.\n</long_term_memory>"
)
