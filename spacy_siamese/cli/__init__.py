"""Command line: `python -m spacy_siamese COMMAND`, one command a module (`--help` lists them)."""

import importlib
import inspect
import pkgutil

from .app import app

for _module in pkgutil.iter_modules(__path__):  # each command module registers its command, in name order
    importlib.import_module(f"{__name__}.{_module.name}")

# Typer's rich help keeps the line breaks of a docstring, which then break its lines at random
# places on a terminal of another width: give each command its docstring's paragraphs on one
# line each, and the command list its first paragraph.
for _command in app.registered_commands:
    if _command.callback is not None and _command.callback.__doc__:
        _paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(_command.callback.__doc__).split("\n\n")]
        _command.help = _command.help or "\n\n".join(_paragraphs)
        _command.short_help = _command.short_help or _paragraphs[0]

__all__ = ["app"]
