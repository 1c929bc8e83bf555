"""The wheel is complete: built from the project, installed into a fresh virtual environment
outside the checkout, it serves the dashboard with its templates, CSS and vendored htmx."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.support.web import start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
# What the build reads; copied so the build leaves nothing (build/, *.egg-info) in the checkout.
SOURCES = ("pyproject.toml", "README.md", "webapp", "templates", "static")


def run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", dist, source)
    (wheel,) = dist.glob("memory_curator-*.whl")
    return wheel


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """A new environment with the wheel installed; its dependencies are the ones this test run
    already has (a path file to our site-packages, after its own), so no network is needed."""
    venv = tmp_path / "fresh"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    site = Path(
        run(
            venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
        ).strip()
    )
    # A plain path line: our site-packages' own .pth files (the editable install) stay unread.
    (site / "project-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        venv / "bin" / "python",
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        wheel,
    )
    return venv


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read()


@pytest.mark.slow
def test_the_installed_wheel_serves_the_dashboard(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "webapp/py.typed",
        "webapp/templates/base.html",
        "webapp/templates/memories/page.html",
        "webapp/static/app.css",
        "webapp/static/vendor/htmx-LICENSE.txt",
        "webapp/schemas/skill-document.schema.json",
    ):
        assert expected in names, f"the wheel lacks {expected}"

    venv = fresh_venv(tmp_path, wheel)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # the interpreter the memory-curator script starts finds webapp in the fresh environment
    script = (venv / "bin" / "memory-curator").read_text()
    assert str(venv / "bin" / "python") in script[:500], script[:500]
    where = run(venv / "bin" / "python", "-c", "import webapp; print(webapp.__file__)", cwd=outside)
    assert Path(where.strip()).is_relative_to(venv), f"webapp came from {where.strip()}"

    server = start_server(
        outside / "data", program=[str(venv / "bin" / "memory-curator")], cwd=outside
    )
    try:
        status, body = fetch(server.url + "/memories/")
        page = body.decode("utf-8")
        assert status == 200 and "<title>" in page and "Memories" in page
        # Static URLs carry a hash of the file's content (?v=...), so browsers may keep them.
        css = re.search(r'href="([^"]*/static/app\.css(?:\?v=[0-9a-f]{12})?)"', page)
        htmx = re.search(
            r'src="([^"]*/static/vendor/(htmx-[0-9.]+\.min\.js)(?:\?v=[0-9a-f]{12})?)"', page
        )
        assert css and htmx, page[:2000]
        status, served_css = fetch(server.url + css.group(1))
        assert status == 200 and served_css == (ROOT / "static" / "app.css").read_bytes()
        status, served_htmx = fetch(server.url + htmx.group(1))
        vendored = ROOT / "static" / "vendor" / htmx.group(2)
        assert status == 200 and served_htmx == vendored.read_bytes()
    finally:
        stop_server(server)
    assert (outside / "data" / "memories.json").is_file()
