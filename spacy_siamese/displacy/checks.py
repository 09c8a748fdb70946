"""The checks of a request to the served page: the Host it names, the length of its texts, its
query string and body, each refused with an HTTP status and the reason."""

import ipaddress
import socket
from contextlib import suppress
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 1 << 20  # bytes of a POST body
# Characters of a text to explain or search for (longer texts: the explain and search commands).
MAX_TEXT = 2000
FORM = "application/x-www-form-urlencoded"


class HTTPError(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


# Names a browser on this machine reaches the server by; any IP address is fine too (DNS
# rebinding needs a name of the attacker's, which the Host header then carries).
LOCAL_NAMES = {"localhost", socket.gethostname().lower()}


def check_host(header: Optional[str], names: Iterable[str]) -> None:
    """A 403 unless the request's Host is an IP address, a name of this machine or one of `names` (against
    DNS rebinding); a request without one (HTTP/1.0) is no browser's and passes."""
    if header is None:
        return
    host = header.strip().lower()
    if host.startswith("["):  # [IPv6]:port
        host = host[1 : host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        host = host.split(":")[0]
    host = host.rstrip(".")
    if not host:
        raise HTTPError("400 Bad Request", f"The Host header {header!r:.80} names no host")
    with suppress(ValueError):  # any IP address
        ipaddress.ip_address(host)
        return
    if host not in names and not host.endswith(".localhost"):
        raise HTTPError(
            "403 Forbidden",
            f"This server does not answer to the host {host!r:.80} (serve it with --allow-host {host:.80} "
            "to let a browser reach it by that name)",
        )


def check_origin(origin: Optional[str], host: Optional[str]) -> None:
    """A 403 for a request that a page of another origin sent (its Origin names another host or port
    than the request's Host: a POST, or a GET by fetch); one without an Origin (a link, curl) passes."""
    if origin is None:
        return
    netloc = urlsplit(origin.strip()).netloc.lower()
    if not netloc or netloc != (host or "").strip().lower():
        raise HTTPError(
            "403 Forbidden", f"This server answers requests from its own pages only, not from {origin!r:.80}"
        )


def check_length(what: str, text: str, does: str, command: str) -> None:
    """A 413 for a text longer than the page handles in its time budget."""
    if len(text) > MAX_TEXT:
        raise HTTPError(
            "413 Payload Too Large",
            f"{what} has {len(text):,} characters: the page {does} texts of up to {MAX_TEXT:,} "
            f"(use `python -m spacy_siamese {command}` for longer ones)",
        )


def as_int(value: Union[str, int], name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None


def require(params: Mapping[str, str], path: str, *names: str) -> None:
    """A 400 unless the request has every parameter of `names` (an empty value counts)."""
    missing = [name for name in names if name not in params]
    if missing:
        given = ", ".join(sorted(params)) or "none"
        raise HTTPError(
            "400 Bad Request",
            f"{path} needs the parameters {', '.join(names)} (given: {given}); missing: {', '.join(missing)}",
        )


def query_string(environ: Dict[str, Any]) -> bytes:
    """The query string's bytes: a WSGI server passes them as latin-1 text (PEP 3333); `parse_form` reads
    them as UTF-8, so an unescaped UTF-8 character (as curl sends it) is not read as mojibake."""
    query = environ.get("QUERY_STRING", "")
    try:
        return query.encode("latin-1")
    except UnicodeEncodeError:  # already text: not from a WSGI server
        return query.encode("utf8")


def parse_form(data: bytes, what: str) -> Dict[str, List[str]]:
    """The fields of a query string or urlencoded body; a 400 if it, or an escaped value, is not UTF-8."""
    try:
        return parse_qs(data.decode("utf8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError as err:
        raise HTTPError("400 Bad Request", f"{what} is not UTF-8: {err}") from None


def read_body(environ: Dict[str, Any]) -> bytes:
    """The bytes of a POST's urlencoded body (a 400, 413 or 415 for one that cannot be read as that)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise HTTPError(
            "400 Bad Request", f"Content-Length must be a number, got {environ['CONTENT_LENGTH']!r:.40}"
        ) from None
    if length > MAX_BODY:
        raise HTTPError("413 Payload Too Large", f"The request body is over {MAX_BODY:,} bytes")
    if length <= 0:
        return b""
    content_type = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()
    if content_type not in ("", "text/plain", FORM):  # wsgiref says text/plain for no Content-Type
        raise HTTPError("415 Unsupported Media Type", f"Send the fields as {FORM}, not {content_type}")
    try:
        data = environ["wsgi.input"].read(length)
    except TimeoutError:
        raise HTTPError(
            "408 Request Timeout", f"The request body of {length:,} bytes (Content-Length) did not arrive in time"
        ) from None
    if len(data) < length:
        raise HTTPError(
            "400 Bad Request", f"The request body ended after {len(data):,} of its {length:,} bytes (Content-Length)"
        )
    return data
