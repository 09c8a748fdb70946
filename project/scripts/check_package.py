"""Check a package built by `spacy package`: its model card is filled, its archives exist and declare
`spacy-siamese` as a dependency (spaCy finds it through the registered functions in
the pipeline's config; without it `spacy.load` would fail after `pip install` in a
fresh environment, because the `siamese_similarity` factory would be unknown).

Usage:
    python scripts/check_package.py packages/en_siamese_quora-0.1.0
"""

import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import List

import typer

REQUIRED = "spacy-siamese"
# The model card's fields (scripts/model_card.py writes them): what it is for and its limits,
# its training data and their licences, its dev figures and thresholds, its speed.
CARD = ("description", "sources", "license", "performance", "speed")


def _declares(requirements: List[str], name: str) -> bool:
    wanted = re.sub(r"[-_.]+", "-", name).lower()
    for req in requirements:
        found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if found and re.sub(r"[-_.]+", "-", found.group(1)).lower() == wanted:
            return True
    return False


def wheel_requirements(path: Path) -> List[str]:
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(name).decode("utf8")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def sdist_requirements(path: Path) -> List[str]:
    with tarfile.open(path) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith(".egg-info/requires.txt"))
        text = tf.extractfile(member).read().decode("utf8")  # type: ignore[union-attr]
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("[")]


def main(
    package_dir: Path = typer.Argument(..., help="Directory written by spacy package (NAME-VERSION)"),
    require: str = typer.Option(REQUIRED, "--require", help="Distribution the package must depend on"),
) -> None:
    meta_path = package_dir / "meta.json"
    if not meta_path.is_file():
        typer.echo(f"Error: {meta_path} not found: did `spacy package` run?", err=True)
        raise typer.Exit(1)
    meta = json.loads(meta_path.read_text(encoding="utf8"))
    problems = []
    empty = [field for field in CARD if not meta.get(field)]
    if empty:
        problems.append(
            f"meta.json has no {', '.join(empty)}: write it with scripts/model_card.py (spacy package --meta)"
        )
    if not _declares(meta.get("requirements", []), require):
        problems.append(f"meta.json requirements {meta.get('requirements')} do not include {require}")
    archives = sorted((package_dir / "dist").glob("*.whl")) + sorted((package_dir / "dist").glob("*.tar.gz"))
    if not archives:
        problems.append(f"no .whl or .tar.gz in {package_dir / 'dist'}")
    for archive in archives:
        try:
            reqs = wheel_requirements(archive) if archive.suffix == ".whl" else sdist_requirements(archive)
        except (StopIteration, OSError, zipfile.BadZipFile, tarfile.TarError) as err:
            problems.append(f"{archive}: cannot read its requirements ({err!r})")
            continue
        if not _declares(reqs, require):
            problems.append(f"{archive} does not declare {require} (requirements: {reqs})")
        else:
            size = archive.stat().st_size / 1e6
            typer.echo(f"OK {archive} ({size:.1f} MB) requires {', '.join(reqs)}")
    if problems:
        typer.echo("Error: package check failed:\n" + "\n".join(problems), err=True)
        raise typer.Exit(1)
    name = f"{meta['lang']}_{meta['name']}"
    typer.echo(f"Install with: pip install {archives[0]}   then: spacy.load({name!r})")


if __name__ == "__main__":
    typer.run(main)
