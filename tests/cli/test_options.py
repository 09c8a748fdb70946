"""Every command's options: one long name, one short flag and one default per meaning, a short flag
of spaCy's commands meaning what it means there, the library's defaults, and the project files
using the options that exist."""

import ast
import inspect
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

import pytest
import srsly
import typer

import spacy_siamese
from spacy_siamese import defaults
from spacy_siamese.cli import app

from ..test_readme import problems

PACKAGE = Path(spacy_siamese.__file__).parent
# Short flags of spaCy's own commands (apply, evaluate, train, convert), by the long name they stand for there.
SPACY_FLAGS = {"-n": "--n-process", "-b": "--batch-size", "-o": "--output", "-g": "--gpu-id", "-l": "--lang"}
# Long names whose default differs between commands, and why (each option's help says it too).
DIFFERENT_DEFAULTS = {
    "--n-process": "dedupe is built for whole collections: a process a core (-1); encode and index keep spaCy's 1",
    "--candidates": "a search scans an index once a query (flat: exact); dedupe compares every doc with every other",
    "--top-k": "teacher-pairs pairs each text with its 3 nearest, as AugSBERT does; dedupe and search take 10",
    "--batch-size": "teacher-train's is pairs per training step; the others' docs per encoding batch",
}


def command_options(group: Any) -> Dict[str, Dict[str, Any]]:
    """Each option of each command by its long name (its short flag if it has none): the command's
    name -> {"short": its short flags, "default": its default}."""
    found: Dict[str, Dict[str, Any]] = defaultdict(dict)
    for name, command in sorted(group.commands.items()):
        for param in command.params:
            if param.param_type_name != "option":
                continue
            longs = [opt for opt in param.opts if opt.startswith("--")] or param.opts
            short = {opt for opt in param.opts if not opt.startswith("--")}
            found[longs[0]][name] = {"short": short, "default": param.default}
    return found


def clashes(group: Any) -> List[str]:
    """A short flag with two meanings or spaCy's other meaning, or a long name with two defaults
    that DIFFERENT_DEFAULTS does not explain."""
    meanings = defaultdict(set)
    found = []
    for long, commands in command_options(group).items():
        for short in (flag for option in commands.values() for flag in option["short"]):
            meanings[short].add(long)
        by_default = defaultdict(list)
        for name, option in commands.items():
            by_default[repr(option["default"])].append(name)
        if len(by_default) > 1 and long not in DIFFERENT_DEFAULTS:
            found.append(f"{long} defaults to " + "; ".join(f"{d} in {', '.join(c)}" for d, c in by_default.items()))
    for short, longs in sorted(meanings.items()):
        if len(longs) > 1:
            found.append(f"{short} means {' and '.join(sorted(longs))}")
        if short in SPACY_FLAGS and longs != {SPACY_FLAGS[short]}:
            found.append(f"{short} is spaCy's {SPACY_FLAGS[short]}, not {' and '.join(sorted(longs))}")
    return found


def test_one_name_short_flag_and_default_per_meaning():
    assert clashes(typer.main.get_command(app)) == []


def test_each_different_default_is_one():
    """An explained difference that went away leaves the list (so that it explains no new one)."""
    options = command_options(typer.main.get_command(app))
    for long in DIFFERENT_DEFAULTS:
        assert len({repr(option["default"]) for option in options[long].values()}) > 1, long


def test_clashes_are_found():
    fake = typer.Typer()

    @fake.command("a")
    def a(
        limit: int = typer.Option(0, "--limit", "-n"),
        seed: int = typer.Option(0, "--seed"),
        group: str = typer.Option("", "--group", "-g"),
        n_process: int = typer.Option(1, "--n-process"),
    ) -> None: ...

    @fake.command("b")
    def b(n_process: int = typer.Option(-1, "--n-process", "-n"), seed: int = typer.Option(1, "--seed")) -> None: ...

    assert clashes(typer.main.get_command(fake)) == [
        "--seed defaults to 0 in a; 1 in b",
        "-g is spaCy's --gpu-id, not --group",
        "-n means --limit and --n-process",
        "-n is spaCy's --n-process, not --limit and --n-process",
    ]


