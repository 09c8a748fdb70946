"""Copy the STS Benchmark and SICK train/dev files from the local data mirror into the data
directory and verify them (size and sha256); any problem fails the workflow. The test splits
are not used.

Usage:
    python scripts/fetch_sts.py --mirror ../../shared/data --data-dir assets
"""

import hashlib
import shutil
from pathlib import Path

import typer

# path relative to the mirror (and to the data dir) -> (bytes, sha256)
FILES = {
    "sts/sts-train.csv": (901176, "fbe68f39a712ff9e80d48906d62547bde42a8154a37dfb5ad78002f29a810fb3"),
    "sts/sts-dev.csv": (255680, "5d7e944d8b02734b07bfdb5df67db3420c64bed153fcaa1ba47ad03480cf4234"),
    "sts/SICK_train.txt": (506243, "266cf8047149bd1d68138dd30439f3122bff30069740ac6705bb6197d9f1b48e"),
    "sts/SICK_trial.txt": (57225, "5a88cfb62f8c6bd2a3cce0f2421ba2cb8c2be5ab4a800f6f01e2c64aafb7db56"),
}
OFFICIAL = (
    "STS Benchmark: http://ixa2.si.ehu.es/stswiki/index.php/STSbenchmark (sts-train.csv, sts-dev.csv); "
    "SICK: https://marcobaroni.org/composes/sick.html (SICK_train.txt, SICK_trial.txt)"
)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(
    mirror: Path = typer.Option(..., help="Local data mirror (holds sts/)"),
    data_dir: Path = typer.Option(Path("assets"), help="Where the files go"),
) -> None:
    problems = []
    for rel, (size, checksum) in FILES.items():
        src, dst = mirror / rel, data_dir / rel
        if not dst.is_file() or dst.stat().st_size != size or sha256(dst) != checksum:
            if not src.is_file():
                problems.append(f"{rel}: missing or damaged in {data_dir}, and not in the mirror {mirror}")
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)  # not copy(): the mirror's files are read-only
            typer.echo(f"Copied {src} -> {dst}")
        found = dst.stat().st_size, sha256(dst)
        if found != (size, checksum):
            problems.append(f"{dst}: {found[0]} bytes, sha256 {found[1]}; expected {size} bytes, sha256 {checksum}")
    if problems:
        typer.echo("\n".join(problems), err=True)
        typer.echo(f"Put the official files in {data_dir}/sts/ ({OFFICIAL}).", err=True)
        raise typer.Exit(1)
    typer.echo(f"Verified {len(FILES)} STS/SICK files in {data_dir}/sts")


if __name__ == "__main__":
    typer.run(main)
