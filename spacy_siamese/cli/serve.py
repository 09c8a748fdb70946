"""`serve`: the page in a browser: a pair of texts shaded by contribution, a search box over a
saved index, the duplicate groups of a dedupe run."""

from pathlib import Path
from typing import Optional

import typer

from ..displacy import DisplacyApp, make_server, server_url
from .app import MODEL, app, errors, fail, load_pipeline, require_file


@app.command("serve")
def serve_command(
    model: str = MODEL,
    index: Optional[Path] = typer.Option(
        None, "--index", "-i", help="Index directory written by `index`: a search box"
    ),
    groups: Optional[Path] = typer.Option(None, "--groups", "-g", help="Groups JSONL written by `dedupe --groups`"),
    port: int = typer.Option(5000, "--port", "-p", min=0, max=65535, help="Port to serve on (0: any free port)"),
    host: str = typer.Option("0.0.0.0", "--host", help="Host to serve on (127.0.0.1: this machine only)"),
) -> None:
    """Serve the page until Ctrl+C: two texts with their score and their tokens shaded by
    contribution (/pair), a search box over --index (/search), the groups of --groups (/groups)."""
    with errors():
        require_file(groups)  # before the model loads
        if index is not None and not index.is_dir():
            fail(f"Index directory not found: {index}")
        nlp = load_pipeline(model)
        page = DisplacyApp(nlp=nlp, index=index, groups=groups)
        server = make_server(page, host, port)
    url = server_url(server)
    typer.echo(f"Serving {', '.join(page.views)} on {url} (Ctrl+C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo(f"Stopped serving on {url}")
    finally:
        server.server_close()
