"""`python -m spacy_siamese serve` (the page itself is tested in tests/displacy)."""

import socket
from wsgiref.simple_server import WSGIServer

import pytest

from .conftest import invoke


@pytest.fixture
def index(collection, tmp_path):
    result = invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx", "--no-progress")
    assert result.exit_code == 0, result.output
    return tmp_path / "idx"


def test_serve_until_interrupted(collection, index, tmp_path, monkeypatch):
    groups = tmp_path / "groups.jsonl"
    groups.write_text('{"group": 0, "size": 2, "members": [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]}\n')
    served = []

    def serve_forever(self, poll_interval=0.5):
        served.append(self.server_address)
        raise KeyboardInterrupt

    monkeypatch.setattr(WSGIServer, "serve_forever", serve_forever)
    result = invoke(
        "serve", collection / "model", "--index", index, "--groups", groups, "--port", 0, "--host", "127.0.0.1"
    )
    assert result.exit_code == 0, result.output
    port = served[0][1]
    assert f"Serving pair, search, groups on http://127.0.0.1:{port} (Ctrl+C stops)" in result.output
    assert f"Stopped serving on http://127.0.0.1:{port}" in result.output


@pytest.mark.parametrize(
    "args,message",
    [
        (["--index", "missing"], "Index directory not found: "),
        (["--groups", "missing.jsonl"], "File not found: "),
    ],
)
def test_input_errors(collection, tmp_path, args, message):
    args = [str(tmp_path / a) if "missing" in a else a for a in args]
    result = invoke("serve", collection / "model", *args, "--port", 0)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


def test_bad_files_and_models(collection, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1, 2]\n")
    result = invoke("serve", collection / "model", "--groups", bad, "--port", 0)
    assert result.exit_code == 1 and "bad.jsonl:1: not a group of `dedupe --groups`" in result.output
    result = invoke("serve", collection / "model", "--index", tmp_path, "--port", 0)
    assert result.exit_code == 1 and "not a saved SimilarityIndex" in result.output
    result = invoke("serve", collection / "blank", "--port", 0)
    assert result.exit_code == 1 and "no 'siamese_similarity' component" in result.output


def test_an_index_with_an_empty_file_is_named_not_aborted(collection, index):
    (index / "learned.npy").write_bytes(b"")
    result = invoke("serve", collection / "model", "--index", index, "--port", 0)
    assert result.exit_code == 1 and "Error: " in result.output and str(index) in result.output, result.output
    assert "Aborted" not in result.output and "Traceback" not in result.output


def test_a_busy_port(collection):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = invoke("serve", collection / "model", "--port", port, "--host", "127.0.0.1")
    assert result.exit_code == 1 and f"Error: Cannot serve on 127.0.0.1:{port}: Address already in use" in result.output


@pytest.mark.parametrize("port", [-1, 65536])
def test_a_port_out_of_range(collection, port):
    result = invoke("serve", collection / "model", "--port", port, "--host", "127.0.0.1")
    assert result.exit_code == 2 and "Invalid value for '--port'" in result.output, result.output


def test_serve_binds_this_machine_only_unless_told(collection, monkeypatch):
    served = []

    def serve_forever(self, poll_interval=0.5):
        served.append((self.server_address[0], self.get_app().hosts))
        raise KeyboardInterrupt

    monkeypatch.setattr(WSGIServer, "serve_forever", serve_forever)
    assert invoke("serve", collection / "model", "--port", 0).exit_code == 0
    result = invoke("serve", collection / "model", "--port", 0, "--host", "0.0.0.0", "--allow-host", "Box.lan")
    assert result.exit_code == 0, result.output
    assert served[0][0] == "127.0.0.1" and served[1][0] == "0.0.0.0" and "box.lan" in served[1][1]
