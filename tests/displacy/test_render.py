"""`displacy.render`: the HTML of a pair, a query's hits and dedupe groups."""

import re
import sys
import types
from html.parser import HTMLParser

import pytest

from spacy_siamese import displacy

from .conftest import GROUPS


class Tokens(HTMLParser):
    """The shaded tokens of rendered markup: (text, class, title, style), and every element seen."""

    def __init__(self):
        super().__init__()
        self.tokens, self.tags, self._open = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "ss-tok" in (attrs.get("class") or "").split():
            self._open = [attrs["class"], attrs["title"], attrs.get("style"), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[3] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._open is not None:
            cls, title, style, text = self._open
            self.tokens.append((text, cls.split()[1], title, style))
            self._open = None


def parse(html):
    parser = Tokens()
    parser.feed(html)
    return parser


def test_pair_shows_the_score_and_shades_tokens_by_sign(pair):
    html = displacy.render(pair, jupyter=False)
    assert isinstance(html, str)
    assert ">0.7345<" in html and "exact · tweak" in html
    found = parse(html).tokens
    assert [t[0] for t in found] == [t["text"] for t in pair["tokens_a"] + pair["tokens_b"]]
    by_text = {(text, i >= 3): (cls, title, style) for i, (text, cls, title, style) in enumerate(found)}
    # The largest |value| (Python, 0.4) is the fullest colour; the others relative to it.
    assert by_text[("Python", False)] == ("ss-positive", "+0.4000", "background-color: rgba(22, 163, 74, 0.8)")
    assert by_text[("learn", False)] == ("ss-positive", "+0.2000", "background-color: rgba(22, 163, 74, 0.4)")
    assert by_text[("<script>alert(1)</script>", False)] == (
        "ss-negative",
        "-0.1000",
        "background-color: rgba(220, 38, 38, 0.2)",
    )
    assert by_text[("more", True)] == ("ss-negative", "-0.0500", "background-color: rgba(220, 38, 38, 0.1)")
    assert by_text[("&", True)] == ("ss-zero", "+0.0000", None)  # no shade at all


def test_every_text_is_escaped(pair, hits):
    markup = [
        displacy.render(pair, jupyter=False),
        displacy.render(pair, page=True, jupyter=False),
        displacy.render(hits, style="search", jupyter=False),
        displacy.render(GROUPS, style="groups", page=True, jupyter=False),
    ]
    for html in markup:
        assert "<script" not in html and "<b>" not in html and "<i>" not in html
        assert "script" not in parse(html).tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup[0]
    assert "learn &lt;b&gt;Python&lt;/b&gt;" in markup[2] and "&lt;i&gt;tags&lt;/i&gt; &amp; entities" in markup[2]
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in markup[3]


def test_a_token_keeps_its_whitespace_and_the_text_reads_as_given(pair):
    html = displacy.render(pair, jupyter=False)
    side_a = html.split('<div class="ss-text">')[1].split("</div>")[0]
    assert re.sub(r"<[^>]+>", "", side_a) == "learn &lt;script&gt;alert(1)&lt;/script&gt; Python"


def test_no_external_resources(pair, hits):
    for html in (
        displacy.render(pair, page=True, jupyter=False),
        displacy.render(hits, style="search", page=True, jupyter=False),
        displacy.render(GROUPS, style="groups", jupyter=False),
    ):
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
        assert "url(" not in html and "@import" not in html


def test_page_and_fragment(pair):
    page = displacy.render(pair, page=True, jupyter=False)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert '<body class="ss-displacy">' in page
    fragment = displacy.render(pair, jupyter=False)
    assert fragment.startswith('<div class="ss-displacy"><style>') and "<html" not in fragment
    # The fragment's style applies inside it only: every rule is scoped to .ss-displacy.
    css = fragment.split("<style>")[1].split("</style>")[0]
    selectors = re.findall(r"(?:^|\})\s*([^{}]+?)\s*\{", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    assert selectors and all(
        part.strip().startswith((".ss-displacy", "body.ss-displacy")) for sel in selectors for part in sel.split(",")
    )


def test_zero_contributions_and_many_pairs(pair):
    flat = dict(pair, tokens_a=[dict(t, contribution=0.0) for t in pair["tokens_a"]], tokens_b=[])
    html = displacy.render([pair, flat], jupyter=False)
    assert html.count('class="ss-pair"') == 2
    # every token of the flat pair is shown, unshaded
    expected = [(t["text"], "ss-zero", "+0.0000", None) for t in pair["tokens_a"]]
    assert parse(html.split('class="ss-pair"')[2]).tokens == expected


def test_an_explanation_object_and_colours(pair):
    class Explanation:
        def to_dict(self):
            return pair

    html = displacy.render(Explanation(), options={"colors": {"positive": "#0000ff"}}, jupyter=False)
    assert "rgba(0, 0, 255, 0.8)" in html and "rgba(220, 38, 38, 0.2)" in html
    with pytest.raises(ValueError, match="#rrggbb"):
        displacy.render(pair, options={"colors": {"negative": "red"}}, jupyter=False)


def test_a_pair_without_tokens_is_an_error(pair):
    with pytest.raises(ValueError, match="missing: tokens_b"):
        displacy.render({k: v for k, v in pair.items() if k != "tokens_b"}, jupyter=False)
    with pytest.raises(ValueError, match="Unknown displacy style 'dep'"):
        displacy.render(pair, style="dep", jupyter=False)


def test_search_hits_in_order_with_scores(hits):
    html = displacy.render(hits, style="search", jupyter=False)
    assert html.index(">q0<") < html.index(">7<")
    assert ">0.9100<" in html and ">0.5000<" in html and "2 hits" in html
    empty = displacy.render({"query": "nothing", "hits": []}, style="search", jupyter=False)
    assert "No hits." in empty and "0 hits" in empty
    assert displacy.render([hits, hits], style="search", jupyter=False).count('class="ss-search-result"') == 2


def test_groups_largest_first(groups_file):
    for source in (GROUPS, groups_file, str(groups_file)):
        html = displacy.render(source, style="groups", jupyter=False)
        assert html.index('data-group="1"') < html.index('data-group="0"')
        assert "2 groups, largest first" in html and "3 texts" in html and "Why is the sky blue?" in html
        assert '<span class="ss-id">c</span>' in html
    top = displacy.render(GROUPS, style="groups", options={"limit": 1}, jupyter=False)
    assert 'data-group="1"' in top and 'data-group="0"' not in top and "groups 1–1 of 2" in top
    assert "No groups." in displacy.render([], style="groups", jupyter=False)


def test_groups_file_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"group": 0, "members": []}\n{"group": 1}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a group"):
        displacy.render(bad, style="groups", jupyter=False)
    bad.write_text("{not json\n", encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a JSON object"):
        displacy.read_groups(bad)
    bad.write_bytes(b'{"group": 0, "members": []}\n{"group": 1, "members": [{"id": 0, "text": "caf\xe9"}]}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: invalid UTF-8"):
        displacy.read_groups(bad)
    with pytest.raises(ValueError, match="Groups file not found"):
        displacy.read_groups(tmp_path / "missing.jsonl")
    # members written as plain texts, not {"id", "text"} objects: named, in a file or in rows
    bad.write_text('{"group": 0, "members": [{"id": 0}]}\n{"group": 1, "members": ["a", "b"]}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a group .*\{\"id\", \"text\"\} objects"):
        displacy.read_groups(bad)
    with pytest.raises(ValueError, match=r"Group 0: .*'members' list of \{\"id\", \"text\"\} objects"):
        displacy.render([{"group": 0, "members": ["a <b>", "c"]}], style="groups", jupyter=False)


def test_groups_file_with_a_bom_and_crlf_line_ends(tmp_path):
    edited = tmp_path / "groups.jsonl"
    edited.write_bytes(b'\xef\xbb\xbf{"group": 0, "members": []}\r\n{"group": 1, "members": []}\r\n')
    assert [row["group"] for row in displacy.read_groups(edited)] == [0, 1]


def test_jupyter_displays_the_html(pair, monkeypatch):
    shown = []
    ipython = types.ModuleType("IPython")
    display_module = types.ModuleType("IPython.display")
    display_module.HTML = lambda html: ("HTML", html)
    display_module.display = shown.append
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)
    assert displacy.render(pair, jupyter=True) is None
    assert shown == [("HTML", displacy.render(pair, jupyter=False))]
    monkeypatch.setattr(displacy, "is_in_jupyter", lambda: True)
    assert displacy.render(pair) is None and len(shown) == 2
    assert isinstance(displacy.render(pair, jupyter=False), str)


def test_references_are_shown_when_given(pair):
    assert 'class="ss-references"' not in displacy.render(pair, jupyter=False)
    html = displacy.render(dict(pair, reference_a=0.25, reference_b=0.125), jupyter=False)
    assert 'A <span class="ss-reference">0.2500</span>, B <span class="ss-reference">0.1250</span>' in html


def test_the_notebook_shows_verdicts_at_a_threshold(pair, hits):
    """With a threshold (in the data, as the page's API gives it, or in options), a score comes with its
    verdict, duplicate from the threshold on; without one, no verdict is made up."""
    assert 'class="ss-verdict' not in displacy.render(pair, jupyter=False)
    html = displacy.render(dict(pair, threshold=0.7345, dedupe_threshold=0.9), jupyter=False)
    assert '"ss-verdict ss-duplicate"' in html and ">duplicate<" in html
    assert "threshold 0.7345" in html and "dedupe threshold 0.9000" in html
    html = displacy.render(pair, jupyter=False, options={"threshold": 0.8})
    assert ">not a duplicate<" in html and "threshold 0.8000" in html
    html = displacy.render(hits, style="search", jupyter=False, options={"threshold": 0.6})
    assert html.count(">duplicate<") == 1 and html.count(">not a duplicate<") == 1 and "href=" not in html
    scored = [dict(g, members=[g["members"][0]] + [dict(m, score=0.75) for m in g["members"][1:]]) for g in GROUPS]
    html = displacy.render(scored, style="groups", jupyter=False, options={"threshold": 0.7})
    assert html.count(">duplicate<") == 3 and html.count(">0.7500<") == 3 and "against its group's first" in html
