"""No import cycle in `dreval_assets`: a lower module never reaches up, not even inside a function or
under TYPE_CHECKING. Every import the source names counts (top level, function level, TYPE_CHECKING),
relative ones resolved; `from pkg import name` counts as importing `pkg.name` when that is a module."""
import ast
from pathlib import Path

import dreval_assets

PACKAGE_ROOT = Path(dreval_assets.__file__).parent
PACKAGE = "dreval_assets"


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules `module` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            # `import a.b.c` reaches a.b.c; the nearest known module stands for it
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith(PACKAGE) and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_names(PACKAGE_ROOT)
    known = set(modules)
    return {name: imported_modules(name, path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_finder_sees_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_counts_relative_function_level_and_type_checking_imports():
    graph = import_graph()
    # protocol imports judges.base under TYPE_CHECKING only
    assert "dreval_assets.judges.base" in graph["dreval_assets.benchmarks.protocol"]
    # `from . import core` in the registry names the benchmark folder's package
    assert "dreval_assets.benchmarks.core" in graph["dreval_assets.benchmarks.registry"]


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_a_benchmarks_live_refresh_is_imported_only_from_its_own_folder():
    """The dispatch reaches it through `Benchmark.live` (a module name), never by an import."""
    graph = import_graph()
    strays = [(module, target) for module, targets in graph.items() for target in targets
              if (live := target.partition(".live")[0]).startswith(f"{PACKAGE}.benchmarks.")
              and ".live" in target and not module.startswith(live)]
    assert strays == []
