"""Each door refuses what the detector refuses: the held-out secrets files through every way
in, per language, with recall on the secrets and the look-alikes refused.

    .venv/bin/python benchmarks/secrets_doors.py [--file secrets.heldout-h6.json]
        [--cli-every 3] [--doors library,cli,mcp-http,extraction,import]

- library: ``Curator.remember`` (refused: ``memory_secret``);
- cli: ``memory-curator memories add`` as a real process (every ``--cli-every``-th sentence:
  one process each is slow; the figure says how many ran);
- mcp-http: ``manage_memory`` add through the MCP SDK's client against a real
  ``memory-curator serve`` on 127.0.0.1 (``Refused (memory_secret)``);
- extraction: the sentence as a user's turn of a conversation, through
  ``extraction.run.extract_conversation`` (dry run) with an LLM that proposes to keep the
  user's last line as it was sent (the worst an LLM can do); refused when no fact keeps it
  as said (the fact is withheld or dropped). The dialogues (``secrets-dialogues.*.json``) go
  this way only: the other doors get one text with no question before it;
- import: every sentence as a record of one export file through ``Curator.import_export``;
  refused when its record was not imported.

Prints figures only; it asserts nothing. Held-out sentences are counted, never printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_mcp_http import free_port, start_dashboard  # noqa: E402

from webapp.curator import Curator  # noqa: E402
from webapp.extraction.run import extract_conversation  # noqa: E402
from webapp.problems import CodedError  # noqa: E402
from webapp.sensitive.secrets import find_secrets  # noqa: E402
from webapp.settings import Settings  # noqa: E402
from webapp.stores import ConversationStore, MemoryStore  # noqa: E402

DATA = REPO / "tests" / "data" / "secrets"
LANGUAGES = ("en", "zh-Hant", "zh-Hans")
Case = dict[str, Any]


ROOMY = {"MEMORY_MAX_ITEMS": "100000", "MEMORY_MAX_CHARS": "10000000"}  # no cap is met


def settings_in(folder: Path) -> Settings:
    base = Settings.from_env(environ=ROOMY, options_file=folder / "no-options.json", cwd=folder)
    return base.with_data_dir(folder / "data")


def env_for(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.pop("SUPERVISOR_TOKEN", None)
    return env | ROOMY | {"MEMORY_DATA_DIR": str(data)}


def figures(name: str, cases: list[Case], refused: list[bool]) -> list[str]:
    lines = [f"  {name}"]
    for lang in LANGUAGES:
        mine = [(c, r) for c, r in zip(cases, refused, strict=True) if c["lang"] == lang]
        secrets = [r for c, r in mine if c["secret"]]
        others = [r for c, r in mine if not c["secret"]]
        lines.append(
            f"    {lang:<8} recall {sum(secrets):>3}/{len(secrets):<3} "
            f"look-alikes refused {sum(others):>2}/{len(others)}"
        )
    return lines


# ------------------------------------------------------------------ the doors
def library(cases: list[Case], root: Path) -> list[bool]:
    curator = Curator.from_settings(settings_in(root))
    curator.memories.init()
    out = []
    for case in cases:
        try:
            curator.remember(case["text"], allow_similar=True, expires_at=None)
            out.append(False)
        except CodedError as exc:
            out.append(exc.code == "memory_secret")
    return out


def cli(cases: list[Case], root: Path) -> list[bool]:
    data = settings_in(root).data_dir
    MemoryStore(data / "memories.json").init()
    out = []
    for case in cases:
        done = subprocess.run(
            [sys.executable, "-m", "webapp", "memories", "add", case["text"], "--add-similar"]
            + ["--no-expiry", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env_for(data),
            timeout=120,
            check=False,
        )
        out.append(done.returncode != 0 and "[memory_secret]" in done.stderr)
    return out


def mcp_http(cases: list[Case], root: Path) -> list[bool]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    data = settings_in(root).data_dir
    MemoryStore(data / "memories.json").init()
    port = free_port()
    process = start_dashboard(data, port, ROOMY)
    out: list[bool] = []

    async def run() -> None:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for case in cases:
                    arguments = {"action": "add", "content": case["text"]}
                    result = await session.call_tool("manage_memory", arguments)
                    text = result.content[0].text if result.content else ""
                    out.append(bool(result.is_error) and "(memory_secret)" in text)

    try:
        anyio.run(run)
    finally:
        process.kill()
        process.wait()
    return out


class EchoLlm:
    """An LLM that proposes to keep the user's last line as it was sent to it."""

    def call(self, prompt: str) -> str | None:
        lines = re.findall(r"^\[User\]: (.*)$", prompt, re.MULTILINE)
        said = lines[-1] if lines else ""
        fact = {"content": said, "category": "general", "confidence": 0.95, "evidence": said}
        return json.dumps([fact], ensure_ascii=False)


