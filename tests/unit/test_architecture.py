"""The package's structure, read from its source (no import runs): layers, import loops, document references.

The layers, lowest first, are described in docs/design/architecture.md. A module may import from its own layer and
the ones below; an import that runs up is either listed in :data:`UP_IMPORTS` (and named, with its reason, in
docs/design/architecture.md) or a failure. Function-level imports count like top-level ones; ``if TYPE_CHECKING:``
ones do not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from linkage_lab.paths import REPO_ROOT

pytestmark = pytest.mark.unit

SOURCE = REPO_ROOT / "source"
PACKAGES = ("linkage_lab", "linkage_lab_experiments")

#: Layer of each top-level part of ``linkage_lab`` (the rest of a dotted name inherits it).
BASE = {"paths", "io", "console", "outputs", "config", "config_ranges", "typed_config", "linkage_constants"}
BASE |= {"arguments", "exit_codes"}
MATH = {"kinematics", "dynamics", "gait", "statics", "description", "actuators", "physics"}
REGISTRY = {"robots", "robots.registry", "robots.ankles", "robots.assets", "robots.spawn"}
FRAMEWORKS = {"tasks", "checkpoints", "runs", "evaluation", "export", "sim2sim", "sprint", "deploy", "training"}
FRAMEWORKS |= {"runtime", "pretrained"}
LAYERS = ("base", "math", "registry", "frameworks", "robots", "application", "experiments")

ARCHITECTURE = "docs/design/architecture.md"
#: The imports that run up the layers, each justified in docs/design/architecture.md (at most 5).
UP_IMPORTS: set[tuple[str, str]] = set()


def layer(module: str) -> int:
    """Index in :data:`LAYERS` of a dotted module name."""
    if module.startswith("linkage_lab_experiments"):
        return LAYERS.index("experiments")
    rest = module.removeprefix("linkage_lab").removeprefix(".")
    if not rest:
        return LAYERS.index("base")
    if rest == "tasks.registered" or rest.startswith("cli") or re.match(r"tasks\.\w+\.config\.", rest):
        return LAYERS.index("application")  # the robots' task deltas, and what registers them all
    if rest in REGISTRY:
        return LAYERS.index("registry")
    if rest.startswith("robots."):
        return LAYERS.index("robots")
    top = rest.split(".")[0]
    for name, members in (("base", BASE), ("math", MATH), ("frameworks", FRAMEWORKS)):
        if top in members:
            return LAYERS.index(name)
    raise AssertionError(f"{module} is in no layer: add its package to one in {__name__}")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (SOURCE / package).rglob("*.py"):
            parts = list(path.relative_to(SOURCE).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``module`` imports anywhere in its body, outside ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    # Importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first (those above the importer's own package
    # are already running): a loop through a package's ``__init__`` is a loop.
    for name in list(targets):
        parent = name.rpartition(".")[0]
        while parent and parent in known and not module.startswith(parent + ".") and parent != module:
            targets.add(parent)
            parent = parent.rpartition(".")[0]
    return targets


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {module: _imports(module, path, set(modules)) for module, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loops(graph):
    assert _cycles(graph) == []


def test_imports_run_down_the_layers(graph):
    up = {(a, b) for a, targets in graph.items() for b in targets if layer(b) > layer(a)}
    assert up == UP_IMPORTS, f"imports up the layers not in UP_IMPORTS: {sorted(up - UP_IMPORTS)}"
    assert len(UP_IMPORTS) <= 5
    architecture = (REPO_ROOT / ARCHITECTURE).read_text()
    for importer, imported in UP_IMPORTS:
        assert f"`{importer}` → `{imported}`" in architecture, (
            f"{importer} → {imported} is not justified in {ARCHITECTURE}"
        )


def test_the_math_and_base_know_no_robot(graph):
    low = (LAYERS.index("base"), LAYERS.index("math"))
    offenders = {
        (a, b) for a, targets in graph.items() if layer(a) in low for b in targets if b.startswith("linkage_lab.robots")
    }
    assert offenders == set()


def test_generic_code_reaches_no_robot_package(graph):
    """Only a robot's own package, the task deltas per robot and the experiments name a robot's modules."""
    robot_package = re.compile(r"linkage_lab\.robots\.(?!registry$|ankles$|assets$|spawn$)(\w+)")
    offenders = set()
    for importer, targets in graph.items():
        for imported in targets:
            match = robot_package.match(imported)
            if match is None or layer(importer) == LAYERS.index("experiments"):
                continue
            own = importer.startswith(f"linkage_lab.robots.{match.group(1)}")
            task_delta = re.match(rf"linkage_lab\.tasks\.\w+\.config\.{match.group(1)}\b", importer)
            if not (own or task_delta):
                offenders.add((importer, imported))
    assert offenders == set()


def test_the_library_does_not_import_its_experiments(graph):
    assert {(a, b) for a, t in graph.items() if a.startswith("linkage_lab.") for b in t if "experiments" in b} == set()


#: A document named in code: a path or bare name ending in ``.md``.
MD_REFERENCE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
#: Names that are written next to their subject, not files of the repo: a bundle's and a run folder's own files.
WRITTEN_BESIDE = {"README.md", "MODEL_CARD.md", "reality_gap.md", "transfer.md"}


def test_every_document_the_code_names_is_in_the_repo():
    missing = []
    for root in ("source", "tests", "scripts", "configs"):
        for path in (REPO_ROOT / root).rglob("*"):
            if path.suffix not in (".py", ".yaml", ".sh") or not path.is_file():
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                for name in MD_REFERENCE.findall(line):
                    if name.rpartition("/")[2] in WRITTEN_BESIDE:
                        continue
                    if not ((REPO_ROOT / name).is_file() or (path.parent / name).is_file()):
                        missing.append(f"{path.relative_to(REPO_ROOT)}:{number}: {name}")
    assert missing == [], "\n".join(missing)
