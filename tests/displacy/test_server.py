"""The served page's WSGI app (called directly, no socket) and its server."""

import http.client
import io
import json
import logging
import random
import socket
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from html import escape
from urllib.parse import urlencode
from wsgiref.simple_server import WSGIServer
from wsgiref.util import setup_testing_defaults

import numpy
import pytest

from spacy_siamese import SimilarityIndex, displacy
from spacy_siamese.displacy.server import Batcher, QuietHandler
from spacy_siamese.explain import SAMPLES

from ..conftest import PAIRS
from .conftest import GROUPS, TEXTS


def call(
    app,
    path,
    query="",
    method="GET",
    body=b"",
    content_type="application/x-www-form-urlencoded",
    content_length=None,
    host="127.0.0.1",
    origin=None,
):
    """(status, headers, text) of one request to a WSGI app."""
    environ = {"PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": method, "HTTP_HOST": host}
    if origin is not None:
        environ["HTTP_ORIGIN"] = origin
    if body:
        environ.update(CONTENT_LENGTH=content_length or str(len(body)), CONTENT_TYPE=content_type)
    environ["wsgi.input"] = io.BytesIO(body)
    setup_testing_defaults(environ)
    seen = {}

    def start_response(status, headers):
        seen.update(status=status, headers=dict(headers))

    text = b"".join(app(environ, start_response)).decode("utf8")
    return seen["status"], seen["headers"], text


@pytest.fixture
def fixed(pair):
    """An app whose explainer returns the hand-built pair (with the texts asked for)."""
    return displacy.DisplacyApp(explain=lambda a, b: dict(pair, text_a=a, text_b=b), groups=GROUPS)


def test_explain_endpoint_get_and_post(fixed, pair):
    status, headers, text = call(fixed, "/api/explain", urlencode({"a": "x <y>", "b": "z"}))
    assert status == "200 OK" and headers["Content-Type"] == "application/json"
    data = json.loads(text)
    assert data["score"] == pair["score"] and data["text_a"] == "x <y>"
    assert data["html"] == displacy.render(pair, jupyter=False).split("</style>", 1)[1][: -len("</div>")]
    status, _, text = call(fixed, "/api/explain", method="POST", body=urlencode({"a": "p", "b": "q"}).encode())
    assert status == "200 OK" and json.loads(text)["text_b"] == "q"


def test_pages_render_on_the_server_too(fixed):
    status, headers, text = call(fixed, "/pair", urlencode({"a": "one", "b": "two"}))
    assert status == "200 OK" and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert 'id="ss-pair-form"' in text and ">0.7345<" in text and '<script src="displacy.js" defer>' in text
    assert ">one</textarea>" in text
    assert call(fixed, "/")[2] == call(fixed, "/pair")[2]  # the first view
    status, headers, text = call(fixed, "/displacy.js")
    assert status == "200 OK" and headers["Content-Type"].startswith("text/javascript") and "api/explain" in text
    nav = call(fixed, "/groups")[2]
    assert '<a href="pair">Pair</a>' in nav and '<a href="groups" aria-current=page>Groups</a>' in nav
    assert 'href="search"' not in nav  # no index served


def test_errors_are_json_for_the_api_and_pages_otherwise(fixed):
    status, headers, text = call(fixed, "/api/search", "q=x")
    assert status == "404 Not Found" and json.loads(text) == {"error": "No index is served"}
    status, headers, text = call(fixed, "/nowhere")
    assert status == "404 Not Found" and "Nothing at /nowhere" in text and headers["Content-Type"].startswith("text/")
    assert call(fixed, "/pair", method="DELETE")[0] == "405 Method Not Allowed"

    def broken(a, b):
        raise ValueError(f"cannot explain <{a}>")

    app = displacy.DisplacyApp(explain=broken)
    status, _, text = call(app, "/api/explain", "a=x&b=y")
    assert status == "400 Bad Request" and json.loads(text) == {"error": "cannot explain <x>"}
    status, _, text = call(app, "/pair", "a=x&b=y")
    assert status == "200 OK" and "cannot explain &lt;x&gt;" in text and "<x>" not in text
    with pytest.raises(ValueError, match="Nothing to serve"):
        displacy.DisplacyApp()


