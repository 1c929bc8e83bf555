"""Keys and tokens known by their shape: the documented prefixes of many vendors' API keys, and
long random-looking strings.

``webapp.sensitive.secrets`` marks each match as an ``api_key`` wherever it stands, with or without a
word for it: a prefix like ``sk_live_``, ``SG.…``, ``shpat_`` or ``dop_v1_`` is what a key looks
like and nothing else does. A string without a prefix is a key when it is one long random run
(letters of both cases and digits, high entropy), not words joined by dashes (a slug).
"""

from __future__ import annotations

import math
import re
from collections import Counter

_HEX32 = r"[0-9a-fA-F]{32}"
# Documented prefixes of API keys and tokens, and what they are called.
KEY_SHAPES: tuple[tuple[str, str], ...] = (
    (r"sk-ant-[A-Za-z0-9_-]{20,}", "Anthropic API key"),
    (r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}", "OpenAI API key"),
    (r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}", "Stripe secret key"),
    (r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}", "GitHub token"),
    (r"glpat-[A-Za-z0-9_-]{20,}", "GitLab token"),
    (r"xox[abposre]-[A-Za-z0-9-]{10,}", "Slack token"),
    (r"(?:AKIA|ASIA)[0-9A-Z]{16}", "AWS access key"),
    (r"AIza[0-9A-Za-z_-]{35}", "Google API key"),
    (r"ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,}", "Google access token"),
    (r"hf_[A-Za-z0-9]{30,}", "Hugging Face token"),
    (r"npm_[A-Za-z0-9]{36}", "npm token"),
    (r"pypi-[A-Za-z0-9_-]{50,}", "PyPI token"),
    (r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "access token (JWT)"),
    (r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "private key"),
    (r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}", "SendGrid API key"),
    (rf"SK{_HEX32}", "Twilio API key"),
    (rf"key-{_HEX32}", "Mailgun API key"),
    (rf"shp(?:at|ca|pa|ss)_{_HEX32}", "Shopify token"),
    (r"do[opr]_v1_[0-9a-f]{64}", "DigitalOcean token"),
    (r"(?:secret_|ntn_)[A-Za-z0-9]{40,}", "Notion token"),
    (r"(?:gsk|r8|pplx|xai|lin_api|figd|dp\.pt|PMAK)[_.-][A-Za-z0-9_-]{30,}", "API key"),
    (r"\d{8,10}:AA[A-Za-z0-9_-]{30,}", "Telegram bot token"),
    (r"AKID[A-Za-z0-9]{30,}", "Tencent Cloud key"),
    (r"LTAI[A-Za-z0-9]{12,24}", "Alibaba Cloud AccessKey"),
    (r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "Square token"),
    (r"hooks\.slack\.com/services/[A-Za-z0-9/]{20,}", "Slack webhook"),
    (r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}", "Discord webhook"),
)
KEYS = tuple(
    (re.compile(rf"(?<![A-Za-z0-9_-])(?:{pattern})"), label) for pattern, label in KEY_SHAPES
)
ANY_KEY = re.compile("|".join(f"(?:{pattern})" for pattern, _ in KEY_SHAPES))
# The public start of a key, kept when it is masked ("sk_live_••••").
KEY_PREFIX = re.compile(
    r"^(?:sk-ant-|sk-proj-|sk-|[sr]k_(?:live|test)_|whsec_|gh[pousr]_|github_pat_|glpat-|"
    r"xox[abposre]-|AKIA|ASIA|AIza|ya29\.|GOCSPX-|hf_|npm_|pypi-|SG\.|key-|shp(?:at|ca|pa|ss)_|"
    r"do[opr]_v1_|secret_|ntn_|gsk_|r8_|pplx-|xai-|lin_api_|figd_|PMAK-|AKID|LTAI|sq0(?:atp|csp)-)"
)
# A long random-looking string: letters of both cases and digits, high entropy.
RANDOM = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{20,}(?![A-Za-z0-9+/=_-])")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")  # an Ethereum address (EIP-55 mixes the cases)
MIN_RANDOM_RUN = 16  # characters between - and _ in a random-looking key
MIN_RANDOM_BITS = 3.7  # Shannon entropy per character; a random base64 key has about 5


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(token: str) -> bool:
    """A key rather than an identifier: one long random run (a slug like
    "ho2-15-zh-Hans-lookalike" is short words joined), with both cases, digits, high entropy."""
    if _ADDRESS.fullmatch(token):
        return False  # a wallet's address is public
    token = max(re.split(r"[-_]", token), key=len)
    if len(token) < MIN_RANDOM_RUN:
        return False
    classes = sum(
        (
            any(c.islower() for c in token),
            any(c.isupper() for c in token),
            any(c.isdigit() for c in token),
        )
    )
    return classes == 3 and _entropy(token) >= MIN_RANDOM_BITS
