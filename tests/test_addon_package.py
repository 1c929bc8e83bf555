"""The add-on as the Supervisor sees it: a valid add-on repository, option names in every
language, and an image built from exactly what the Dockerfile copies.

The image itself cannot be built here (no Docker engine), so the last test does what its
``pip install .`` does: it copies only the files the Dockerfile ``COPY``s, builds the wheel
from that copy, installs it into a fresh virtual environment outside the checkout and serves
a page, its CSS and the vendored htmx from it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
LANGUAGES = ("en", "zh-Hant", "zh-Hans")


def tracked_files() -> list[str]:
    """The files a clone of the repository holds (what the Supervisor's git checkout sees)."""
    result = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return result.stdout.splitlines()


def translation(language: str) -> dict:
    return yaml.safe_load((REPO / "translations" / f"{language}.yaml").read_text("utf-8"))


def test_repository_manifest_is_what_the_supervisor_reads():
    """repository.yaml: a name (required), optionally a URL and a maintainer, nothing else."""
    manifest = yaml.safe_load((REPO / "repository.yaml").read_text(encoding="utf-8"))
    assert isinstance(manifest.get("name"), str) and manifest["name"].strip()
    assert set(manifest) <= {"name", "url", "maintainer"}
    if "url" in manifest:
        assert re.match(r"^https://\S+$", manifest["url"])
    assert isinstance(manifest.get("maintainer", ""), str)


def test_the_supervisor_finds_exactly_one_add_on():
    """The store globs ``**/config.(json|yaml|yml)`` outside dot folders and ``rootfs``: the
    only match must be our manifest, with its Dockerfile and translations beside it."""
    found = [
        path
        for path in tracked_files()
        if re.fullmatch(r"config\.(json|ya?ml)", Path(path).name)
        and not any(part.startswith(".") or part == "rootfs" for part in Path(path).parts)
    ]
    assert found == ["config.yaml"]
    for needed in ("Dockerfile", "repository.yaml", "DOCS.md", "icon.png", "logo.png"):
        assert needed in tracked_files(), needed


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_option_has_a_name_and_description(language):
    """The Configuration tab shows these instead of raw keys, in every language we ship."""
    configuration = translation(language)["configuration"]
    assert set(configuration) == set(CONFIG["schema"]), "one entry per option, no stale ones"
    for key, entry in configuration.items():
        assert set(entry) <= {"name", "description"}, key
        assert isinstance(entry.get("name"), str) and entry["name"].strip(), key
        assert isinstance(entry.get("description"), str) and entry["description"].strip(), key


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_port_is_described(language):
    network = translation(language)["network"]
    assert set(network) == set(CONFIG["ports"])
    assert all(isinstance(text, str) and text.strip() for text in network.values())


@pytest.mark.parametrize("language", ["zh-Hant", "zh-Hans"])
def test_chinese_option_names_are_translated(language):
    """A name left in English (copied from en.yaml) would show up untranslated in the panel."""
    english = translation("en")["configuration"]
    for key, entry in translation(language)["configuration"].items():
        assert entry["name"] != english[key]["name"], key
        assert re.search(r"[\u4e00-\u9fff]", entry["name"] + entry["description"]), key


def dockerfile_copies(dockerfile: Path = REPO / "Dockerfile") -> list[str]:
    """The source paths of every ``COPY`` in the Dockerfile (exec or shell form)."""
    sources: list[str] = []
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*COPY\s+(.*)$", line, re.I)
        if match:
            words = [w for w in match.group(1).split() if not w.startswith("--")]
            sources.extend(words[:-1])
    return sources


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


@pytest.mark.slow
def test_image_contents_build_install_and_serve(tmp_path):
    """Only what the Dockerfile copies, built into a wheel, installed outside the checkout,
    serves the dashboard with its stylesheet and htmx."""
    context = tmp_path / "context"
    context.mkdir()
    copies = dockerfile_copies()
    assert {"pyproject.toml", "webapp", "templates", "static"} <= set(copies)
    for source in copies:
        src = REPO / source
        if src.is_dir():
            shutil.copytree(src, context / source, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, context / source)

    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), "."],
        cwd=context,
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("memory_curator-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    new_python = venv / "bin" / "python"
    site = subprocess.run(
        [new_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies come from the test environment (no network needed); a plain path line
    # in a .pth file does not run that environment's own .pth hooks, so the checkout's
    # editable install of webapp stays out of sight.
    (Path(site) / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [new_python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    where = subprocess.run(
        [new_python, "-c", "import webapp; print(webapp.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(venv)), where

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "SUPERVISOR"))}
    server = subprocess.Popen(
        [venv / "bin" / "memory-curator", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=env | {"MEMORY_DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stdout.read().decode()
            try:
                status, page = fetch(base + "/memories/")
                break
            except OSError:
                assert time.monotonic() < deadline, "the installed dashboard did not answer"
                time.sleep(0.2)
        assert status == 200 and b"<html" in page
        assets = re.findall(rb'(?:href|src)="([^"]+\.(?:css|js)[^"]*)"', page)
        css = [a.decode() for a in assets if b".css" in a]
        htmx = [a.decode() for a in assets if b"htmx" in a]
        assert css and htmx, "the page links its stylesheet and htmx"
        for asset in css[:1] + htmx:
            status, body = fetch(base + asset.replace("&amp;", "&"))
            assert status == 200 and len(body) > 100, asset
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()