def test_groups_pages(groups_file):
    app = displacy.DisplacyApp(groups=groups_file, options={"limit": 1})
    first = call(app, "/groups")[2]
    assert 'data-group="1"' in first and 'data-group="0"' not in first and 'rel="next"' in first
    second = call(app, "/groups", "page=2")[2]
    assert 'data-group="0"' in second and 'rel="prev"' in second and 'rel="next"' not in second
    assert call(app, "/groups", "page=9")[2] == second
    assert call(app, "/groups", "page=x")[0] == "400 Bad Request"


def test_search_with_a_saved_index(saved, tweak_nlp):
    app = displacy.DisplacyApp(nlp=tweak_nlp, index=saved / "index")
    assert app.views == ["pair", "search"]
    status, _, text = call(app, "/api/search", urlencode({"q": TEXTS[3], "k": 3}))
    data = json.loads(text)
    expected = SimilarityIndex.build(tweak_nlp, TEXTS, progress=False).search([TEXTS[3]], k=3)[0]
    assert [(h["id"], h["score"]) for h in data["hits"]] == [(f"q{i}", pytest.approx(s)) for i, s in expected]
    assert data["hits"][0] == {"id": "q3", "text": TEXTS[3], "score": pytest.approx(1.0), "duplicate": True}
    assert data["k"] == 3 and 'class="ss-hit"' in data["html"]
    assert json.loads(call(app, "/api/search", "q=%20&k=5")[2])["hits"] == []
    assert json.loads(call(app, "/api/search", "q=&k=5")[2])["hits"] == []
    assert json.loads(call(app, "/api/search", "q=python&k=1000")[2])["k"] == 100
    assert json.loads(call(app, "/api/search", "q=python&k=many")[2]) == {
        "error": "k must be a whole number, got 'many'"
    }
    for k in (0, -3):  # as the search command: k is at least 1
        status, _, text = call(app, "/api/search", f"q=python&k={k}")
        assert status == "400 Bad Request" and json.loads(text) == {"error": f"k must be at least 1, got {k}"}
    page = call(app, "/search", urlencode({"q": TEXTS[3]}))[2]
    assert (
        f'value="{TEXTS[3]}"' in page and page.count('class="ss-hit"') == 10 and f"{len(TEXTS)} texts indexed" in page
    )


def test_the_pipeline_explainer(tweak_nlp):
    app = displacy.DisplacyApp(nlp=tweak_nlp)
    a, b = "How do I learn Python fast?", "What is the quickest way to learn Python?"
    data = json.loads(call(app, "/api/explain", urlencode({"a": a, "b": b}))[2])
    assert data["score"] == pytest.approx(tweak_nlp(a).similarity(tweak_nlp(b)), abs=1e-6)
    assert data["text_a"] == a and data["text_b"] == b
    for key, text in (("tokens_a", a), ("tokens_b", b)):
        assert "".join(t["text"] + t["ws"] for t in data[key]) == text
        assert {t["text"].lower() for t in data[key] if t["contribution"] > 0} == {"learn", "python"}
    assert 'class="ss-tok ss-positive"' in data["html"]


