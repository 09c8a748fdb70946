"""Verify the raw files of a dataset (pair files or a document collection) before anything is converted or trained.

`spacy project assets` only prints a checksum mismatch and exits 0, so a wrong or
truncated download would flow silently into training. This script fails instead
(exit code 1), naming the file, the expected and actual checksum and size, and
what to do about it.

Two sources, decided by the `mirror` argument (see project.yml):

* mirror: a local copy of the data (here `../shared/data`). Every file must be
  listed in the checksum file (`checksums.sha256`: `sha256  bytes  path` per line,
  paths relative to the mirror) and match it.
* official: the files `spacy project assets` downloads from the datasets' own
  sources. Their MD5 checksums are read from the `assets` section of project.yml;
  a file without a published checksum is still checked for being a readable,
  non-empty file (the convert step then parses every record).

On success the script writes `corpus/<dataset>/sources.json` (the verified files
with their sha256 and size). The convert step reads it, and weasel re-runs the
convert step when it changes.

Usage:
    python scripts/check_assets.py quora --data-dir assets --mirror ../../shared/data \
        --checksums checksums.sha256 --output corpus/quora/sources.json
"""

import hashlib
import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import typer

DATASETS = ("quora", "stackexchange", "20news", "reuters", "sts", "paraphrase")
# What `fetch_assets.py all` / `documents` fetch: the pair datasets / the document collections.
GROUPS = {"all": ("quora", "stackexchange"), "documents": ("20news", "reuters")}
STS_FILES = [f"sts/{name}" for name in ("sts-train.csv", "sts-dev.csv", "SICK_train.txt", "SICK_trial.txt")]
PARAPHRASE_FILES = ["paraphrase/msr_paraphrase_train.txt"] + [
    f"paraphrase/twitter_url_train/{name}" for name in ("a.toks", "b.toks", "sim.txt")
]
# The raw files each dataset needs, relative to the data directory, per source.
FILES: Dict[str, Dict[str, List[str]]] = {
    "quora": {
        "mirror": ["quora/train.tsv", "quora/dev.tsv"],
        "official": ["quora/quora_duplicate_questions.tsv"],
    },
    "stackexchange": {
        "mirror": ["stackexchange/askubuntu.tsv", "stackexchange/meta.tsv"],
        "official": ["stackexchange/askubuntu.tsv", "stackexchange/meta.tsv"],
    },
    # The mirror holds the train half of 20 Newsgroups; the official archive holds both
    # halves, and scripts/convert_documents.py reads only the train half of it.
    "20news": {
        "mirror": ["documents/20news-bydate-train.tar.gz"],
        "official": ["documents/20news-bydate.tar.gz"],
    },
    "reuters": {
        "mirror": [f"documents/reuters21578/reut2-{i:03d}.sgm" for i in range(22)],
        "official": ["documents/reuters21578.tar.gz"],
    },
    # STS Benchmark and SICK, train and dev splits only (the test splits are not used). Their
    # official releases are archives; the four files are placed in <data_dir>/sts/ from them.
    "sts": {
        "mirror": STS_FILES,
        "official": STS_FILES,
    },
    # MRPC's training file and the Twitter URL corpus's training part (the test parts are not
    # used; each gets a dev split in the convert-general step). MRPC comes as an installer: its
    # file is placed in <data_dir>/paraphrase/ from it.
    "paraphrase": {
        "mirror": PARAPHRASE_FILES,
        "official": PARAPHRASE_FILES,
    },
}
PROJECT_DIR = Path(__file__).resolve().parent.parent


class AssetError(Exception):
    """A missing, wrong or unreadable asset; the message says what to do."""


def use_mirror(mirror: str) -> bool:
    """The local mirror is used when the `mirror` var names an existing directory."""
    return bool(mirror) and mirror.lower() not in ("none", "null", "-") and Path(mirror).is_dir()


def source_of(mirror: str) -> str:
    return "mirror" if use_mirror(mirror) else "official"


def file_digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with path.open("rb") as file_:
        for block in iter(lambda: file_.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_checksums(path: Path) -> Dict[str, Tuple[str, Optional[int]]]:
    """`sha256  bytes  path` per line ('#' starts a comment; bytes may be '-')."""
    if not path.is_file():
        raise AssetError(f"Checksum file not found: {path}. It lists the sha256 of every mirror file.")
    out: Dict[str, Tuple[str, Optional[int]]] = {}
    for i, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) != 3 or len(parts[0]) != 64:
            raise AssetError(f"{path}:{i}: expected 'sha256  bytes  path', found {line!r}")
        digest, size, name = parts
        out[name.strip()] = (digest.lower(), None if size == "-" else int(size.replace(",", "")))
    return out


