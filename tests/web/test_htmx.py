"""One way to answer a request: web/htmx.py renders the page or its partial, with the status,
the announcement and the HX-Trigger events; no blueprint does it on its own."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest
from flask import Flask
from jinja2 import DictLoader

from webapp.web.plumbing.extensions import htmx

# The module, not the flask-htmx extension that ``webapp.web`` exports under the same name.
helpers = importlib.import_module("webapp.web.plumbing.htmx")

WEB = Path(helpers.__file__).resolve().parent
HTMX = {"HX-Request": "true"}


@pytest.fixture
def app() -> Flask:
    app = Flask(__name__)
    app.jinja_loader = DictLoader(
        {
            "_part.html": "part {{ n }} {{ only_part | default('-') }}",
            "page.html": "page {{ n }} {{ page_title | default('-') }} {{ only_page | default('-') }}",
        }
    )
    htmx.init_app(app)
    return app


def answer(app: Flask, headers: dict[str, str] | None = None, **kwargs):
    with app.test_request_context("/", headers=headers or {}):
        return helpers.render("_part.html", "page.html", n=1, **kwargs)


def test_a_normal_request_gets_the_page_and_htmx_the_partial(app):
    page = answer(app, title="Title", page_context=lambda: {"only_page": "p"})
    assert page.get_data(as_text=True) == "page 1 Title p" and page.status_code == 200
    part = answer(app, HTMX, title="Title", partial_context={"only_part": "x"})
    assert part.get_data(as_text=True) == "part 1 x"
    boosted = answer(app, {**HTMX, "HX-Boosted": "true"})  # a boosted link loads a whole page
    assert boosted.get_data(as_text=True).startswith("page 1")


def test_the_context_only_one_template_needs_is_built_only_for_it(app):
    def never():
        raise AssertionError("built for the wrong template")

    assert answer(app, HTMX, page_context=never).status_code == 200
    assert answer(app, partial_context=never).status_code == 200


def test_status_goes_with_either_template(app):
    assert answer(app, status=409).status_code == 409
    assert answer(app, HTMX, status=422).status_code == 422


def test_the_announcement_and_events_go_in_one_hx_trigger_json(app):
    one = answer(app, HTMX, trigger="memories-changed", announce="Memory added.")
    assert json.loads(one.headers["HX-Trigger"]) == {
        "memories-changed": True,
        "announce": "Memory added.",
    }
    several = answer(app, HTMX, trigger=["review-changed", "memories-changed"])
    assert json.loads(several.headers["HX-Trigger"]) == {
        "review-changed": True,
        "memories-changed": True,
    }
    chinese = answer(app, HTMX, announce="已新增記憶。")
    assert json.loads(chinese.headers["HX-Trigger"]) == {"announce": "已新增記憶。"}
    assert chinese.headers["HX-Trigger"].isascii()  # a header stays Latin-1
    assert "HX-Trigger" not in answer(app, HTMX).headers
    # A full page has nothing listening for events: no htmx headers at all.
    page = answer(app, trigger="memories-changed", announce="Memory added.", retarget="#x")
    assert not [name for name, _value in page.headers.items() if name.startswith("HX-")]


def test_a_partial_can_be_sent_elsewhere(app):
    response = answer(app, HTMX, retarget="#banner", reswap="innerHTML")
    assert response.headers["HX-Retarget"] == "#banner"
    assert response.headers["HX-Reswap"] == "innerHTML"


def test_page_none_answers_with_the_partial_and_partial_none_with_the_page(app):
    with app.test_request_context("/"):
        assert helpers.render("_part.html", n=2).get_data(as_text=True) == "part 2 -"
    with app.test_request_context("/", headers=HTMX):
        assert helpers.render(None, "page.html", n=3).get_data(as_text=True) == "page 3 - -"


def test_redirect_or_partial(app):
    with app.test_request_context("/", method="POST"):
        plain = helpers.redirect_or("/memories/", lambda: helpers.render("_part.html", n=1))
        assert plain.status_code == 303 and plain.headers["Location"] == "/memories/"
    with app.test_request_context("/", method="POST", headers=HTMX):
        part = helpers.redirect_or("/memories/", lambda: helpers.render("_part.html", n=1))
        assert part.status_code == 200 and part.get_data(as_text=True) == "part 1 -"
        away = helpers.redirect_or("/skills/1", announce="Saved.")
        assert away.headers["HX-Redirect"] == "/skills/1"
        assert json.loads(away.headers["HX-Trigger"]) == {"announce": "Saved."}


# ----------------------------------------------------------------- every blueprint uses it
BLUEPRINTS = sorted(p for p in WEB.glob("*.py") if p.name not in {"htmx.py", "extensions.py"})
OWN_HELPERS = {"_render", "_done", "_triggered"}
HTMX_HEADERS = (
    "HX-Trigger",
    "HX-Redirect",
    "HX-Retarget",
    "HX-Reswap",
    "HX-Location",
    "HX-Refresh",
    "HX-Push-Url",
    "HX-Replace-Url",
)


def _calls(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


# Redirect headers two modules may still write: ingress.py rewrites the ones the views sent
# (behind the ingress prefix), and auth.py sends a logged-out htmx request (boosted ones too)
# to the login page before any blueprint runs. HX-Trigger stays with htmx.py everywhere.
REDIRECTS_ALLOWED = {"ingress.py", "auth.py"}


def problems_of(source: str, name: str = "") -> list[str]:
    """What in a web module answers htmx on its own instead of through web/htmx.py."""
    tree = ast.parse(source)
    found = []
    headers = HTMX_HEADERS[:1] if name in REDIRECTS_ALLOWED else HTMX_HEADERS
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("flask_htmx"):
            found.append(f"line {node.lineno}: imports from flask_htmx")
        if isinstance(node, ast.Constant) and str(node.value).startswith(headers):
            found.append(f"line {node.lineno}: sets the {node.value} header")
        if isinstance(node, ast.keyword) and node.arg in {"trigger", "redirect"}:
            found.append(f"line {node.lineno}: flask_htmx's {node.arg}= keyword")
        if isinstance(node, ast.FunctionDef):
            if node.name in OWN_HELPERS:
                found.append(f"line {node.lineno}: defines its own {node.name}")
            calls = _calls(node)
            if "wants_partial" in calls and "render_template" in calls:
                found.append(
                    f"line {node.lineno}: {node.name} picks the page or the partial itself"
                )
    # ``trigger=`` is the keyword of htmx.render: allowed when render is what is called.
    return [p for p in found if "trigger= keyword" not in p or "flask_htmx" in source]


@pytest.mark.parametrize("module", BLUEPRINTS, ids=lambda p: p.name)
def test_no_web_module_answers_htmx_on_its_own(module):
    assert problems_of(module.read_text(encoding="utf-8"), module.name) == []


def test_the_check_finds_each_way_of_doing_it_alone():
    source = """
from flask_htmx import make_response

def _triggered(html):
    return make_response(html, trigger={"announce": "x"})

def view():
    if wants_partial():
        return render_template("_part.html")
    return render_template("page.html")

def header(response):
    response.headers["HX-Trigger"] = "{}"
"""
    found = problems_of(source)
    assert any("flask_htmx" in p for p in found)
    assert any("its own _triggered" in p for p in found)
    assert any("view picks the page or the partial" in p for p in found)
    assert any("HX-Trigger header" in p for p in found)
    assert any("trigger= keyword" in p for p in found)
