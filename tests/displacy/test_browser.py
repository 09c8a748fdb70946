"""The served page in a real headless browser: Playwright driving Debian's chromium.

Skipped when /usr/bin/chromium or Playwright is missing, unless the environment variable CI is
set: then it fails, so CI cannot skip it silently (`.ci/run` installs chromium). With
DISPLACY_SCREENSHOTS=DIR each view is saved as DIR/displacy_<view>.png."""

import os
import threading
from pathlib import Path

import pytest

from spacy_siamese import SimilarityIndex, displacy

from .conftest import TEXTS, invoke_ok

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
# The network is closed: these flags keep chromium from waiting on it.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI must run the browser test (install Debian's chromium and playwright)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed")
    with sync_playwright() as playwright:
        # launch() starts chromium with a fresh, temporary user data dir
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=TIMEOUT_MS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def url(saved, tweak_nlp):
    """`serve` in a background thread on a free port: the pipeline, its saved index and the
    groups that `dedupe` wrote for the same collection."""
    groups = saved / "groups.jsonl"
    invoke_ok(
        "dedupe", saved / "model", saved / "texts.jsonl", "-o", saved / "pairs.jsonl", "--groups", groups,
        "--threshold", 0.5, "--n-process", 1, "--no-progress",
    )  # fmt: skip
    page = displacy.DisplacyApp(nlp=tweak_nlp, index=saved / "index", groups=groups)
    server = displacy.make_server(page, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield displacy.server_url(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def page(browser):
    context = browser.new_context()
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    problems = []
    tab.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    tab.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    yield tab
    context.close()
    assert problems == []  # no script error, no request the page's policy refused


def test_pair_view_shows_the_score_and_shaded_tokens(page, url, tweak_nlp):
    a, b = "How do I learn Python fast? <b>Now</b>", "What is the quickest way to learn Python?"
    page.goto(f"{url}/pair")
    page.fill("#ss-text-a", a)
    page.fill("#ss-text-b", b)
    page.click("#ss-explain")
    score = page.locator("#ss-pair-result .ss-score")
    score.wait_for()
    assert score.inner_text() == f"{tweak_nlp(a).similarity(tweak_nlp(b)):.4f}"
    assert page.url == f"{url}/pair?" + page.evaluate("([a, b]) => String(new URLSearchParams({a, b}))", [a, b])
    shaded = page.locator("#ss-pair-result .ss-tok.ss-positive")
    assert {t.lower() for t in shaded.all_inner_texts()} == {"learn", "python"}
    colour = shaded.first.evaluate("node => getComputedStyle(node).backgroundColor")
    assert colour.startswith("rgba(22, 163, 74,")
    assert page.locator("#ss-pair-result .ss-tok.ss-zero").count() > 0
    assert page.locator("#ss-pair-result b").count() == 0  # the markup in the text stays text
    assert page.locator("#ss-pair-result .ss-text").first.inner_text() == a
    assert page.locator("#ss-pair-result .ss-tok").first.get_attribute("title").startswith(("+", "-"))
    threshold = tweak_nlp.get_pipe("siamese_similarity").threshold
    duplicate = tweak_nlp(a).similarity(tweak_nlp(b)) >= threshold
    assert page.locator("#ss-pair-result .ss-verdict").inner_text() == ("duplicate" if duplicate else "not a duplicate")
    assert f"threshold {threshold:.4f}" in page.locator("#ss-pair-result .ss-head").inner_text()
    assert page.locator(".ss-model").inner_text().startswith("Model: en_pipeline")
    snapshot(page, "pair")


def test_search_box_shows_hits_with_scores(page, url, tweak_nlp):
    page.goto(f"{url}/search")
    page.locator("#ss-query").press_sequentially("What is the best way to learn Python?")
    page.locator("#ss-k").fill("5")
    page.locator("#ss-query").press("Enter")
    hits = page.locator("#ss-search-results .ss-hit")
    # a locator wait, not wait_for_function: the page's policy forbids evaluating strings
    hits.nth(4).wait_for(timeout=TIMEOUT_MS)
    assert hits.count() == 5
    expected = SimilarityIndex.build(tweak_nlp, TEXTS, progress=False).search([TEXTS[8]], k=5)[0]
    assert TEXTS[8] == "What is the best way to learn Python?"
    assert hits.locator(".ss-id").all_inner_texts() == [f"q{i}" for i, _ in expected]
    assert hits.locator(".ss-score").all_inner_texts() == [f"{s:.4f}" for _, s in expected]
    assert hits.first.locator(".ss-hit-text").inner_text() == TEXTS[8]
    assert "q=What+is+the+best" in page.url
    threshold = tweak_nlp.get_pipe("siamese_similarity").threshold
    verdicts = ["duplicate" if s >= threshold else "not a duplicate" for _, s in expected]
    assert hits.locator(".ss-verdict").all_inner_texts() == verdicts
    snapshot(page, "search")
    hits.nth(1).locator("a.ss-hit-text").click()  # to the pair view of the query and the hit
    page.locator("#ss-pair-result .ss-verdict").wait_for()
    assert page.locator("#ss-text-a").input_value() == TEXTS[8]
    assert page.locator("#ss-text-b").input_value() == TEXTS[expected[1][0]]
    assert page.locator("#ss-pair-result .ss-score").inner_text() == f"{expected[1][1]:.4f}"


def test_groups_view_shows_the_groups(page, url, saved):
    rows = displacy.read_groups(saved / "groups.jsonl")
    assert rows  # the collection has exact duplicates
    page.goto(f"{url}/groups")
    groups = page.locator(".ss-group")
    assert groups.count() == len(rows)
    sizes = [len(group.locator("li").all()) for group in groups.all()]
    assert sizes == sorted((len(r["members"]) for r in rows), reverse=True)
    first = groups.first.inner_text()
    largest = max(rows, key=lambda r: len(r["members"]))
    assert all(m["text"] in first and str(m["id"]) in first for m in largest["members"])
    members = groups.first.locator("li")
    assert members.first.locator(".ss-score").count() == 0  # the first is what the others are scored against
    assert members.nth(1).locator(".ss-verdict").inner_text() in ("duplicate", "not a duplicate")
    score = members.nth(1).locator(".ss-score").inner_text()
    snapshot(page, "groups")
    members.nth(1).locator("a.ss-member-text").click()
    page.locator("#ss-pair-result .ss-score").wait_for()
    assert page.locator("#ss-pair-result .ss-score").inner_text() == score  # the same score, explained


def test_every_view_is_linked(page, url):
    page.goto(url)
    assert page.locator(".ss-nav a").all_inner_texts() == ["Pair", "Search", "Groups"]
    page.click("text=Groups")
    page.wait_for_url(f"{url}/groups")
    assert page.locator(".ss-nav a[aria-current]").inner_text() == "Groups"


def snapshot(page, view):
    if os.environ.get("DISPLACY_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["DISPLACY_SCREENSHOTS"]) / f"displacy_{view}.png"), full_page=True)
