"""HTML for the three views (a pair's shaded tokens, a query's hits, duplicate groups); every text
is escaped, styled by `static/displacy.css`."""

import math
from html import escape
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlencode

STATIC = Path(__file__).parent / "static"
STYLES = ("pair", "search", "groups")
# Diverging colours: a token that raises the score is green, one that lowers it red.
DEFAULT_COLORS = {"positive": "#16a34a", "negative": "#dc2626"}
MAX_ALPHA = 0.8  # the largest |contribution| of a pair; the text stays readable on it
NAV = {"pair": "Pair", "search": "Search", "groups": "Groups"}  # each view's link, relative: a proxy may add a prefix


def static_text(name: str) -> str:
    """A file of the package's static directory (the stylesheet, the script)."""
    return (STATIC / name).read_text(encoding="utf8")


# -- pair ---------------------------------------------------------------------------------------


def render_pair(data: Mapping[str, Any], options: Mapping[str, Any] = {}) -> str:
    """A pair explanation (`explain_pair(nlp, a, b).to_dict()`): its score and both texts, each token shaded
    by its contribution (colour by sign, opacity by |value| relative to the pair's largest)."""
    missing = [key for key in ("score", "tokens_a", "tokens_b") if key not in data]
    if missing:
        raise ValueError(f"A pair to render needs the keys score, tokens_a and tokens_b; missing: {', '.join(missing)}")
    colors = {**DEFAULT_COLORS, **options.get("colors", {})}
    rgb = {sign: hex_to_rgb(colors[sign]) for sign in ("positive", "negative")}
    tokens_a, tokens_b = list(data["tokens_a"]), list(data["tokens_b"])
    largest = max((abs(contribution(tok)) for tok in tokens_a + tokens_b), default=0.0)
    about = " · ".join(escape(str(data[key])) for key in ("method", "kind") if data.get(key))
    rows = "".join(
        f'<div class="ss-side"><span class="ss-label">{label}</span>'
        f'<div class="ss-text">{shaded_tokens(tokens, largest, rgb)}</div></div>'
        for label, tokens in (("A", tokens_a), ("B", tokens_b))
    )
    about_note = f' <span class="ss-about">· {about}</span>' if about else ""
    return (
        f'<div class="ss-pair"><div class="ss-head"><span class="ss-score-label">similarity</span> '
        f"{scored(data['score'], data, options)}{thresholds_note(data, options)}{about_note}</div>"
        f"{rows}{references(data)}{legend(rgb)}</div>"
    )


def references(data: Mapping[str, Any]) -> str:
    """The scores the token contributions start from (`reference_a`, `reference_b`), if given."""
    if data.get("reference_a") is None or data.get("reference_b") is None:
        return ""
    a, b = score_text(data["reference_a"]), score_text(data["reference_b"])
    return (
        '<div class="ss-references">Each text\'s contributions add up to the score minus its reference, '
        f'the score without its tokens: A <span class="ss-reference">{a}</span>, '
        f'B <span class="ss-reference">{b}</span></div>'
    )


def shaded_tokens(tokens: Iterable[Mapping[str, Any]], largest: float, rgb: Mapping[str, str]) -> str:
    out = []
    for tok in tokens:
        value = contribution(tok)
        alpha = round(MAX_ALPHA * abs(value) / largest, 3) if largest > 0 else 0.0
        sign = "positive" if value > 0 else "negative" if value < 0 else "zero"
        style = f' style="background-color: rgba({rgb[sign]}, {alpha})"' if alpha > 0 else ""
        out.append(
            f'<span class="ss-tok ss-{sign}" title="{value:+.4f}" data-contribution="{value!r}"{style}>'
            f"{escape(str(tok.get('text', '')))}</span>{escape(str(tok.get('ws', '')))}"
        )
    return "".join(out)


def legend(rgb: Mapping[str, str]) -> str:
    swatch = '<span class="ss-swatch" style="background-color: rgba({}, {})">{}</span> '
    return (
        f'<div class="ss-legend">{swatch.format(rgb["positive"], MAX_ALPHA, "raises")}'
        f"{swatch.format(rgb['negative'], MAX_ALPHA, 'lowers')}the score; hover a token for its contribution</div>"
    )


def contribution(tok: Mapping[str, Any]) -> float:
    value = float(tok.get("contribution", 0.0) or 0.0)
    return value if math.isfinite(value) else 0.0


