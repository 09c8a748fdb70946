"""Put the raw files of the chosen dataset(s) into the data directory, then
verify them (see check_assets.py); any problem fails the workflow.

* If the `mirror` var names an existing directory (a local copy of the data, here
  `../shared/data`), the files are copied from it. No network is used.
* Otherwise the official files listed in project.yml's `assets` section are
  downloaded with weasel's asset fetcher (what `spacy project assets` does), for
  the chosen dataset(s) only.

Usage:
    python scripts/fetch_assets.py all --data-dir assets --mirror ../../shared/data \
        --checksums checksums.sha256 --corpus-dir corpus
"""

import filecmp
import shutil
from pathlib import Path
from typing import List

import typer
from check_assets import (
    DATASETS,
    FILES,
    GROUPS,
    PROJECT_DIR,
    AssetError,
    check_dataset,
    source_of,
    write_sources,
)


def copy_from_mirror(dataset: str, mirror: Path, data_dir: Path) -> None:
    if mirror.resolve() == data_dir.resolve():
        typer.echo(f"Using the local mirror {mirror} in place")
        return
    for rel in FILES[dataset]["mirror"]:
        src, dst = mirror / rel, data_dir / rel
        if not src.is_file():
            continue  # reported by the check
        if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
            typer.echo(f"Up to date: {dst}")
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)  # not copy(): the mirror's files are read-only
        typer.echo(f"Copied {src} -> {dst}")


def download_official(dataset: str, data_dir: Path) -> None:
    from weasel.cli.assets import fetch_asset
    from weasel.util import load_project_config

    config = load_project_config(PROJECT_DIR, overrides={"vars.data_dir": str(data_dir)})
    wanted = {(data_dir / rel).as_posix() for rel in FILES[dataset]["official"]}
    for asset in config.get("assets", []):
        dest = Path(asset["dest"])
        if dest.as_posix() not in wanted or not asset.get("url"):
            continue
        if dest.exists():  # weasel would not download it again either; the check verifies it
            typer.echo(f"Present: {dest} (delete it to download it again)")
            continue
        typer.echo(f"Fetching {dest} from {asset['url']}")
        try:
            fetch_asset(Path.cwd(), asset["url"], dest, asset.get("checksum"))
        except OSError as err:  # requests' errors too: no network, a 404, a connection cut
            dest.unlink(missing_ok=True)  # a partial file would count as present on the next run
            typer.echo(f"Download failed: {dest} from {asset['url']}: {err}", err=True)


def main(
    dataset: str = typer.Argument(
        "all", help=f"all (quora + stackexchange), documents (20news + reuters), or one of {', '.join(DATASETS)}"
    ),
    data_dir: Path = typer.Option(Path("assets"), "--data-dir", help="Where the raw files go"),
    mirror: str = typer.Option("", "--mirror", help="Local data mirror to copy from, if it exists"),
    checksums: Path = typer.Option(Path("checksums.sha256"), "--checksums", help="sha256 list for mirror files"),
    corpus_dir: Path = typer.Option(Path("corpus"), "--corpus-dir", help="Writes <corpus-dir>/<dataset>/sources.json"),
) -> None:
    if dataset not in tuple(GROUPS) + DATASETS:
        typer.echo(f"Error: unknown dataset {dataset!r}; choose {', '.join(tuple(GROUPS) + DATASETS)}.", err=True)
        raise typer.Exit(1)
    chosen: List[str] = list(GROUPS.get(dataset, [dataset]))
    source = source_of(mirror)
    typer.echo(
        f"Source: local mirror {mirror}"
        if source == "mirror"
        else "Source: official downloads (no local mirror"
        + (f" at {mirror}" if mirror and mirror.lower() not in ("none", "null", "-") else "")
        + ")"
    )
    failed = []
    for name in chosen:
        if source == "mirror":
            copy_from_mirror(name, Path(mirror), data_dir)
        else:
            download_official(name, data_dir)
        try:
            records = check_dataset(name, data_dir, mirror, checksums)
        except AssetError as err:
            failed.append(f"{name}:\n{err}")
            continue
        for rec in records:
            typer.echo(f"OK {rec['name']} ({rec['bytes']:,} bytes, sha256 {str(rec['sha256'])[:12]}...)")
        write_sources(corpus_dir / name / "sources.json", name, source, records)
    if failed:
        typer.echo("Error: asset check failed for " + "\n".join(failed), err=True)
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
