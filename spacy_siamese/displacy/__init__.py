"""Look at similarities in the manner of spaCy's displaCy: `render` (HTML, or a notebook) and
`serve` (the page in a browser). Examples: docs/explain.md."""

import logging
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Union

from spacy.language import Language
from spacy.util import is_in_jupyter

from ..search import SimilarityIndex
from .render import STYLES, fragment, render_groups, render_pair, render_search
from .render import page as html_page
from .server import EXPLAIN_BUDGET, DisplacyApp, Explainer, load_index, make_server, read_groups, server_url

logger = logging.getLogger(__name__)


def render(
    obj: Any,
    style: str = "pair",
    page: bool = False,
    jupyter: Optional[bool] = None,
    options: Optional[Dict[str, Any]] = None,
) -> Optional[str]:
    """Render a similarity visualisation as HTML.

    obj: for "pair" an explanation (or its dict, or a list); for "search" {"query", "hits"} (or
        a list); for "groups" the rows of a `dedupe --groups` file, or its path.
    style (str): "pair", "search" or "groups".
    page (bool): a whole HTML page instead of a fragment. jupyter (bool): None detects a notebook.
    options (dict): "colors" ({"positive": "#rrggbb", "negative": ...}); "limit" for groups.
    RETURNS (str): The markup; None when displayed in a notebook.
    """
    markup = _markup(obj, style, options or {})
    html = html_page(markup, title=f"spacy-siamese: {style}") if page else fragment(markup)
    if jupyter or (jupyter is None and is_in_jupyter()):
        from IPython.display import HTML, display

        display(HTML(html))
        return None
    return html


def serve(
    obj: Any = None,
    style: str = "pair",
    *,
    nlp: Optional[Language] = None,
    index: Union[SimilarityIndex, str, Path, None] = None,
    groups: Union[str, Path, Iterable[Mapping[str, Any]], None] = None,
    explain: Optional[Explainer] = None,
    options: Optional[Dict[str, Any]] = None,
    port: int = 5000,
    host: str = "127.0.0.1",
    auto_select_port: bool = False,
    hosts: Iterable[str] = (),
    explain_budget: float = EXPLAIN_BUDGET,
) -> None:
    """Serve the page at http://host:port until interrupted (Ctrl+C).

    obj, style: something to `render`, shown at /.
    nlp (Language): a pipeline with a similarity pipe: the pair view (/pair).
    index (SimilarityIndex or path): an index or the directory `index` wrote: the search view.
    groups (path or rows): a `dedupe --groups` file: the groups view.
    options (dict): as `render`'s; for groups, "limit" is the groups a page.
    hosts (strings): further host names requests may name; others get a 403 (DNS rebinding).
    explain_budget (float): seconds an explanation may take.
    """
    if is_in_jupyter():
        warnings.warn("displacy.serve blocks the notebook: use displacy.render to show the HTML in it", stacklevel=2)
    markup = None if obj is None else _markup(obj, style, options or {})
    app = DisplacyApp(
        nlp=nlp,
        index=index,
        groups=groups,
        markup=markup,
        explain=explain,
        options=options,
        explain_budget=explain_budget,
        hosts=[host, *hosts],
    )
    server = make_server(app, host, port, auto_select_port)
    logger.info("Serving %s on %s", ", ".join(app.views or [style]), server_url(server))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        logger.info("Shutting down the server on %s", server_url(server))
    finally:
        server.server_close()


def _markup(obj: Any, style: str, options: Mapping[str, Any]) -> str:
    """The markup of a style for its input: one or a list (groups: the rows, or their file's path)."""
    if style == "pair":
        items = obj if isinstance(obj, (list, tuple)) else [obj]
        return "\n".join(render_pair(item.to_dict() if hasattr(item, "to_dict") else item, options) for item in items)
    if style == "search":
        return "\n".join(render_search(item, options) for item in ([obj] if isinstance(obj, Mapping) else obj))
    if style == "groups":
        rows = read_groups(obj) if isinstance(obj, (str, Path)) else obj
        return render_groups(rows, limit=options.get("limit"), options=options)
    raise ValueError(f"Unknown displacy style {style!r}: use one of {', '.join(STYLES)}")


__all__ = ["DisplacyApp", "STYLES", "load_index", "make_server", "read_groups", "render", "serve", "server_url"]
