"""The served page: a WSGI app (pair, search and groups views, JSON endpoints) and a threaded
`wsgiref` server that batches the searches that arrive together."""

import io
import json
import logging
import math
import threading
import time
from concurrent.futures import Future
from html import escape
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer
from wsgiref.simple_server import make_server as wsgi_server

import numpy
from spacy.language import Language
from spacy.util import find_available_port

from ..component import SiameseSimilarity, get_similarity_pipe
from ..corpora.base import Malformed, json_value, numbered_lines
from ..defaults import EXPLAIN_BUDGET
from ..explain import ExplainTimeout, explain_pair
from ..search import SimilarityIndex
from .checks import (
    LOCAL_NAMES,
    HTTPError,
    as_int,
    check_host,
    check_length,
    check_origin,
    parse_form,
    query_string,
    read_body,
    require,
)
from .render import (
    is_duplicate,
    is_group,
    json_safe,
    model_card,
    page,
    render_groups,
    render_pair,
    render_search,
    sort_groups,
    static_text,
)

logger = logging.getLogger(__name__)

Explainer = Callable[[str, str], Dict[str, Any]]
StartResponse = Callable[..., Any]
MAX_K = 100
# Seconds a connection may wait for the client (a request line, headers or body that does not
# arrive): a client that stops sending does not hold a thread forever.
REQUEST_TIMEOUT = 30.0
# Connections the system holds while the server accepts others: a crowd waits, none is reset.
LISTEN_BACKLOG = 1024
# EXPLAIN_BUDGET (in defaults.py): seconds a pipeline's explanation may take, waiting for another
# one included: Shapley values are sampled from the permutations scored by then (fewer than the
# explain command's), and a text of which not one is scored in time gets a 503. One explanation
# runs at a time; searches do not wait for it.
GROUPS_PER_PAGE = 100
HEADERS = [("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store")]  # of every answer
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'self'"
)


