"""README.md's command lines: every `python -m spacy_siamese COMMAND ... --option` it writes names a
command of the typer app and options that command has, so the README cannot drift from the CLI."""

import re
import shlex
from pathlib import Path
from typing import Any, List, Set

import typer

from spacy_siamese.cli import app

README = Path(__file__).parent.parent / "README.md"
# An invocation ends at the end of its line, code span or table cell, or at a shell separator.
INVOCATION = re.compile(r"python -m spacy_siamese\b([^\n`|;&#]*)")


def invocations(text: str) -> List[str]:
    """The arguments of every `python -m spacy_siamese` in a Markdown text, with the lines a
    trailing backslash continues joined on."""
    text = re.sub(r"\\\n\s*", " ", text)
    return [" ".join(match.group(1).split()) for match in INVOCATION.finditer(text)]


def option_names(command: Any) -> Set[str]:
    """A command's option names, e.g. --progress and --no-progress (typer's click command)."""
    names = {"--help"}
    for param in command.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def problems(text: str) -> List[str]:
    """What is wrong with each invocation of a Markdown text: an unknown command or option."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    found = []
    for args in invocations(text):
        try:
            tokens = shlex.split(args)
        except ValueError:  # an unbalanced quote, e.g. a command cut short in prose
            tokens = args.split()
        tokens = [token.strip("[],.()") for token in tokens]
        command: Any = group
        for token in tokens:
            if not token.startswith("-"):
                if command is group:
                    if token not in group.commands:
                        found.append(f"python -m spacy_siamese {args}: no command '{token}'")
                        break
                    command = group.commands[token]
                continue
            option = token.split("=")[0]
            if not re.fullmatch(r"-\d.*", option) and option not in option_names(command):
                found.append(f"python -m spacy_siamese {args}: '{command.name}' has no option {option}")
    return found


def readme_problems(path: Path = README) -> List[str]:
    return problems(path.read_text(encoding="utf8"))


def test_readme_commands_and_options_exist():
    assert invocations(README.read_text(encoding="utf8")), "no `python -m spacy_siamese` found in the README"
    assert readme_problems() == []


def test_misspelt_options_and_commands_are_found():
    text = (
        "```bash\n.venv/bin/python -m spacy_siamese evaluate M D \\\n    --baselines --fit-text x.tsv\n```\n"
        "| a | `python -m spacy_siamese explain MODEL A B` | `python -m spacy_siamese evalute M D` |\n"
        "prose: `python -m spacy_siamese calibrate MODEL DEV [--precison 0.95]`, or `python -m spacy_siamese --help`.\n"
        'python -m spacy_siamese search index.bin "what is -k?" -k 5 --no-progress | head\n'
    )
    assert [len(args.split()) for args in invocations(text)] == [6, 4, 3, 5, 1, 8]
    assert problems(text) == [
        "python -m spacy_siamese evaluate M D --baselines --fit-text x.tsv: 'evaluate' has no option --fit-text",
        "python -m spacy_siamese evalute M D: no command 'evalute'",
        "python -m spacy_siamese calibrate MODEL DEV [--precison 0.95]: 'calibrate' has no option --precison",
    ]