def test_the_server_answers_over_http(fixed):
    server = displacy.make_server(fixed, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = displacy.server_url(server)
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/api/explain?a=1&b=2", timeout=10) as response:
            assert json.loads(response.read())["text_a"] == "1"
        with urllib.request.urlopen(f"{url}/groups", timeout=10) as response:
            assert "Duplicate groups" in response.read().decode("utf8")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    anywhere = displacy.make_server(fixed, "0.0.0.0", 0)
    assert displacy.server_url(anywhere).startswith("http://localhost:")
    anywhere.server_close()


@contextmanager
def serving(app):
    """The (host, port) of a server of `app` on a free port, serving in a thread until the block ends."""
    server = displacy.make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def receive_all(sock):
    """What the server sends until it closes the connection (a socket.timeout if it never does)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_the_server_does_not_wait_forever_for_a_client():
    from spacy_siamese.displacy.server import REQUEST_TIMEOUT

    assert QuietHandler.timeout == REQUEST_TIMEOUT and 0 < REQUEST_TIMEOUT <= 120


def test_a_client_that_stops_sending_gets_its_connection_closed(fixed, monkeypatch, capsys, caplog):
    """A body shorter than its Content-Length gets a 408 once the timeout passes, a connection
    without a request is closed; neither holds a thread nor prints a traceback."""
    monkeypatch.setattr(QuietHandler, "timeout", 0.5)
    request = b"POST /api/explain HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\na=x&b=y"
    with serving(fixed) as address:
        with socket.create_connection(address, timeout=10) as client:
            client.sendall(request)
            answer = receive_all(client).decode("utf8")
        assert answer.startswith("HTTP/1.0 408 Request Timeout")
        assert "request body of 100 bytes (Content-Length) did not arrive in time" in answer
        with socket.create_connection(address, timeout=10) as client:
            assert receive_all(client) == b""  # nothing sent: closed
        with socket.create_connection(address, timeout=10) as client:  # the body ends early: not served short
            client.sendall(request)
            client.shutdown(socket.SHUT_WR)
            answer = receive_all(client).decode("utf8")
        assert answer.startswith("HTTP/1.0 400 Bad Request") and "ended after 7 of its 100 bytes" in answer
        with urllib.request.urlopen(f"http://{address[0]}:{address[1]}/api/explain?a=1&b=2", timeout=10) as response:
            assert json.loads(response.read())["text_a"] == "1"  # still serving
    assert "Traceback" not in capsys.readouterr().err
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_a_client_that_stops_reading_is_dropped_without_a_traceback(monkeypatch, capsys, caplog):
    """A response that cannot be sent in time (the client reads nothing) ends that request; the
    traceback wsgiref prints goes to the debug log, and the server goes on serving."""
    monkeypatch.setattr(QuietHandler, "timeout", 0.5)
    body = b"x" * 20_000_000  # more than the kernel buffers hold

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", str(len(body)))])
        return [body]

    caplog.set_level(logging.DEBUG, logger="spacy_siamese.displacy.server")
    with serving(app) as address:
        with socket.socket() as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
            client.connect(address)
            client.sendall(b"GET / HTTP/1.0\r\n\r\n")
            client.settimeout(10)
            deadline, printed = time.monotonic() + 10, ""
            while "TimeoutError" not in caplog.text + printed:  # the server gives up on the send
                assert time.monotonic() < deadline, "the server never gave up on the client"
                time.sleep(0.1)
                printed += capsys.readouterr().err
        with urllib.request.urlopen(f"http://{address[0]}:{address[1]}/", timeout=10) as response:
            assert len(response.read()) == len(body)  # still serving
    assert "Traceback" not in printed + capsys.readouterr().err


def test_serve_until_interrupted(pair, monkeypatch):
    """`serve(obj, style)` shows the rendering at /, like spaCy's displacy.serve."""
    served = []

    def serve_forever(self, poll_interval=0.5):
        served.append((self.server_address, call(self.get_app(), "/")))
        raise KeyboardInterrupt

    monkeypatch.setattr(WSGIServer, "serve_forever", serve_forever)
    displacy.serve(pair, style="pair", groups=GROUPS, port=0, host="127.0.0.1")
    ((address, (status, _, text)),) = served
    assert address[0] == "127.0.0.1" and address[1] > 0
    assert status == "200 OK" and ">0.7345<" in text and '<a href="groups">Groups</a>' in text


def test_malformed_requests_get_a_4xx_naming_the_problem(fixed, saved, tweak_nlp):
    """A request the API cannot read is refused with the reason, never read as empty texts."""
    for query, missing in (("", "a, b"), ("a=x", "b"), ("b=x", "a")):
        status, _, text = call(fixed, "/api/explain", query)
        assert status == "400 Bad Request" and json.loads(text)["error"].endswith(f"missing: {missing}")
    status, _, text = call(displacy.DisplacyApp(nlp=tweak_nlp, index=saved / "index"), "/api/search", "k=3")
    assert status == "400 Bad Request" and json.loads(text)["error"].endswith("missing: q")
    body = json.dumps({"a": "x", "b": "y"}).encode()
    status, _, text = call(fixed, "/api/explain", method="POST", body=body, content_type="application/json")
    assert status == "415 Unsupported Media Type" and "application/x-www-form-urlencoded" in json.loads(text)["error"]
    status, _, text = call(fixed, "/api/explain", method="POST", body=b"a=\xff&b=y")
    assert status == "400 Bad Request" and json.loads(text)["error"].startswith("The request body is not UTF-8")
    for query in ("a=%ff&b=y", "a=\xff&b=y"):  # escaped, and as a server passes a raw byte (latin-1)
        status, _, text = call(fixed, "/api/explain", query)
        assert status == "400 Bad Request" and json.loads(text)["error"].startswith("The query string is not UTF-8")
    # a raw UTF-8 character (curl does not escape it) reaches the app as latin-1, and is read as UTF-8
    assert json.loads(call(fixed, "/api/explain", "a=caf\xc3\xa9&b=y")[2])["text_a"] == "café"
    status, _, text = call(fixed, "/api/explain", method="POST", body=b"a=x&b=y", content_length="many")
    assert status == "400 Bad Request" and "Content-Length" in json.loads(text)["error"]
    # a form the page's script sends (with a charset) and a body without a content type are read
    ok = call(
        fixed,
        "/api/explain",
        method="POST",
        body=b"a=x&b=y",
        content_type="application/x-www-form-urlencoded;charset=UTF-8",
    )
    assert ok[0] == "200 OK" and json.loads(ok[2])["text_b"] == "y"
    assert call(fixed, "/api/explain", method="POST", body=b"a=x&b=y", content_type="")[0] == "200 OK"


def test_a_text_too_long_to_explain_interactively_is_refused(fixed):
    """A long text would hold the pipeline (one request at a time) for minutes: it gets a 413."""
    from spacy_siamese.displacy.checks import MAX_TEXT

    long = "word " * (MAX_TEXT // 5 + 1)
    status, _, text = call(fixed, "/api/explain", method="POST", body=urlencode({"a": "x", "b": long}).encode())
    assert status == "413 Payload Too Large" and json.loads(text)["error"].startswith(
        f"Text b has {len(long):,} characters"
    )
    status, _, text = call(fixed, "/pair", urlencode({"a": long, "b": "x"}))
    assert status == "200 OK" and f"Text a has {len(long):,} characters" in text and 'id="ss-pair-form"' in text
    assert call(fixed, "/api/explain", urlencode({"a": long[:MAX_TEXT], "b": "x"}))[0] == "200 OK"


def test_the_server_answers_only_to_hosts_it_serves(fixed):
    """DNS rebinding: a page of evil.example.com, its name resolved to this server, is refused."""
    for host in ("evil.example.com", "evil.example.com:5000", "localhost.evil.example.com"):
        status, _, text = call(fixed, "/api/explain", "a=1&b=2", host=host)
        assert status == "403 Forbidden" and "does not answer to the host" in json.loads(text)["error"]
        status, _, text = call(fixed, "/groups", host=host)
        assert status == "403 Forbidden" and "Duplicate groups" not in text
    for host in ("127.0.0.1:5000", "localhost:5000", "LOCALHOST", "[::1]:5000", "192.168.1.7", "app.localhost:80"):
        assert call(fixed, "/api/explain", "a=1&b=2", host=host)[0] == "200 OK", host
    assert call(fixed, "/groups", host=":5000")[0] == "400 Bad Request"
    named = displacy.DisplacyApp(groups=GROUPS, hosts=["Box.LAN"])
    assert call(named, "/groups", host="box.lan:5000")[0] == "200 OK"
    assert call(named, "/groups", host="other.lan")[0] == "403 Forbidden"


def test_the_server_binds_this_machine_only_by_default(fixed, monkeypatch):
    server = displacy.make_server(fixed, port=0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()
    served = []
    monkeypatch.setattr(WSGIServer, "serve_forever", lambda self, poll_interval=0.5: served.append(self) or 1 / 0)
    with pytest.raises(ZeroDivisionError):
        displacy.serve(groups=GROUPS, port=0)
    assert served[0].server_address[0] == "127.0.0.1"


def test_a_search_text_is_capped_like_an_explained_one(saved, tweak_nlp):
    from spacy_siamese.displacy.checks import MAX_TEXT

    app = displacy.DisplacyApp(nlp=tweak_nlp, index=saved / "index")
    status, _, text = call(app, "/api/search", method="POST", body=urlencode({"q": "x" * (MAX_TEXT + 1)}).encode())
    assert status == "413 Payload Too Large" and "The query has 2,001 characters" in json.loads(text)["error"]
    assert call(app, "/api/search", urlencode({"q": "python " * (MAX_TEXT // 7)}))[0] == "200 OK"


def long_text(seed):
    """A text of 2,000 characters (the page's cap) of the test pairs' words."""
    from spacy_siamese.displacy.checks import MAX_TEXT

    words = [word for a, b, _ in PAIRS for word in f"{a} {b}".split() if len(word) >= 4]
    rng = random.Random(seed)
    text = ""
    while len(text) < MAX_TEXT - 20:
        text += rng.choice(words) + " "
    return text.ljust(MAX_TEXT, "x")


def test_a_long_explanation_keeps_to_its_budget_and_a_search_is_served_meanwhile(nlp):
    """A 2,000-character text explained by Shapley sampling (all its permutations would take many
    times the budget) is answered within its budget and a block of subsets, with values that
    still add up; a search sent while it runs is answered at once, not after it. The budget is a
    fraction of what the 32 permutations take even on a fast 2-core machine (about 6 s there)."""
    budget = 2.0
    app = displacy.DisplacyApp(nlp=nlp, index=SimilarityIndex.build(nlp, TEXTS, progress=False), explain_budget=budget)
    a, b = long_text(0), "how do I learn python"
    done = {}
    with serving(app) as (host, port):

        def explain():
            start = time.monotonic()
            body = urlencode({"a": a, "b": b}).encode()
            with urllib.request.urlopen(f"http://{host}:{port}/api/explain", data=body, timeout=60) as response:
                done["explain"] = (json.loads(response.read()), time.monotonic() - start, time.monotonic())

        thread = threading.Thread(target=explain)
        thread.start()
        time.sleep(0.5)  # the explanation is running
        start = time.monotonic()
        with urllib.request.urlopen(f"http://{host}:{port}/api/search?q=learn+python&k=3", timeout=60) as response:
            hits = json.loads(response.read())["hits"]
        searched, search_end = time.monotonic() - start, time.monotonic()
        thread.join(timeout=60)
    data, took, explain_end = done["explain"]
    assert len(hits) == 3 and searched < 1.5 and search_end < explain_end  # not held behind the explanation
    assert took < budget + 2.5  # the budget, one block of subsets, the request
    assert data["method"] == "shapley" and 1 <= data["samples"] < SAMPLES  # scaled down to fit
    assert len(data["text_a"]) == 2000
    for key, reference in (("tokens_a", "reference_a"), ("tokens_b", "reference_b")):  # b: exact Shapley
        total = sum(t["contribution"] for t in data[key])
        assert total == pytest.approx(data["score"] - data[reference], abs=1e-6)  # still adds up


def test_an_explanation_that_cannot_fit_its_budget_gets_a_503_with_the_reason(nlp):
    app = displacy.DisplacyApp(nlp=nlp, explain_budget=1e-6)
    status, _, text = call(app, "/api/explain", method="POST", body=urlencode({"a": long_text(0), "b": "x"}).encode())
    assert status == "503 Service Unavailable"
    assert "Shapley permutations of a text of" in json.loads(text)["error"] and "budget is 1e-06 s" in text
    assert call(app, "/api/explain", "a=learn+python&b=python")[0] == "200 OK"  # exact below 9 tokens: no sampling
    assert call(app, "/pair", "a=learn+python&b=python")[0] == "200 OK"


def test_a_second_explanation_waits_half_the_budget_then_gets_a_503(fixed):
    fixed.explain_budget = 0.2
    with fixed.explain_lock:  # another explanation running
        start = time.monotonic()
        status, _, text = call(fixed, "/api/explain", "a=1&b=2")
        waited = time.monotonic() - start
        assert status == "503 Service Unavailable" and "Another explanation is running" in text and waited < 1
        assert call(fixed, "/groups")[0] == "200 OK"


def test_a_crowd_of_searches_is_served_together_and_none_is_reset(tweak_nlp):
    """200 searches sent at once on the loopback: every one is answered (the listen backlog holds
    the crowd; the old backlog of 5 reset or timed out some), and the slowest waits at most twice
    as long as a crowd of 200 blank queries (the same requests without a search, measured
    alongside) plus one library search of the 200 queries, and five searches alone: served one at
    a time, it would wait for 200 searches in a row. The crowd's HTTP work alone takes tens of times
    one search, so the bound is on what searching adds; the factor 2 absorbs this machine's noise."""
    index = SimilarityIndex.build(tweak_nlp, TEXTS, progress=False)
    rng = numpy.random.default_rng(0)
    index.add_vectors(rng.standard_normal((2000, index.vectors.shape[1])).astype("float32"))
    queries = [f"learn python {i}" for i in range(200)]
    with serving(displacy.DisplacyApp(nlp=tweak_nlp, index=index)) as (host, port):

        def search(query):
            start = time.monotonic()
            connection = http.client.HTTPConnection(host, port, timeout=60)
            try:
                connection.request("GET", "/api/search?" + urlencode({"q": query, "k": 5}))
                response = connection.getresponse()
                assert response.status == 200 and len(json.loads(response.read())["hits"]) == (5 if query else 0)
            finally:
                connection.close()
            return time.monotonic() - start

        def p99(crowd):
            with ThreadPoolExecutor(len(crowd)) as pool:
                times = sorted(pool.map(search, crowd))  # an exception (a reset, a timeout) fails the test
            return times[int(0.99 * len(times)) - 1]

        tries = []
        for _ in range(3):  # the machine's other work may slow one crowd and not the other
            alone = sorted(search(query) for query in queries[:7])[3]
            start = time.monotonic()
            index.search(queries, k=5)
            batch = time.monotonic() - start
            blank, slowest = p99([""] * len(queries)), p99(queries)
            tries.append(dict(p99=slowest, blank=blank, batch=batch, alone=alone))
            if slowest < 2 * (blank + batch) + 5 * alone:
                return
    pytest.fail(f"the crowd's p99 exceeds the bound in every try: {tries}")


def test_searches_that_wait_together_are_searched_as_one_batch():
    """While one search runs, the queries that arrive wait and are then searched in one call (of
    their k), each thread getting its own query's hits."""
    calls, running, release = [], threading.Event(), threading.Event()

    def search(queries, k):
        calls.append((sorted(queries), k))
        running.set()
        release.wait(10)
        return [[(len(query), float(k))] for query in queries]

    batcher = Batcher(search)
    queries = ["a" * n for n in range(1, 8)]
    with ThreadPoolExecutor(len(queries) + 1) as pool:
        first = pool.submit(batcher, "first", 3)
        assert running.wait(10)
        rest = [pool.submit(batcher, query, 3 if n else 4) for n, query in enumerate(queries)]
        deadline = time.monotonic() + 10
        while len(batcher.waiting) < len(queries) and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        assert first.result() == [(5, 3.0)]
        assert [future.result() for future in rest] == [[(n, 3.0 if n > 1 else 4.0)] for n in range(1, 8)]
    assert sorted(calls) == sorted([(["first"], 3), (queries[1:], 3), (queries[:1], 4)])


def test_a_post_from_another_origin_is_refused(fixed):
    """A page of another site may send a form to this server (no CORS preflight): it is not computed."""
    body = urlencode({"a": "p", "b": "q"}).encode()
    for origin in ("http://evil.example.com", "http://127.0.0.1:6000", "null"):
        status, _, text = call(fixed, "/api/explain", method="POST", body=body, origin=origin, host="127.0.0.1:5000")
        assert status == "403 Forbidden" and "its own pages only" in json.loads(text)["error"], origin
    ok = call(fixed, "/api/explain", method="POST", body=body, origin="http://127.0.0.1:5000", host="127.0.0.1:5000")
    assert ok[0] == "200 OK" and json.loads(ok[2])["text_b"] == "q"
    assert call(fixed, "/api/explain", method="POST", body=body)[0] == "200 OK"  # no Origin: curl
    # a GET that another site's script sends (fetch) was computed all the same
    for path, query in (("/api/explain", "a=p&b=q"), ("/api/search", "q=p"), ("/pair", "a=p&b=q")):
        status, _, _ = call(fixed, path, query, origin="http://evil.example.com", host="127.0.0.1:5000")
        assert status == "403 Forbidden", path


def test_scores_say_what_they_mean(saved, tweak_nlp, groups_file):
    """Pairs, hits and group members show score, threshold and verdict (at the pipe's threshold);
    hits and members link to the pair view; every page names the model."""
    pipe = tweak_nlp.get_pipe("siamese_similarity")
    app = displacy.DisplacyApp(nlp=tweak_nlp, index=saved / "index", groups=groups_file)
    data = json.loads(call(app, "/api/explain", urlencode({"a": TEXTS[0], "b": TEXTS[0]}))[2])
    assert data["duplicate"] is True and "not a duplicate" not in data["html"]
    assert f"threshold {pipe.threshold:.4f}" in data["html"] and '"ss-verdict ss-duplicate"' in data["html"]
    data = json.loads(call(app, "/api/search", urlencode({"q": TEXTS[3], "k": 100}))[2])
    assert data["threshold"] == pipe.threshold and data["dedupe_threshold"] is None
    assert {hit["duplicate"] for hit in data["hits"]} == {True, False}
    for hit in data["hits"]:
        assert hit["duplicate"] == (hit["score"] >= pipe.threshold)
    assert data["html"].count("ss-verdict ss-duplicate") == sum(hit["duplicate"] for hit in data["hits"])
    assert f'href="{escape("pair?" + urlencode({"a": TEXTS[3], "b": TEXTS[3]}))}"' in data["html"]
    page = call(app, "/groups")[2]
    first, second = GROUPS[1]["members"][:2]
    score = pipe.compare(pipe.encode([first["text"]]), pipe.encode([second["text"]]))[0]
    assert f'data-score="{float(score)!r}"' in page and page.count('class="ss-score"') == 3  # all but the firsts
    assert f'href="{escape("pair?" + urlencode({"a": first["text"], "b": second["text"]}))}"' in page
    assert "Model: <strong>en_pipeline</strong>" in page and "training data not given" in page
    tweak_nlp.meta["sources"] = [{"name": "Quora Question Pairs", "license": "Quora ToS"}]
    pipe.cfg["dedupe_threshold"] = 0.9
    try:
        page = call(displacy.DisplacyApp(nlp=tweak_nlp), "/")[2]
        assert "trained on Quora Question Pairs Quora ToS" in page and "dedupe threshold 0.9000" in page
    finally:
        del tweak_nlp.meta["sources"]
        pipe.cfg["dedupe_threshold"] = None


def test_an_unreadable_index_is_named_at_start_up(saved, tweak_nlp, tmp_path):
    import shutil

    shutil.copytree(saved / "index", tmp_path / "index")
    (tmp_path / "index" / "learned.npy").write_bytes(b"")
    with pytest.raises(ValueError, match="index"):  # a ValueError, which `serve` reports (not EOFError)
        displacy.DisplacyApp(nlp=tweak_nlp, index=tmp_path / "index")