class DisplacyApp:
    """The WSGI app of `serve`: views /pair, /search, /groups and / (`markup`, else the first
    view); /api/explain?a=&b= and /api/search?q=&k= answer JSON with the data and its `html`."""

    def __init__(
        self,
        *,
        nlp: Optional[Language] = None,
        index: Union[SimilarityIndex, str, Path, None] = None,
        groups: Union[str, Path, Iterable[Mapping[str, Any]], None] = None,
        markup: Optional[str] = None,
        explain: Optional[Explainer] = None,
        options: Optional[Mapping[str, Any]] = None,
        explain_budget: float = EXPLAIN_BUDGET,
        hosts: Iterable[str] = (),
    ) -> None:
        self.nlp = nlp
        self.options: Dict[str, Any] = dict(options or {})
        self.explain = explain  # else the pipeline's own explanations (`explain_pair`)
        if not explain_budget > 0:
            raise ValueError(f"explain_budget must be positive, got {explain_budget}")
        self.explain_budget = explain_budget
        self.hosts = {*LOCAL_NAMES, *(name.lower().rstrip(".") for name in hosts)}
        self.index: Optional[SimilarityIndex] = None
        self.ids: List[Any] = []
        if isinstance(index, (str, Path)):
            if nlp is None:
                raise ValueError("Serving a saved index needs the pipeline that built it (nlp)")
            self.index, self.ids = load_index(index, nlp)
        elif index is not None:
            self.index, self.ids = index, list(range(len(index)))
        # the verdicts' thresholds, and the model card of the pages
        self.pipe: Optional[SiameseSimilarity] = None
        self.meta: Dict[str, Any] = {}
        if self.index is not None:
            self.pipe, self.meta = self.index.pipe, self.index.nlp.meta
        elif nlp is not None:
            self.pipe, self.meta = get_similarity_pipe(nlp), nlp.meta
        if self.pipe is not None:
            self.options.setdefault("threshold", self.pipe.threshold)
            self.options.setdefault("dedupe_threshold", self.pipe.dedupe_threshold)
        self.options["links"] = True
        self.groups: Optional[List[Mapping[str, Any]]] = None
        if groups is not None:
            self.groups = sort_groups(read_groups(groups) if isinstance(groups, (str, Path)) else groups)
        self.markup = markup
        # One explanation at a time; searches beside it, those that arrive together in one batch
        # (inference only reads the pipeline's weights and the index, as in spaCy's threaded servers).
        self.explain_lock = threading.Lock()
        self.batched_search = Batcher(self.index.search) if self.index is not None else None
        served = (("pair", explain or nlp), ("search", self.index), ("groups", self.groups))
        self.views = [name for name, source in served if source is not None]
        if not self.views and markup is None:
            raise ValueError("Nothing to serve: give a pipeline, an index, groups or something to render")

    def __call__(self, environ: Dict[str, Any], start_response: StartResponse) -> List[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO") or "/"
        try:
            check_host(environ.get("HTTP_HOST"), self.hosts)
            check_origin(environ.get("HTTP_ORIGIN"), environ.get("HTTP_HOST"))  # a browser's cross-origin fetch
            params = parse_form(query_string(environ), "The query string")
            if method == "POST":
                params.update(parse_form(read_body(environ), "The request body"))
            elif method not in ("GET", "HEAD"):
                raise HTTPError("405 Method Not Allowed", f"{method} is not allowed")
            status, content_type, body = self.route(path, {key: values[-1] for key, values in params.items()})
        except HTTPError as err:
            status, content_type, body = self.error(path, err.status, str(err))
        except ValueError as err:  # a bad input or a pipeline that cannot do it (explain)
            status, content_type, body = self.error(path, "400 Bad Request", str(err))
        except Exception as err:  # a server answers; the traceback goes to the log
            logger.exception("displacy: %s %s failed", method, path)
            status, content_type, body = self.error(path, "500 Internal Server Error", f"{type(err).__name__}: {err}")
        data = body.encode("utf8")
        headers = [("Content-Type", content_type), ("Content-Length", str(len(data))), *HEADERS]
        if content_type.startswith("text/html"):
            headers.append(("Content-Security-Policy", CSP))
        start_response(status, headers)
        return [b"" if method == "HEAD" else data]

    # -- routes ---------------------------------------------------------------------------

    def route(self, path: str, params: Dict[str, str]) -> Tuple[str, str, str]:
        if path == "/displacy.js":
            return OK, "text/javascript; charset=utf-8", static_text("displacy.js")
        if path == "/api/explain":
            require(params, path, "a", "b")
            return OK, JSON, to_json(self.explain_pair(params["a"], params["b"]))
        if path == "/api/search":
            require(params, path, "q")
            return OK, JSON, to_json(self.search(params["q"], params.get("k", "10")))
        if path == "/" and self.markup is not None:
            return OK, HTML, self.page(self.markup, "", "spacy-siamese")
        view = self.views[0] if path == "/" and self.views else path.strip("/")
        pages = {"pair": self.pair_page, "search": self.search_page, "groups": self.groups_page}
        if view in self.views:
            return OK, HTML, pages[view](params)
        raise HTTPError("404 Not Found", f"Nothing at {path}")

    def error(self, path: str, status: str, message: str) -> Tuple[str, str, str]:
        if path.startswith("/api/"):
            return status, JSON, to_json({"error": message})
        body = f'<p class="ss-error" role="alert">{escape(status)}: {escape(message)}</p>'
        return status, HTML, self.page(body, "", status)

    def page(self, markup: str, active: str, title: str) -> str:
        if self.pipe is not None:
            markup = model_card(self.meta, self.pipe.name, self.options) + markup
        return page(markup, title=title, nav=self.views, active=active, script=True)

    # -- the views ------------------------------------------------------------------------

    def pair_page(self, params: Mapping[str, str]) -> str:
        a, b = params.get("a", ""), params.get("b", "")
        result, message = "", ""
        if a or b:
            try:
                result = self.explain_pair(a, b)["html"]
            except (ValueError, HTTPError) as err:
                message = str(err)
        form = (
            '<form id="ss-pair-form" class="ss-form" action="pair" method="get">'
            f'<label for="ss-text-a">Text A</label><textarea id="ss-text-a" name="a" rows="3">{escape(a)}</textarea>'
            f'<label for="ss-text-b">Text B</label><textarea id="ss-text-b" name="b" rows="3">{escape(b)}</textarea>'
            '<button id="ss-explain" type="submit">Compare</button></form>'
        )
        body = (
            f'<section class="ss-view"><h2>Pair</h2>{form}{status(message)}<div id="ss-pair-result">{result}</div>'
            "</section>"
        )
        return self.page(body, "pair", "Pair · spacy-siamese")

    def search_page(self, params: Mapping[str, str]) -> str:
        assert self.index is not None
        query, k = params.get("q", ""), params.get("k", "10")
        result, message = "", ""
        if query.strip():
            try:
                result = self.search(query, k)["html"]
            except ValueError as err:
                message = str(err)
        form = (
            '<form id="ss-search-form" class="ss-form ss-row" action="search" method="get" role="search">'
            f'<input id="ss-query" type="search" name="q" value="{escape(query)}" placeholder="Search the index" '
            'autofocus autocomplete="off" aria-label="Query">'
            f'<label for="ss-k">k</label><input id="ss-k" type="number" name="k" min="1" max="{MAX_K}" '
            f'value="{escape(k)}"><button id="ss-search" type="submit">Search</button></form>'
        )
        body = (
            f'<section class="ss-view"><h2>Search</h2><p class="ss-note">{len(self.index):,} texts indexed</p>'
            f'{form}{status(message)}<div id="ss-search-results">{result}</div></section>'
        )
        return self.page(body, "search", "Search · spacy-siamese")

    def groups_page(self, params: Mapping[str, str]) -> str:
        assert self.groups is not None
        per_page = int(self.options.get("limit") or GROUPS_PER_PAGE)
        n_pages = max(1, math.ceil(len(self.groups) / per_page))
        number = min(max(1, as_int(params.get("page", "1"), "page")), n_pages)
        offset = (number - 1) * per_page
        rows = list(self.groups)
        rows[offset : offset + per_page] = self.scored_groups(rows[offset : offset + per_page])
        markup = render_groups(rows, limit=per_page, offset=offset, options=self.options)
        links = "".join(
            f'<a href="groups?page={n}" rel="{rel}">{label}</a>'
            for n, rel, label in ((number - 1, "prev", "← previous"), (number + 1, "next", "next →"))
            if 1 <= n <= n_pages
        )
        pager = f'<nav class="ss-pager">{links}</nav>' if links else ""
        body = f'<section class="ss-view"><h2>Duplicate groups</h2>{markup}{pager}</section>'
        return self.page(body, "groups", "Groups · spacy-siamese")

    # -- data -----------------------------------------------------------------------------

    def explain_pair(self, a: str, b: str) -> Dict[str, Any]:
        if self.explain is None and self.nlp is None:
            raise HTTPError("404 Not Found", "No pipeline is served: nothing explains pairs")
        for name, text in (("a", a), ("b", b)):
            check_length(f"Text {name}", text, "explains", "explain")
        deadline = time.monotonic() + self.explain_budget
        if not self.explain_lock.acquire(timeout=self.explain_budget / 2):
            raise HTTPError("503 Service Unavailable", "Another explanation is running: try again in a moment")
        try:
            if self.explain is not None:
                data = dict(self.explain(a, b))
            else:  # the pipeline's own explanation keeps to explain_budget
                assert self.nlp is not None
                data = explain_pair(self.nlp, a, b, deadline=deadline).to_dict()
        except ExplainTimeout as err:
            raise HTTPError(
                "503 Service Unavailable",
                f"{err} (the page's budget is {self.explain_budget:g} s: shorter texts, or the explain command)",
            ) from None
        finally:
            self.explain_lock.release()
        data = json_safe(data)
        if self.options.get("threshold") is not None and data.get("score") is not None:
            data["duplicate"] = is_duplicate(data["score"], self.options["threshold"])
        data["html"] = render_pair(data, self.options)
        return data

    def search(self, query: str, k: Union[str, int]) -> Dict[str, Any]:
        if self.index is None or self.batched_search is None:
            raise HTTPError("404 Not Found", "No index is served")
        check_length("The query", query, "searches for", "search")
        n = as_int(k, "k")
        if n < 1:
            raise ValueError(f"k must be at least 1, got {n}")
        n = min(n, MAX_K)
        hits = self.batched_search(query, n) if query.strip() else []
        texts = self.index.texts
        threshold, dedupe = self.options.get("threshold"), self.options.get("dedupe_threshold")
        found = [
            {"id": self.ids[i], "text": texts[i] if texts is not None else "", "score": s}
            | ({} if threshold is None else {"duplicate": is_duplicate(s, threshold)})
            for i, s in hits
        ]
        data = json_safe({"query": query, "k": n, "threshold": threshold, "dedupe_threshold": dedupe, "hits": found})
        data["html"] = render_search(data, self.options)
        return data

    def scored_groups(self, groups: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
        """Groups whose members, after the first, carry their score against the first (the pipe's)."""
        if self.pipe is None or not groups:
            return groups
        sizes = [len(g["members"]) for g in groups]
        vectors = self.pipe.encode([str(m.get("text") or "") for g in groups for m in g["members"]])
        firsts = numpy.repeat(vectors[numpy.cumsum([0, *sizes[:-1]])], sizes, axis=0)
        scores = iter(self.pipe.compare(firsts, vectors).tolist())
        scored: List[Mapping[str, Any]] = []
        for g in groups:
            members = [{**m, "score": score} if i else m for i, (m, score) in enumerate(zip(g["members"], scores))]
            scored.append({**g, "members": members})
        return scored


OK = "200 OK"
HTML = "text/html; charset=utf-8"
JSON = "application/json"


def status(message: str) -> str:
    """The page's status line (the script writes its messages there too)."""
    cls = "ss-status ss-error" if message else "ss-status"
    return f'<div id="ss-status" class="{cls}" role="status" aria-live="polite">{escape(message)}</div>'


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


class Batcher:
    """Searches from many threads, run as batches: a thread whose query is still waiting when it
    gets the lock searches for every waiting query of its k at once, and hands out their hits."""

    def __init__(self, search: Callable[..., List[List[Tuple[int, float]]]]) -> None:
        self.search = search
        self.searching = threading.Lock()
        self.queue_lock = threading.Lock()
        self.waiting: List[Tuple[str, int, Future]] = []

    def __call__(self, query: str, k: int) -> List[Tuple[int, float]]:
        mine: Future = Future()
        with self.queue_lock:
            self.waiting.append((query, k, mine))
        with self.searching:  # the batch searched meanwhile may have taken this query along
            if not mine.done():
                with self.queue_lock:
                    batch = [item for item in self.waiting if item[1] == k]
                    self.waiting = [item for item in self.waiting if item[1] != k]
                try:
                    found = self.search([query for query, _, _ in batch], k=k)
                except Exception as err:
                    for _, _, future in batch:
                        future.set_exception(err)
                else:
                    for (_, _, future), hits in zip(batch, found):
                        future.set_result(hits)
        return mine.result()


# -- inputs -------------------------------------------------------------------------------------


def load_index(path: Union[str, Path], nlp: Language) -> Tuple[SimilarityIndex, List[Any]]:
    """An index written by `python -m spacy_siamese index` and its ids (positions without ids.jsonl)."""
    try:
        index = SimilarityIndex.load(path, nlp)
    except EOFError as err:  # numpy's word for an empty or cut .npy file (click would print "Aborted.")
        raise ValueError(f"{path}: a file of the index is empty or cut short ({err}): build the index again") from None
    return index, index.ids if index.ids is not None else list(range(len(index)))


def read_groups(path: Union[str, Path]) -> List[Dict[str, Any]]:
    """The rows of a `dedupe --groups` JSONL file, checked: {"group", "size", "members": [{"id", "text"}]}."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"Groups file not found: {path}")
    rows = []
    for number, text, _, error in numbered_lines(path):
        if error:
            raise ValueError(f"{path}:{number}: {error}")
        if not text.strip():
            continue
        try:
            row = json_value(text)
        except Malformed as err:
            raise ValueError(f"{path}:{number}: not a JSON object ({err})") from None
        if not is_group(row):
            raise ValueError(
                f'{path}:{number}: not a group of `dedupe --groups` (a \'members\' list of {{"id", "text"}} objects)'
            )
        rows.append(row)
    return rows


# -- the server ---------------------------------------------------------------------------------


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """A thread a request: a browser's idle speculative connection does not block the others."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG


class QuietHandler(WSGIRequestHandler):
    timeout = REQUEST_TIMEOUT

    def handle(self) -> None:
        try:
            super().handle()
        except TimeoutError as err:  # no request line or headers in time: drop the connection
            self.log_error("Request timed out: %r", err)
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s - %s", self.address_string(), format % args)

    def get_stderr(self) -> io.TextIOBase:
        """wsgiref prints a traceback here when it cannot send a response (a client that went away
        or stopped reading: the app answers its own errors); it goes to the debug log instead."""
        return DebugLog()


class DebugLog(io.TextIOBase):
    """A text stream whose lines go to this module's debug log."""

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                logger.debug("displacy: %s", line)
        return len(text)


def make_server(
    app: Callable[..., Any], host: str = "127.0.0.1", port: int = 5000, auto_select_port: bool = False
) -> WSGIServer:
    """A threaded wsgiref server for the app, bound but not yet serving (`serve_forever()`);
    port 0 takes a free port (see `server_url`), `auto_select_port` the next free one."""
    if port and auto_select_port:
        port = find_available_port(port, host, auto_select_port)
    try:
        return wsgi_server(host, port, app, server_class=ThreadingWSGIServer, handler_class=QuietHandler)
    except OSError as err:
        raise ValueError(f"Cannot serve on {host}:{port}: {err.strerror or err}") from None


def server_url(server: WSGIServer) -> str:
    """Where a browser on this machine finds the server."""
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else str(host)
    shown = "localhost" if host in ("0.0.0.0", "", "::") else host
    return f"http://{shown}:{port}"
