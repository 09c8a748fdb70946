"""The command lines of README.md, docs/*.md, benchmarks/RESULTS.md and experiments/README.md:
every `python -m spacy_siamese COMMAND ... --option` names a command of the typer app and options
that command has; every `spacy project run TARGET DIR` a workflow or command of DIR/project.yml and
vars it has; every `spacy train CONFIG` a config with the sections its overrides name; every
`benchmarks/SCRIPT.py --option` a script with that option. So the documentation cannot drift from
the code. The README also stays user documentation: short, with short table cells, and its table
of pipelines names exactly the packages the main project builds."""

import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
import typer
from thinc.api import Config
from weasel.util import load_project_config

from spacy_siamese.cli import app

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCUMENTS = [
    README,
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks" / "RESULTS.md",
    ROOT / "experiments" / "README.md",
]
# An invocation ends at the end of its line, code span or table cell, or at a shell separator.
INVOCATION = re.compile(r"python -m spacy_siamese\b([^\n`|;&#]*)")
PROJECT_RUN = re.compile(r"python -m spacy project run\b([^\n`|;&#]*)")
TRAIN = re.compile(r"python -m spacy train\b([^\n`|;&#]*)")
SCRIPT = re.compile(r"python (benchmarks/\w+\.py)\b([^\n`|;&#]*)")


def joined(text: str) -> str:
    """The text with the lines a trailing backslash continues joined on."""
    return re.sub(r"\\\n\s*", " ", text)


def invocations(text: str, pattern: re.Pattern = INVOCATION) -> List[str]:
    """The arguments of every match of `pattern` (by default `python -m spacy_siamese`) in a Markdown text."""
    return [" ".join(match.group(1).split()) for match in pattern.finditer(joined(text))]


def tokens_of(args: str) -> List[str]:
    try:
        tokens = shlex.split(args)
    except ValueError:  # an unbalanced quote, e.g. a command cut short in prose
        tokens = args.split()
    return [token.strip("[],.()") for token in tokens]


