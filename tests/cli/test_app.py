"""The app: `python -m spacy_siamese --help` lists every command, and only the entry points
(`spacy_siamese/cli/`) print or parse arguments."""

import ast
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import typer

import spacy_siamese
from spacy_siamese.cli import app

from .conftest import invoke

COMMANDS = {
    "average",
    "calibrate",
    "convert",
    "dedupe",
    "dedupe-ray",
    "encode",
    "evaluate",
    "evaluate-duplicates",
    "evaluate-crosslingual",
    "evaluate-retrieval",
    "explain",
    "index",
    "report",
    "search",
    "serve",
    "teacher-pairs",
    "teacher-train",
}
PACKAGE = Path(spacy_siamese.__file__).parent


def listed_commands(help_text: str) -> set:
    """The command names of a --help page: the rows of its Commands section (rich or plain)."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"\bCommands\b", line))
    rows = (re.match(r"^(?:│ |  )([a-z][a-z-]*)\s{2,}", line) for line in lines[start + 1 :])
    return {row.group(1) for row in rows if row}


def test_help_lists_every_command():
    result = invoke("--help")
    assert result.exit_code == 0, result.output
    assert listed_commands(result.output) == COMMANDS
    assert set(typer.main.get_command(app).commands) == COMMANDS  # type: ignore[attr-defined]


def test_module_help_lists_the_commands():
    result = subprocess.run([sys.executable, "-m", "spacy_siamese", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert listed_commands(result.stdout) == COMMANDS


def test_help_lists_each_command_with_its_summary_on_one_line():
    """The first paragraph of each command's docstring, wrapped in the source, shows whole on its row."""
    env = {**os.environ, "COLUMNS": "400"}
    result = subprocess.run([sys.executable, "-m", "spacy_siamese", "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│ ")}
    for command in app.registered_commands:
        summary = " ".join(inspect.cleandoc(command.callback.__doc__).split("\n\n")[0].split())
        assert summary.replace("\\[", "[") in rows[command.name], command.name


def test_each_command_help_shows_its_paragraphs_unbroken(monkeypatch):
    """A docstring's line breaks, wrapped in the source, do not break the help page's lines."""
    monkeypatch.setenv("COLUMNS", "1000")
    for command in app.registered_commands:
        result = invoke(command.name, "--help")
        assert result.exit_code == 0, result.output
        lines = [" ".join(line.split()) for line in result.output.splitlines()]
        for paragraph in inspect.cleandoc(command.callback.__doc__).split("\n\n"):
            assert " ".join(paragraph.split()).replace("\\[", "[") in lines, (command.name, paragraph)


def library_modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts)


def violations(path: Path, root: Path = PACKAGE):
    """`import argparse` and `print(...)` calls in a module, as `file:line what`."""
    name = path.relative_to(root).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"), filename=str(path))):
        if isinstance(node, ast.Import) and any(alias.name == "argparse" for alias in node.names):
            yield f"{name}:{node.lineno} imports argparse"
        elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
            yield f"{name}:{node.lineno} imports argparse"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            yield f"{name}:{node.lineno} prints"


def test_only_the_command_line_prints_or_parses_arguments():
    modules = library_modules()
    names = {p.relative_to(PACKAGE).as_posix() for p in modules}
    assert {"distributed.py", "evaluation/duplicates.py", "search/index.py"} <= names  # the walk finds them
    assert [v for path in modules for v in violations(path)] == []


def test_violations_are_found(tmp_path):
    module = tmp_path / "bad.py"
    module.write_text("import argparse\nfrom argparse import ArgumentParser\nprint('x')\nlog = print\n")
    assert list(violations(module, tmp_path)) == [
        "bad.py:1 imports argparse",
        "bad.py:2 imports argparse",
        "bad.py:3 prints",
    ]