def extraction(cases: list[Case], root: Path) -> list[bool]:
    settings = settings_in(root)
    MemoryStore.from_settings(settings).init()
    conversations = ConversationStore.from_settings(settings).init()
    out = []
    for number, case in enumerate(cases):
        turns = case.get("turns") or [{"role": "user", "content": case["text"]}]
        said = turns[-1]["content"]
        cid = f"case-{number}"
        pairs = [turns[i : i + 2] for i in range(0, len(turns), 2)]
        for pair in pairs:
            answer = pair[1]["content"] if len(pair) > 1 else "Okay."
            conversations.add_exchange(cid, pair[0]["content"], answer)
        result = extract_conversation(settings, cid, dry_run=True, caller=EchoLlm())
        kept = [a for a in result.actions if a.action == "add" and a.withheld is None]
        out.append(not any(said.strip() in a.content or a.content in said for a in kept))
    return out


def importing(cases: list[Case], root: Path) -> list[bool]:
    scratch = MemoryStore.from_settings(settings_in(root / "scratch")).init()
    ids = [scratch.add(case["text"]).id for case in cases]
    curator = Curator.from_settings(settings_in(root / "door"))
    curator.memories.init()
    records, _ = curator.preview_export(scratch.export().decode("utf-8"))
    curator.import_export(records, source="export.json")
    stored = {m.id for m in curator.memories.get_all()}
    return [memory_id not in stored for memory_id in ids]


DOORS: dict[str, Callable[[list[Case], Path], list[bool]]] = {
    "library": library,
    "cli": cli,
    "mcp-http": mcp_http,
    "extraction": extraction,
    "import": importing,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default="secrets.heldout-h6.json")
    parser.add_argument("--dialogues", default="secrets-dialogues.heldout-h6.json")
    parser.add_argument("--cli-every", type=int, default=3)
    parser.add_argument("--doors", default=",".join(DOORS))
    args = parser.parse_args(argv)
    cases: list[Case] = json.loads((DATA / args.file).read_text("utf-8"))
    print(f"Secrets through each door ({args.file}, {len(cases)} sentences)")
    detector = [find_secrets(c["text"]) is not None for c in cases]
    lines = figures("detector (find_secrets)", cases, detector)
    for name in args.doors.split(","):
        sample = cases[:: args.cli_every] if name == "cli" else cases
        with tempfile.TemporaryDirectory() as folder:
            refused = DOORS[name](sample, Path(folder))
        title = f"{name} ({len(sample)} sentences)" if name == "cli" else name
        lines += figures(title, sample, refused)
    if args.dialogues and "extraction" in args.doors:
        dialogues: list[Case] = json.loads((DATA / args.dialogues).read_text("utf-8"))
        with tempfile.TemporaryDirectory() as folder:
            refused = extraction(dialogues, Path(folder))
        lines += figures(f"extraction, dialogues ({args.dialogues})", dialogues, refused)
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
