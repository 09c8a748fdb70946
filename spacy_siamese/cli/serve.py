"""`serve`: the page in a browser: a pair of texts shaded by contribution, a search box over a
saved index, the duplicate groups of a dedupe run."""

from pathlib import Path
from typing import List, Optional

import typer

from ..defaults import EXPLAIN_BUDGET
from .app import MODEL, app, errors, fail, load_pipeline, require_file


@app.command("serve")
def serve_command(
    model: str = MODEL,
    index: Optional[Path] = typer.Option(
        None, "--index", "-i", help="Index directory written by `index`: a search box"
    ),
    groups: Optional[Path] = typer.Option(None, "--groups", help="Groups JSONL written by `dedupe --groups`"),
    port: int = typer.Option(5000, "--port", "-p", min=0, max=65535, help="Port to serve on (0: any free port)"),
    host: str = typer.Option("127.0.0.1", "--host", help="Host to serve on (0.0.0.0: every network interface)"),
    allow_host: Optional[List[str]] = typer.Option(
        None, "--allow-host", help="Also answer requests for this host name (repeatable; IP addresses always)"
    ),
    explain_budget: float = typer.Option(
        EXPLAIN_BUDGET, "--explain-budget", min=0.1, help="Seconds an explanation may take (fewer samples, else a 503)"
    ),
) -> None:
    """Serve the page until Ctrl+C: two texts with their score and their tokens shaded by
    contribution (/pair), a search box over --index (/search), the groups of --groups (/groups).

    The page answers on this machine only unless --host says otherwise, and only to requests for
    an IP address, localhost, this machine's name, --host or an --allow-host name (no DNS
    rebinding). An explanation keeps to --explain-budget seconds (fewer Shapley samples if need be)."""
    from ..displacy import DisplacyApp, make_server, server_url

    with errors():
        require_file(groups)  # before the model loads
        if index is not None and not index.is_dir():
            fail(f"Index directory not found: {index}")
        nlp = load_pipeline(model)
        hosts = [host, *(allow_host or [])]
        page = DisplacyApp(nlp=nlp, index=index, groups=groups, explain_budget=explain_budget, hosts=hosts)
        server = make_server(page, host, port)
    url = server_url(server)
    typer.echo(f"Serving {', '.join(page.views)} on {url} (Ctrl+C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo(f"Stopped serving on {url}")
    finally:
        server.server_close()