def official_checksums(data_dir: str) -> Dict[str, Tuple[str, Optional[str], str]]:
    """{path relative to data_dir: (url, md5 or None, description)} from project.yml's assets."""
    from weasel.util import load_project_config

    config = load_project_config(PROJECT_DIR, overrides={"vars.data_dir": data_dir})
    out = {}
    for asset in config.get("assets", []):
        dest = Path(asset["dest"])
        try:
            rel = dest.relative_to(data_dir).as_posix()
        except ValueError:
            continue
        out[rel] = (asset.get("url") or "", asset.get("checksum"), asset.get("description") or "")
    return out


def _size(n: int) -> str:
    return f"{n:,} bytes"


def check_dataset(dataset: str, data_dir: Path, mirror: str, checksums: Path) -> List[Dict[str, object]]:
    """Check every raw file of `dataset`; return their records, or raise AssetError
    listing all problems found."""
    source = source_of(mirror)
    if source == "mirror":
        expected = read_checksums(checksums)
        redo = (
            f"Copy it again from the mirror ({mirror}): delete it from {data_dir} and run "
            "`spacy project run assets`. If the mirror itself is damaged, restore it."
        )
    else:
        official = official_checksums(str(data_dir))
    problems: List[str] = []
    records: List[Dict[str, object]] = []
    for rel in FILES[dataset][source]:
        path = data_dir / rel
        if source == "official":
            url, md5, description = official.get(rel, ("", None, ""))
            # A file without a URL (from an archive or an installer) is never downloaded: name its source.
            origin = f"its official source: {description or 'see project.yml'}"
            redo = (
                f"Delete it and run `spacy project run assets` to download it again from {url}, "
                "or place the file there yourself."
                if url
                else f"Replace it with the file from {origin}."
            )
        if not path.is_file():
            if source == "mirror":
                where = f"the local mirror {mirror}"
                todo = (
                    "Copy it into the mirror (see the mirror's DATA.md), or run with "
                    "--vars.mirror=none to download the official files instead."
                )
            elif url:
                where = f"{data_dir} (download: {url})"
                todo = "Run `spacy project run assets` (needs network), or place the file there yourself."
            else:
                where = str(data_dir)
                todo = f"It is not downloaded: get it from {origin}, and place the file there yourself."
            problems.append(f"Missing asset: {rel} is not in {where}. {todo}")
            continue
        size = path.stat().st_size
        sha256 = file_digest(path, "sha256")
        if source == "mirror":
            if rel not in expected:
                problems.append(
                    f"No checksum listed for {rel} in {checksums}. Add a line "
                    f"'{sha256}  {size}  {rel}' once you have verified the file."
                )
                continue
            want, want_size = expected[rel]
            if sha256 != want:
                hint = ""
                if want_size is not None and size != want_size:
                    hint = f" The file has {_size(size)}, expected {_size(want_size)}" + (
                        " (truncated?)." if size < want_size else "."
                    )
                problems.append(f"Wrong checksum for {path}: expected sha256 {want}, got {sha256}.{hint} {redo}")
                continue
        else:
            if size == 0:
                problems.append(f"Empty asset: {path} has 0 bytes. {redo}")
                continue
            if md5:
                got = file_digest(path, "md5")
                if got != md5.lower():
                    problems.append(
                        f"Wrong checksum for {path}: expected MD5 {md5} (project.yml), got {got} "
                        f"({_size(size)}; truncated or changed upstream?). {redo}"
                    )
                    continue
        records.append({"path": str(path), "name": rel, "bytes": size, "sha256": sha256})
    if problems:
        raise AssetError("\n".join(problems))
    return records


def write_sources(output: Path, dataset: str, source: str, records: List[Dict[str, object]]) -> None:
    """Record the verified files; the file is only rewritten when they change."""
    output.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"dataset": dataset, "source": source, "files": records}, indent=2) + "\n"
    if not output.exists() or output.read_text(encoding="utf8") != text:
        output.write_text(text, encoding="utf8")


def main(
    dataset: str = typer.Argument(..., help=", ".join(DATASETS)),
    data_dir: Path = typer.Option(Path("assets"), "--data-dir", help="Where the raw files are"),
    mirror: str = typer.Option("", "--mirror", help="Local data mirror; if it exists its checksums apply"),
    checksums: Path = typer.Option(Path("checksums.sha256"), "--checksums", help="sha256 list for mirror files"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the verified file list (JSON) here"),
) -> None:
    if dataset not in DATASETS:
        typer.echo(f"Error: unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}.", err=True)
        raise typer.Exit(1)
    try:
        records = check_dataset(dataset, data_dir, mirror, checksums)
    except AssetError as err:
        typer.echo(f"Error: asset check failed for {dataset}:\n{err}", err=True)
        raise typer.Exit(1) from None
    source = source_of(mirror)
    for rec in records:
        typer.echo(f"OK {rec['name']} ({rec['bytes']:,} bytes, sha256 {str(rec['sha256'])[:12]}...)")
    if output:
        write_sources(output, dataset, source, records)


if __name__ == "__main__":
    typer.run(main)
