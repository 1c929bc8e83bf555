"""Secrets in text, so none becomes a memory or leaves the machine: ``secrets`` finds them
(``find_secrets``, ``mask_secrets``) by the words and patterns of ``rules``, with the readers of
secrets said in other ways: ``access`` (codes said without the word), ``dialogue`` (known by the
question before), ``forms`` (spelled out), ``ids`` (national ID numbers), ``keys`` (vendors' key
shapes) and ``phrases`` (seed phrases, passphrases)."""

from .secrets import KIND_NAMES, KINDS, MASK, SecretFinding, SecretSpan, find_secrets, mask_secrets

__all__ = [
    "KINDS",
    "KIND_NAMES",
    "MASK",
    "SecretFinding",
    "SecretSpan",
    "find_secrets",
    "mask_secrets",
]
