"""Targets of at least 24×24 CSS px (WCAG 2.2, 2.5.8) on every page, on a phone and a desktop,
in light and dark; axe-core (target-size rule switched on) reports nothing serious there."""

from __future__ import annotations

import pytest

from tests.support.web import start_server, stop_server, wait_for_htmx

pytestmark = pytest.mark.browser

MIN = 24
# Controls a pointer acts on. Links inside a sentence are exempt (WCAG 2.5.8 "inline").
TARGETS = (
    "button, input:not([type=hidden]), select, textarea, summary, [role=button],"
    " nav a, .review-tabs a, .review-pages a, a.button, .thread-link, td a"
)
MEASURE = """([selector, min]) => Array.from(document.querySelectorAll(selector))
  .filter(el => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden')
  .map(el => { const r = el.getBoundingClientRect();
    return {what: el.outerHTML.slice(0, 90), w: r.width, h: r.height}; })
  .filter(t => t.w < min - 0.01 || t.h < min - 0.01)"""


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("targets") / "data", args=["--demo"])
    yield server
    stop_server(server)


def pages(server) -> list[tuple[str, str | None]]:
    """(path, a button to press first) for every page a person reaches."""
    memory = server.memories().get_all()[0]
    thread = server.conversations().list_conversations()[0].id
    from webapp.stores import SkillDocumentStore

    doc = SkillDocumentStore(server.settings.skills_dir).list()[0]
    return [
        ("/memories/", None),
        ("/memories/", f"#memory-{memory.id} [data-history-button]"),
        ("/memories/", f"#memory-{memory.id} [data-edit-button]"),
        ("/memories/import", None),
        ("/conversations/", None),
        (f"/conversations/thread/{thread}", None),
        ("/prompt/", None),
        ("/review/", None),
        ("/review/", "article.review-item [data-review-edit]"),
        ("/review/?tab=decided", None),
        ("/skills/", None),
        (f"/skills/{doc.id}", None),
        ("/skills/new", None),
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [390, 1280])
def test_every_target_is_at_least_24px_and_axe_agrees(browser, demo_server, scheme, width):
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 844})
    page = context.new_page()
    problems: list[str] = []
    try:
        for path, press in pages(demo_server):
            page.goto(demo_server.url + path)
            page.wait_for_load_state("load")
            if press:
                page.locator(press).first.click()
                wait_for_htmx(page)
            small = page.evaluate(MEASURE, [TARGETS, MIN])
            problems += [f"{path} ({press}): {t['w']:.0f}×{t['h']:.0f} {t['what']}" for t in small]
            # Only the violations in full: the passes and the rest would be sent back whole.
            options = {"rules": {"target-size": {"enabled": True}}, "resultTypes": ["violations"]}
            found = Axe().run(page, options=options).response["violations"]
            problems += [
                f"{path} ({press}): axe {v['id']} ({v['impact']}): "
                + "; ".join(str(n["target"]) for n in v["nodes"][:4])
                for v in found
                if v["impact"] in ("serious", "critical")
            ]
    finally:
        context.close()
    assert not problems, f"{scheme}, {width}px:\n" + "\n".join(problems)