def option_names(command: Any) -> Set[str]:
    """A command's option names, e.g. --progress and --no-progress (typer's click command)."""
    names = {"--help"}
    for param in command.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def problems(text: str) -> List[str]:
    """What is wrong with each `python -m spacy_siamese` of a Markdown text: an unknown command or option."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    found = []
    for args in invocations(text):
        command: Any = group
        for token in tokens_of(args):
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


@lru_cache(maxsize=None)
def project_config(directory: str) -> Dict[str, Any]:
    return load_project_config(ROOT / directory)


def project_problems(text: str) -> List[str]:
    """What is wrong with each `python -m spacy project run TARGET DIR --vars.NAME ...`."""
    found = []
    for args in invocations(text, PROJECT_RUN):
        words = [token for token in tokens_of(args) if not token.startswith("-")]
        if len(words) < 2:
            found.append(f"spacy project run {args}: no target and project directory")
            continue
        target, directory = words[:2]
        if not (ROOT / directory / "project.yml").exists():
            found.append(f"spacy project run {args}: no {directory}/project.yml")
            continue
        config = project_config(directory)
        targets = set(config.get("workflows", {})) | {command["name"] for command in config.get("commands", [])}
        if target not in targets:
            found.append(f"spacy project run {args}: {directory} has no workflow or command '{target}'")
        for token in tokens_of(args):
            if token.startswith("--vars."):
                name = token.split("=")[0][len("--vars.") :]
                if name not in config.get("vars", {}):
                    found.append(f"spacy project run {args}: {directory} has no var '{name}'")
    return found


def train_problems(text: str) -> List[str]:
    """What is wrong with each `python -m spacy train CONFIG --section.key ...`: a missing config,
    or an override of a section (or a [paths] entry) the config does not have."""
    found = []
    for args in invocations(text, TRAIN):
        tokens = tokens_of(args)
        path = ROOT / tokens[0]
        if tokens[0].isupper():  # a placeholder: CONFIG
            continue
        if not path.exists():
            found.append(f"spacy train {args}: no config {tokens[0]}")
            continue
        config = Config().from_disk(path, interpolate=False)
        for token in tokens[1:]:
            if not token.startswith("--") or "." not in token:
                continue
            section, key = token[2:].split("=")[0].split(".")[:2]
            if section not in config or (section == "paths" and key not in config["paths"]):
                found.append(f"spacy train {args}: {tokens[0]} has no {section}.{key}")
    return found


def script_problems(text: str) -> List[str]:
    """What is wrong with each `python benchmarks/SCRIPT.py --option`: a missing script, or an option
    its source neither names ("--option") nor has as a parameter (`option:`, typer's default name)."""
    found = []
    for match in SCRIPT.finditer(joined(text)):
        script, args = match.group(1), match.group(2)
        if not (ROOT / script).exists():
            found.append(f"{script}: no such script")
            continue
        source = (ROOT / script).read_text(encoding="utf8")
        for token in tokens_of(args):
            option = token.split("=")[0]
            if not option.startswith("--") or option == "--help":
                continue
            named = f'"{option}"' in source
            parameter = re.search(rf"\b{option[2:].replace('-', '_')}\s*:", source)
            if not named and not parameter:
                found.append(f"{script}{args}: no option {option}")
    return found


def long_cells(text: str, limit: int = 40) -> List[str]:
    return [
        cell.strip()
        for line in text.splitlines()
        if line.startswith("|")
        for cell in line.strip().strip("|").split("|")
        if len(re.findall(r"\w+", cell)) > limit
    ]


def readme_problems(path: Path = README) -> List[str]:
    return problems(path.read_text(encoding="utf8"))


def test_readme_commands_and_options_exist():
    assert invocations(README.read_text(encoding="utf8")), "no `python -m spacy_siamese` found in the README"
    assert readme_problems() == []


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_documented_commands_exist(path):
    text = path.read_text(encoding="utf8")
    assert problems(text) + project_problems(text) + train_problems(text) + script_problems(text) == []


def test_the_readme_reads_in_one_sitting():
    text = README.read_text(encoding="utf8")
    assert len(text.splitlines()) <= 350
    assert long_cells(text) == []


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


def test_unknown_targets_vars_configs_and_script_options_are_found():
    text = (
        "`python -m spacy project run all project` and `python -m spacy project run continue-quora project`\n"
        "python -m spacy project run evaluate experiments --vars.nmae x\n"
        "python -m spacy train configs/quora_hybrid.cfg --paths.train t.jsonl --paths.trian t.jsonl\n"
        "python -m spacy train configs/nothing.cfg\n"
        "python benchmarks/speed.py MODEL --n 5 -o out.json --rnus 3\n"
    )
    assert project_problems(text) == [
        "spacy project run continue-quora project: project has no workflow or command 'continue-quora'",
        "spacy project run evaluate experiments --vars.nmae x: experiments has no var 'nmae'",
    ]
    assert train_problems(text) == [
        "spacy train configs/quora_hybrid.cfg --paths.train t.jsonl --paths.trian t.jsonl: "
        "configs/quora_hybrid.cfg has no paths.trian",
        "spacy train configs/nothing.cfg: no config configs/nothing.cfg",
    ]
    assert script_problems(text) == ["benchmarks/speed.py MODEL --n 5 -o out.json --rnus 3: no option --rnus"]
    assert long_cells("| a | " + "word " * 41 + "|\n| " + "word " * 40 + "|") == [("word " * 41).strip()]


PACKAGE = re.compile(r"`((?:en|xx)_siamese_\w+)`")
BUILT = re.compile(r"packages/((?:en|xx)_siamese_[\w$.{}]+?)-\$\{vars\.version\}")


def pipeline_table(text: str) -> List[Dict[str, Any]]:
    """The rows of the README's "Which pipeline for which job" table: the packages each names, and
    the workflow of project/ (with its --vars overrides) that builds them."""
    section = text.split("## Which pipeline for which job", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines()[2:]:
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| job |"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        workflow, *args = cells[5].strip("`").split()
        overrides = {f"vars.{args[i][len('--vars.') :]}": args[i + 1] for i in range(0, len(args), 2)}
        rows.append(
            {"job": cells[0], "packages": set(PACKAGE.findall(cells[1])), "workflow": workflow, "vars": overrides}
        )
    return rows


def project_packages(overrides: Dict[str, str], workflow: str = "") -> Set[str]:
    """The packages the package steps of project/ build (of `workflow`, or of every command) with `overrides`."""
    config = load_project_config(ROOT / "project", overrides=overrides)
    steps = set(config["workflows"][workflow]) if workflow else None
    return {
        name
        for command in config["commands"]
        if steps is None or command["name"] in steps
        for line in command.get("script", [])
        for name in BUILT.findall(line.replace(config["vars"]["version"], "${vars.version}"))
    }


def test_the_readme_recommends_exactly_the_pipelines_the_project_packages():
    """Each row of the README's table names a package that its workflow of project/ builds, and every
    package of project/ is named by a row; the main command's rows (`all`) come first."""
    rows = pipeline_table(README.read_text(encoding="utf8"))
    assert len(rows) >= 10
    for row in rows:
        assert row["packages"], f"{row['job']}: the row names no package"
        built = project_packages(row["vars"], row["workflow"])
        assert row["packages"] <= built, (
            f"{row['job']}: workflow {row['workflow']} builds {built}, not {row['packages']}"
        )
    recommended = set().union(*(row["packages"] for row in rows))
    packaged = set().union(*(project_packages(row["vars"]) for row in rows))
    assert packaged == recommended
    workflows = [row["workflow"] for row in rows]
    assert workflows[0] == "all" and "all" not in workflows[workflows.index(next(w for w in workflows if w != "all")) :]


def test_the_project_stays_small():
    config = load_project_config(ROOT / "project")
    assert len(config["commands"]) <= 45
    steps = {step for workflow in config["workflows"].values() for step in workflow}
    assert {command["name"] for command in config["commands"]} <= steps  # no command outside a workflow


def test_a_package_the_readme_does_not_name_is_found():
    text = README.read_text(encoding="utf8").replace("`en_siamese_oneshot`", "`oneshot`")
    rows = pipeline_table(text)
    recommended = set().union(*(row["packages"] for row in rows))
    assert "en_siamese_oneshot" in set().union(*(project_packages(row["vars"]) for row in rows)) - recommended