def test_old_spellings_are_refused():
    """The old spellings are gone (an old script fails with a usage error, it does not run on)."""
    from .conftest import invoke

    for args in (["dedupe", "m", "in.txt", "-o", "o.jsonl", "--c", 5], ["calibrate", "m", "p", "-p", 0.9]):
        result = invoke(*args)
        assert result.exit_code == 2 and "No such option" in result.output, result.output


# Names of the same spelling for another value: the similarity_classifier's docs per pipe() batch.
OTHER_MEANINGS = {("classifier.py", "BATCH_SIZE")}


def test_defaults_are_defined_once():
    """A default that the command line shows is assigned in spacy_siamese/defaults.py only: the
    library modules and the commands import it (so the two cannot drift apart)."""
    names = {name for name in vars(defaults) if name.isupper()}
    assert {"BATCH_SIZE", "CANDIDATES", "CHUNK_SIZE", "EXPLAIN_BUDGET", "JSONL_SUFFIXES"} <= names
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "defaults.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                key = (path.relative_to(PACKAGE).as_posix(), getattr(target, "id", None))
                if key[1] in names and key not in OTHER_MEANINGS:
                    found.append(f"{key[0]}:{node.lineno} {key[1]}")
    assert found == []


def option_default(command: str, name: str) -> Any:
    params = typer.main.get_command(app).commands[command].params  # type: ignore[attr-defined]
    return next(p.default for p in params if p.name == name)


@pytest.mark.parametrize(
    "command,option,function,parameter",
    [
        ("index", "candidates", "spacy_siamese.search.index:SimilarityIndex.build", "candidates"),
        ("dedupe", "candidates", "spacy_siamese.search.dedupe:dedupe_collection", "candidates"),
        ("dedupe", "k", "spacy_siamese.search.dedupe:dedupe_collection", "k"),
        ("dedupe", "n_candidates", "spacy_siamese.search.dedupe:dedupe_collection", "c"),
        ("dedupe", "group_method", "spacy_siamese.search.dedupe:dedupe_collection", "method"),
        ("dedupe", "min_size", "spacy_siamese.search.dedupe:dedupe_collection", "min_size"),
        ("dedupe", "chunk_size", "spacy_siamese.search.dedupe:dedupe_collection", "chunk_size"),
        ("dedupe", "batch_size", "spacy_siamese.search.dedupe:dedupe_collection", "batch_size"),
        ("encode", "batch_size", "spacy_siamese.encoding:Encoding.encode", "batch_size"),
        ("encode", "n_process", "spacy_siamese.encoding:Encoding.encode", "n_process"),
        ("explain", "samples", "spacy_siamese.explain:explain_pair", "samples"),
        ("serve", "explain_budget", "spacy_siamese.displacy:DisplacyApp", "explain_budget"),
        ("evaluate", "confidence", "spacy_siamese.evaluation.pair_evaluation:evaluate_pairs", "confidence"),
        ("evaluate-duplicates", "n_pairs", "spacy_siamese.evaluation.duplicates:evaluate_duplicates", "n_pairs"),
        ("teacher-pairs", "top_k", "spacy_siamese.teacher.pairs:teacher_silver", "top_k"),
    ],
)
def test_option_defaults_are_the_library_defaults(command, option, function, parameter):
    """An option's default is the default of the library function that the command calls."""
    import importlib

    module, _, path = function.partition(":")
    target: Any = importlib.import_module(module)
    for attr in path.split("."):
        target = getattr(target, attr)
    assert option_default(command, option) == inspect.signature(target).parameters[parameter].default


@pytest.mark.parametrize("directory", ["project", "experiments"])
def test_project_commands_use_options_that_exist(directory):
    """Each `python -m spacy_siamese` of a project.yml names its options as the commands do."""
    config = srsly.read_yaml(PACKAGE.parent / directory / "project.yml")
    scripts = [line for command in config["commands"] for line in command.get("script", [])]
    assert any("python -m spacy_siamese" in line for line in scripts)
    assert [problem for line in scripts for problem in problems(line)] == []
