"""The registry as pyproject declares it: every entry point resolves to the registered
function, every registered spacy-siamese name has an entry point, builder defaults equal the
factory defaults, and every config under configs/ resolves."""

import importlib
import importlib.metadata
import inspect
import pkgutil
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest
from spacy.cli.debug_config import debug_config
from spacy.language import Language
from spacy.util import load_config, load_model_from_config, registry, resolve_dot_names

import spacy_siamese
from spacy_siamese.labelled import is_labelled_doc
from spacy_siamese.pair_examples import is_pair_example

from .conftest import CONFIGS, PAIRS

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "spacy-siamese."


def pyproject_entry_points() -> Dict[str, Dict[str, str]]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]["entry-points"]


def registries() -> Dict[str, Any]:
    """Entry-point group -> the registry that reads it."""
    found = {}
    for name in registry.get_registry_names():
        found[getattr(registry, name).entry_point_namespace] = getattr(registry, name)
    found["spacy_factories"] = registry._entry_point_factories
    return found


def load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def test_installed_entry_points_match_pyproject():
    """`pip install -e .` has been run since the entry points last changed."""
    installed: Dict[str, Dict[str, str]] = {}
    for ep in importlib.metadata.distribution("spacy-siamese").entry_points:
        installed.setdefault(ep.group, {})[ep.name] = ep.value
    assert installed == pyproject_entry_points()


@pytest.mark.parametrize(
    "group,name,target",
    [(group, name, target) for group, names in pyproject_entry_points().items() for name, target in names.items()],
)
def test_entry_point_resolves_to_the_registered_function(group, name, target):
    reg = registries().get(group)
    assert reg is not None, f"{group} is no registry's entry-point group"
    func = load(target)
    if group == "spacy_factories":
        assert Language.has_factory(name) and registry.factories.get(name) is func
    else:
        assert reg.get(name) is func


def _import_all_modules() -> None:
    for info in pkgutil.walk_packages(spacy_siamese.__path__, prefix="spacy_siamese."):
        importlib.import_module(info.name)


def test_every_registered_name_has_an_entry_point():
    _import_all_modules()  # every decorator has run
    declared = pyproject_entry_points()
    for group, reg in registries().items():
        if group == "spacy_factories":
            continue
        ours = {name for name in reg.get_all() if name.startswith(PREFIX)}
        assert ours == set(declared.get(group, {})), group
    assert set(declared["spacy_factories"]) == {"siamese_similarity", "similarity_classifier"}


def _sections(config: Dict[str, Any], path: str = "model") -> Iterator[Tuple[str, Dict[str, Any]]]:
    yield path, config
    for key, value in config.items():
        if isinstance(value, dict):
            yield from _sections(value, f"{path}.{key}")


def test_builder_defaults_equal_the_factory_defaults():
    default = Language.get_factory_meta("siamese_similarity").default_config
    checked = 0
    for path, section in _sections(dict(default["model"])):
        func = registry.architectures.get(section["@architectures"])
        params = inspect.signature(func).parameters
        for key, value in section.items():
            if key.startswith("@") or isinstance(value, dict):
                continue
            default_value = params[key].default
            if isinstance(default_value, tuple):
                default_value = list(default_value)
            assert value == default_value, f"{path}.{key}: factory {value!r}, builder {default_value!r}"
            checked += 1
        assert all(p.kind == p.KEYWORD_ONLY for p in params.values()), f"{path}: builder args not keyword-only"
    assert checked >= 10
    assert default["model"]["encoder"]["@architectures"] == "spacy-siamese.MWEEncoder.v2"


@pytest.mark.parametrize("path", CONFIGS, ids=[c.name for c in CONFIGS])
def test_config_resolves(path, data_files):
    """`spacy debug config CONFIG --paths.train ...` passes (it exits on an invalid config), and the
    start of `spacy train` works: the pipeline is built, the training section and both corpora
    resolve and read the data files."""
    paths = load_config(path, interpolate=False)["paths"]
    overrides = {key: value for key, value in data_files.items() if paths.get(key.split(".")[1], "") is None}
    debug_config(path, overrides=overrides)
    config = load_config(path, overrides=overrides)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["siamese_similarity"]
    filled = nlp.config.interpolate()
    training = registry.resolve(filled["training"], validate=True)
    corpora = resolve_dot_names(filled, [training["train_corpus"], training["dev_corpus"]])
    texts = {text for pair in PAIRS for text in pair[:2]}
    for corpus in corpora:  # each reads the data files given: a pair or a labelled doc of our texts
        first = next(iter(corpus(nlp)))
        assert is_pair_example(first) or is_labelled_doc(first)
        assert first.predicted.text in texts


def test_the_reference_configs_are_one_top_level_folder():
    root = Path(__file__).parent.parent
    assert CONFIGS and {path.parent for path in CONFIGS} == {root / "configs"}
    # a pipeline the project's workflows saved (meta.json beside its config.cfg) is not a reference config
    saved = {path.parent for path in (root / "project").rglob("meta.json")}
    stray = [path for path in (root / "project").rglob("*.cfg") if not saved & set(path.parents)]
    assert stray == []


def test_configs_use_the_current_versions():
    assert len(CONFIGS) >= 10, "configs/*.cfg not found"
    for path in CONFIGS:
        text = path.read_text(encoding="utf8")
        assert "MWEEncoder.v1" not in text and "LogLoss.v1" not in text, path.name