def hex_to_rgb(color: str) -> str:
    """'#16a34a' -> '22, 163, 74' (as CSS rgba() takes it); a ValueError for anything else."""
    text = color.lstrip("#")
    if len(text) != 6 or not color.startswith("#"):
        raise ValueError(f"A colour must be written #rrggbb, got {color!r}")
    return ", ".join(str(int(text[i : i + 2], 16)) for i in (0, 2, 4))


# -- search -------------------------------------------------------------------------------------


def render_search(data: Mapping[str, Any], options: Mapping[str, Any] = {}) -> str:
    """A query and its hits ({"query", "hits": [{"id", "text", "score"}]}), best first, with
    verdicts at the threshold (if any) and, with options["links"], links to the pair view."""
    if "hits" not in data:
        raise ValueError("A search result to render needs the key hits (and query)")
    hits = list(data["hits"])
    query = escape(str(data.get("query", "")))
    items = "".join(
        f'<li class="ss-hit">{scored(hit.get("score"), data, options)}'
        f'<span class="ss-id">{escape(str(hit.get("id", "")))}</span>'
        f"{member_text(str(data.get('query', '')), hit, 'ss-hit-text', options)}</li>"
        for hit in hits
    )
    body = f'<ol class="ss-hits">{items}</ol>' if hits else '<p class="ss-empty">No hits.</p>'
    return (
        f'<div class="ss-search-result"><div class="ss-head">Query <q class="ss-query">{query}</q> · '
        f'<span class="ss-count">{len(hits)} hit{"" if len(hits) == 1 else "s"}</span>'
        f"{thresholds_note(data, options)}</div>{body}</div>"
    )


# -- groups -------------------------------------------------------------------------------------


def render_groups(
    groups: Iterable[Mapping[str, Any]], limit: Optional[int] = None, offset: int = 0, options: Mapping[str, Any] = {}
) -> str:
    """Duplicate groups (rows of `dedupe --groups`), largest first, `limit` from `offset`; a
    member's "score" shows with its verdict at options["threshold"]."""
    ordered = sort_groups(groups)
    shown = ordered[offset : offset + limit if limit is not None else None]
    sections = "".join(
        f'<section class="ss-group" data-group="{escape(str(g.get("group", "")))}">'
        f'<h3>Group {escape(str(g.get("group", "")))} <span class="ss-size">· {len(g["members"])} texts</span></h3>'
        '<ul class="ss-members">'
        + "".join(
            f'<li class="ss-member">{member_score(m, i, options, has_scores(g))}'
            f'<span class="ss-id">{escape(str(m.get("id", "")))}</span>'
            f"{member_text(str(g['members'][0].get('text') or ''), m, 'ss-member-text', options, i > 0)}</li>"
            for i, m in enumerate(g["members"])
        )
        + "</ul></section>"
        for g in shown
    )
    if not ordered:
        return '<div class="ss-groups"><p class="ss-empty">No groups.</p></div>'
    first, last = offset + 1, offset + len(shown)
    note = f"{len(ordered)} groups" if len(shown) == len(ordered) else f"groups {first}–{last} of {len(ordered)}"
    scores = "; each text scored against its group's first" if any(has_scores(g) for g in shown) else ""
    head = f'<div class="ss-head">{note}, largest first{scores}{thresholds_note({}, options)}</div>'
    return f'<div class="ss-groups">{head}{sections}</div>'


def has_scores(group: Mapping[str, Any]) -> bool:
    return any("score" in m for m in group["members"])


def member_score(member: Mapping[str, Any], i: int, options: Mapping[str, Any], scores: bool) -> str:
    """A member's score and verdict in a column, the first's place marked (when the group has scores)."""
    if not scores:
        return ""
    inner = scored(member["score"], {}, options) if "score" in member else "the first" if i == 0 else ""
    return f'<span class="ss-member-score">{inner}</span>'


