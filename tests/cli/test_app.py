"""The app: `python -m spacy_siamese --help` lists every command, and only the entry points
(`spacy_siamese/cli/`) print or parse arguments."""

import ast
import importlib
import importlib.metadata
import inspect
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest
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
app_module = importlib.import_module("spacy_siamese.cli.app")  # `spacy_siamese.cli.app` is the typer app


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
    assert {"distributed/engine.py", "evaluation/duplicates.py", "search/index.py"} <= names  # the walk finds them
    assert [v for path in modules for v in violations(path)] == []


def test_violations_are_found(tmp_path):
    module = tmp_path / "bad.py"
    module.write_text("import argparse\nfrom argparse import ArgumentParser\nprint('x')\nlog = print\n")
    assert list(violations(module, tmp_path)) == [
        "bad.py:1 imports argparse",
        "bad.py:2 imports argparse",
        "bad.py:3 prints",
    ]


def run_module(*args: str, code: str = "") -> "subprocess.CompletedProcess[str]":
    """`python -m spacy_siamese ARGS` (or `python -c CODE`) in a fresh interpreter, importing this checkout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    command = ["-c", code] if code else ["-m", "spacy_siamese", *args]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, env=env)


def test_help_is_quick():
    """The median of five `--help` runs is well under the seconds that importing spaCy takes."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        result = run_module("--help")
        times.append(time.perf_counter() - start)
        assert result.returncode == 0, result.stderr
    assert statistics.median(times) < 2.0, times


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["dedupe", "--help"], ["explain", "--help"]])
def test_help_and_version_import_no_heavy_module(args):
    """The command line's import, its help pages and its version load neither spaCy, Thinc,
    torch, numpy nor the library (but its defaults, which import nothing): the commands import
    them when they run."""
    code = (
        "import sys; from spacy_siamese.cli import app; "
        f"sys.argv = ['spacy_siamese', *{args!r}]\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'spacy', 'thinc', 'torch', 'numpy', 'srsly'}"
        " or m.startswith('spacy_siamese.') and not m.startswith(('spacy_siamese.cli', 'spacy_siamese.defaults'))),"
        " file=sys.stderr)"
    )
    result = run_module(code=code)
    assert result.stderr.splitlines()[-1] == "[]", result.stderr


def test_package_names_load_on_first_use():
    """`spacy_siamese/__init__.py` exports its names lazily (so that the command line's import is
    quick): each of them loads, and an unknown name is an AttributeError."""
    assert {name: getattr(spacy_siamese, name).__name__ for name in spacy_siamese.__all__ if name != "__version__"} == {
        name: name for name in spacy_siamese.__all__ if name != "__version__"
    }
    with pytest.raises(AttributeError, match="no_such_name"):
        spacy_siamese.no_such_name  # noqa: B018


def test_version():
    result = run_module("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"spacy-siamese {spacy_siamese.__version__}\n"
    assert spacy_siamese.__version__ == importlib.metadata.version("spacy-siamese")


def test_flags_show_no_type(monkeypatch):
    """A flag takes no value: no `<bool>` type beside it on any help page."""
    monkeypatch.setenv("COLUMNS", "200")
    for args in [["--help"], *([command.name, "--help"] for command in app.registered_commands)]:
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert "<bool>" not in result.output, args
    assert "<int>" in invoke("dedupe", "--help").output  # an option that takes a value keeps its type


def command_imports(path: Path) -> List[str]:
    """The other command modules of spacy_siamese/cli that a command module imports, as `file:line module`."""
    commands = {p.stem for p in path.parent.glob("*.py")} - {"__init__", "app", path.stem}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            modules = [node.module] if node.module else [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("spacy_siamese.cli."):
            modules = [node.module.split(".")[2]]
        elif isinstance(node, ast.Import):
            modules = [a.name.split(".")[2] for a in node.names if a.name.startswith("spacy_siamese.cli.")]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {module}" for module in modules if module.split(".")[0] in commands]
    return found


def test_no_command_imports_another():
    """Shared pieces live in app.py or the library: a command module imports no other command's module."""
    paths = sorted((PACKAGE / "cli").glob("*.py"))
    assert len(paths) > 10
    assert [found for path in paths if path.stem not in ("__init__", "app") for found in command_imports(path)] == []


def test_command_imports_are_found(tmp_path):
    for name in ("app", "dedupe", "index", "search"):
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / "search.py").write_text(
        "from .app import app\nfrom .index import X\nfrom . import dedupe\nimport spacy_siamese.cli.dedupe\n"
        "def f():\n    from spacy_siamese.cli.index import Y\n"
    )
    assert command_imports(tmp_path / "search.py") == [
        "search.py:2 index",
        "search.py:3 dedupe",
        "search.py:4 dedupe",
        "search.py:6 index",
    ]


def test_an_eof_error_is_an_error_line_not_aborted(capsys):
    """numpy's EOFError for an empty or cut .npy file reached click, which printed a bare "Aborted."."""
    from spacy_siamese.cli.app import errors

    with pytest.raises(typer.Exit) as exit_info:
        with errors():
            raise EOFError("No data left in file")
    assert exit_info.value.exit_code == 1 and "Error: No data left in file" in capsys.readouterr().err
