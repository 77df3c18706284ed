"""The package's architecture, as the README's "Architecture" section states it.

* No module imports another module's private names (``from .x import _y`` or ``x._y``).
* Every top-level module or package of ``ldpkit`` depends only on the layers below it; a new
  module must be placed in :data:`ALLOWED` (and in the README) before it can land.
* The kit holds the science, the book its own tooling: no module of ``ldpkit`` imports the
  book's package ``booktools``.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from conftest import REPO

ROOT = REPO / "ldpkit"
HELPERS = {"_rng", "_validation", "_sampling", "_solvers", "_registry", "_buildinfo"}
CORE = HELPERS | {"channels", "accountant", "reports", "sets", "mechanism"}
#: a family module declares its family (``family``) and may read a promise (``contracts``)
ORACLES = CORE | {"base", "postprocess", "contracts", "family"}
MECHANISMS = {"grr", "unary", "olh", "hadamard", "urr", "iprr", "padding", "idue", "channel_oracle", "lip",
              "subset", "hashing", "blh", "flh", "sketch"}

#: what each top-level unit may import from ldpkit (besides itself)
ALLOWED: dict[str, set[str]] = {
    "_rng": {"_validation"},
    "_validation": set(),
    "_sampling": set(),
    "_solvers": {"_validation"},
    "_registry": set(),
    "_buildinfo": set(),
    "channels": {"_rng", "_validation"},
    "reports": {"_validation", "_registry"},
    "sets": {"_validation"},
    "accountant": {"_validation", "_registry", "channels"},
    "postprocess": {"_validation", "channels"},
    "metrics": {"_validation"},
    "budgets": {"_rng", "_validation"},
    "base": CORE | {"postprocess"},
    "mechanism": {"_rng", "accountant", "channels", "reports"},
    "contracts": {"_validation", "accountant", "mechanism"},
    "family": {"_registry", "_validation", "reports", "contracts", "mechanism"},
    "channel_oracle": ORACLES,
    "grr": ORACLES,
    "unary": ORACLES,
    "hashing": ORACLES,
    "olh": ORACLES | {"hashing"},
    "blh": ORACLES | {"olh", "hashing"},
    "flh": ORACLES | {"olh", "hashing"},
    "sketch": ORACLES | {"olh", "hashing"},
    "hadamard": ORACLES,
    "lip": ORACLES | {"channel_oracle"},
    "urr": ORACLES,
    "urap": ORACLES | {"unary"},
    "histogram": ORACLES | {"unary"},
    "hadamard_mechanism": ORACLES | {"hadamard"},
    "iprr": ORACLES,
    "padding": ORACLES,
    "idue": ORACLES | {"unary", "padding"},
    "subset": ORACLES,
    "datasets": {"_rng", "_validation", "sets"},
    "calibration": {"_validation", "accountant", "contracts", "family", "mechanism"},
    "optimal": {"_solvers", "_validation", "contracts", "family", "calibration", "subset"},
    "audit": MECHANISMS | {"_rng", "_validation", "channels", "accountant", "family", "mechanism"},
    "notion_map": {"_rng", "_validation", "accountant", "channels", "contracts", "family"},
    "streaming": {"_rng", "_validation", "base"},
    "domain": {"_validation"},
    "reportio": {"_validation", "reports", "domain", "family", "mechanism"},
    "aggregation": {"_validation", "domain", "reportio", "mechanism"},
    "testing": ORACLES | MECHANISMS | {"reportio", "aggregation"},
    "experiments": ORACLES | MECHANISMS | {"metrics", "budgets", "datasets", "contracts", "calibration",
                                           "notion_map", "audit"},
    "cli": ORACLES | MECHANISMS | {"metrics", "budgets", "datasets", "experiments", "domain", "reportio",
                                   "aggregation", "contracts", "calibration"},
}
#: the book's own tooling (``book/booktools``): it imports the kit, the kit never imports it
BOOK_TOOLING = "booktools"


@functools.cache
def _source(path: Path) -> tuple[str, ast.Module]:
    """The text of a module of the kit and its syntax tree, read and parsed once for every test here."""
    text = path.read_text()
    return text, ast.parse(text)


def _tree(path: Path) -> ast.Module:
    return _source(path)[1]


def _unit(path: Path) -> str:
    return path.relative_to(ROOT).with_suffix("").parts[0]


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """``(line, top-level unit imported, names imported)`` for every ldpkit import of a file."""
    pkg = list(path.relative_to(ROOT).parent.parts)
    out = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    out.append((node.lineno, target[0], names))
                else:  # from . import a, b
                    out.extend((node.lineno, n, []) for n in names)
            elif node.module and node.module.split(".")[0] == "ldpkit":
                parts = node.module.split(".")
                if len(parts) > 1:
                    out.append((node.lineno, parts[1], names))
                else:
                    out.extend((node.lineno, n, []) for n in names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "ldpkit" and len(parts) > 1:
                    out.append((node.lineno, parts[1], []))
    return out


def test_no_module_imports_private_names_of_another() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        for line, unit, names in _imports(path):
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    bad.append(f"{path.relative_to(REPO)}:{line} imports {name} from {unit}")
        # attribute access to a private name of an imported ldpkit module, e.g. `accountant._x`
        modules = {a.asname or a.name for node in ast.walk(_tree(path))
                   if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ldpkit"))
                   for a in node.names}
        for node in ast.walk(_tree(path)):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{path.relative_to(REPO)}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)


def test_layering() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        unit = _unit(path)
        if unit in ("__init__", "__main__"):
            continue
        assert unit in ALLOWED, f"{unit} is not placed in the architecture (tests/test_architecture.py, README)"
        for line, target, _ in _imports(path):
            if target == "__version__":  # the package's version (ldpkit/__init__.py), not a layer
                continue
            if target != unit and target not in ALLOWED[unit]:
                bad.append(f"{path.relative_to(REPO)}:{line}: {unit} may not import {target}")
    assert not bad, "\n".join(bad)


def test_the_kit_never_imports_the_book_tooling() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{path.relative_to(REPO)}:{node.lineno} imports {name}" for name in names
                    if name.split(".")[0] == BOOK_TOOLING]
        text = _source(path)[0]
        if f'"{BOOK_TOOLING}' in text or f"'{BOOK_TOOLING}" in text:
            bad.append(f"{path.relative_to(REPO)} names {BOOK_TOOLING} in a string (a dynamic import?)")
    assert not bad, "\n".join(bad)


def test_every_unit_exists_and_ships_type_information() -> None:
    present = {_unit(p) for p in ROOT.rglob("*.py")} - {"__init__", "__main__"}
    assert present <= set(ALLOWED)
    assert (ROOT / "py.typed").is_file()
