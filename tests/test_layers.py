"""The package's import graph: no cycle, and no import from a higher layer (docs/design.md)."""

import ast
import re
from pathlib import Path
from typing import Dict, List, Set

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "spacy_siamese"


def module_names() -> Dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, modules: Dict[str, Path]) -> Set[str]:
    """Every spacy_siamese module `name` imports anywhere in its file (TYPE_CHECKING and
    function-local imports included); `from pkg import sub` counts as importing pkg.sub."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


def graph() -> Dict[str, Set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_table() -> Dict[str, int]:
    """{module or package (dotted, under spacy_siamese): layer number} from docs/design.md."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    table: Dict[str, int] = {}
    for number, cell in re.findall(r"^\| (\d+) \| [^|]+ \| ([^|]+) \|$", section, flags=re.M):
        for name in re.findall(r"`([\w.]+)`", cell):
            dotted = "spacy_siamese" if name == "__init__" else f"spacy_siamese.{name}"
            table[dotted] = int(number)
    return table


def layer_of(module: str, table: Dict[str, int]) -> int:
    # The package's own `__init__` is a module of its layer, not a package standing for all.
    candidates = [m for m in table if module == m or (m != "spacy_siamese" and module.startswith(m + "."))]
    if not candidates:
        raise AssertionError(f"{module} is in no layer of docs/design.md")
    return table[max(candidates, key=len)]


def find_cycle(edges: Dict[str, Set[str]]) -> List[str]:
    """One import cycle as a list of modules, or [] (depth-first search)."""
    state: Dict[str, int] = {}  # 1: on the stack, 2: done
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_no_module_imports_from_a_higher_layer():
    table = layer_table()
    wrong = [
        f"{a} (layer {layer_of(a, table)}) imports {b} (layer {layer_of(b, table)})"
        for a, targets in graph().items()
        for b in targets
        if layer_of(b, table) > layer_of(a, table)
    ]
    assert not wrong, "\n".join(wrong)


def test_every_module_has_a_layer():
    table = layer_table()
    for module in module_names():
        layer_of(module, table)
    with pytest.raises(AssertionError, match="spacy_siamese.unlisted is in no layer"):
        layer_of("spacy_siamese.unlisted", table)


def test_the_checks_see_a_cycle_and_a_typing_only_import(tmp_path):
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..component import X\n"
    path = tmp_path / "mod.py"
    path.write_text(source)
    modules = {"spacy_siamese.search.mod": path, "spacy_siamese.component": path}
    assert imports_of("spacy_siamese.search.mod", path, modules) == {"spacy_siamese.component"}


@pytest.mark.parametrize("module", ["spacy_siamese.hooks", "spacy_siamese.vectors", "spacy_siamese.scoring"])
def test_low_modules_do_not_reach_the_pipe_or_evaluation(module):
    """What a low module imports, directly or through others, holds neither the component nor
    evaluation (the scorer's metrics live below evaluation)."""
    edges = graph()
    closure, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name not in closure:
            closure.add(name)
            todo.extend(edges[name])
    assert "spacy_siamese.component" not in closure
    assert not any(name.startswith("spacy_siamese.evaluation") for name in closure)