def sort_groups(groups: Iterable[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Groups, checked, by size (largest first), then in file order."""
    rows = list(groups)
    for i, row in enumerate(rows):
        if not is_group(row):
            raise ValueError(
                f'Group {i}: expected a dedupe --groups row with a \'members\' list of {{"id", "text"}} objects, '
                f"got {row!r:.80}"
            )
    return sorted(rows, key=lambda row: -len(row["members"]))  # stable: ties stay in file order


def is_group(row: Any) -> bool:
    """Whether `row` is a dedupe --groups row: a 'members' list of {"id", "text"} objects."""
    members = row.get("members") if isinstance(row, Mapping) else None
    return isinstance(members, list) and all(isinstance(member, Mapping) for member in members)


# -- scores and verdicts ------------------------------------------------------------------------


def is_duplicate(score: float, threshold: float) -> bool:
    """The pipe's verdict on a pair's score (`Verdict.of`): a duplicate from its decision threshold on."""
    from ..component import Verdict

    return Verdict.of(score, threshold).duplicate


def thresholds(data: Mapping[str, Any], options: Mapping[str, Any]) -> Tuple[Optional[float], Optional[float]]:
    """The decision and dedupe thresholds that `data` or else `options` give (None: not given)."""
    threshold, dedupe = (data.get(key, options.get(key)) for key in ("threshold", "dedupe_threshold"))
    return (None if threshold is None else float(threshold)), (None if dedupe is None else float(dedupe))


def scored(score: Any, data: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """A score and, at a known threshold, its verdict (duplicate or not a duplicate)."""
    text = f'<span class="ss-score" data-score="{escape(number(score))}">{score_text(score)}</span>'
    threshold = thresholds(data, options)[0]
    if threshold is None or score_text(score) == "n/a":
        return text
    duplicate = is_duplicate(float(score), threshold)
    sign = ">=" if duplicate else "<"
    return (
        f'{text} <span class="ss-verdict ss-{"duplicate" if duplicate else "distinct"}" '
        f'title="score {score_text(score)} {sign} threshold {score_text(threshold)}">'
        f"{'duplicate' if duplicate else 'not a duplicate'}</span>"
    )


def thresholds_note(data: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """' · threshold 0.6200 · dedupe threshold 0.8000', the ones known."""
    threshold, dedupe = thresholds(data, options)
    note = "" if threshold is None else f" · threshold {score_text(threshold)}"
    note += "" if dedupe is None else f" · dedupe threshold {score_text(dedupe)}"
    return f'<span class="ss-thresholds">{note}</span>' if note else ""


def member_text(first: str, item: Mapping[str, Any], cls: str, options: Mapping[str, Any], link: bool = True) -> str:
    """A hit's or member's text; with options["links"], a link to the pair view of it and `first`."""
    text = str(item.get("text") or "")
    if not (options.get("links") and link and text):
        return f'<span class="{cls}">{escape(text)}</span>'
    href = "pair?" + urlencode({"a": first, "b": text})
    return f'<a class="{cls}" href="{escape(href)}" title="Compare in the pair view">{escape(text)}</a>'


def model_card(meta: Mapping[str, Any], pipe_name: str, options: Mapping[str, Any]) -> str:
    """The served pipeline: its package name and version, description, training data (meta.json's
    sources) and thresholds."""
    name = f"{meta.get('lang', '')}_{meta.get('name', 'pipeline')}"
    sources = [
        " ".join(str(s.get(key)) for key in ("name", "license") if s.get(key)) if isinstance(s, Mapping) else str(s)
        for s in meta.get("sources") or []
    ]
    parts = [f"<strong>{escape(name)}</strong> {escape(str(meta.get('version', '')))} (pipe {escape(pipe_name)})"]
    if meta.get("description"):
        parts.append(escape(str(meta["description"])))
    parts.append("trained on " + escape("; ".join(sources)) if sources else "training data not given in its meta.json")
    return f'<p class="ss-model">Model: {" · ".join(parts)}{thresholds_note({}, options)}</p>'


# -- fragment and page --------------------------------------------------------------------------


def fragment(markup: str) -> str:
    """Markup that carries its own style, for a notebook cell or another page."""
    return f'<div class="ss-displacy"><style>{static_text("displacy.css")}</style>{markup}</div>'


def page(
    markup: str, *, title: str = "spacy-siamese", nav: Sequence[str] = (), active: str = "", script: bool = False
) -> str:
    """A whole HTML page: the stylesheet inline, links to the `nav` views, the script by URL
    (the server sends it as displacy.js, so its pages allow no inline script)."""
    links = "".join(
        f'<a href="{name}"{" aria-current=page" if name == active else ""}>{label}</a>'
        for name, label in NAV.items()
        if name in nav
    )
    header = f'<header class="ss-nav"><strong>spacy-siamese</strong>{links}</header>' if links else ""
    tag = '<script src="displacy.js" defer></script>' if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{static_text('displacy.css')}</style>{tag}</head>"
        f'<body class="ss-displacy">{header}<main>{markup}</main></body></html>\n'
    )


def number(value: Any) -> str:
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return ""


def score_text(value: Any) -> str:
    try:
        score = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return f"{score:.4f}" if math.isfinite(score) else "n/a"


def json_safe(value: Any) -> Any:
    """Floats that JSON can carry (nan and inf as None), recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
