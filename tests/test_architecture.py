"""The shape of the code holds: the layers contract (type-only imports included), no import
cycle, and a core that never imports Textual, checked module by module in an interpreter where
Textual cannot be imported. Modules have no size cap: a module is as big as its one concept."""

from __future__ import annotations

import json
import pkgutil
import shutil
import subprocess
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib
from pathlib import Path

import grimp
import pytest
from conftest import CORPUS, ROOT

import tlview

PACKAGE = Path(tlview.__file__).parent
MODULES = sorted(m.name for m in pkgutil.walk_packages([str(PACKAGE)], "tlview."))
CORE = [m for m in MODULES if not m.startswith(("tlview.ui", "tlview.__main__"))]


def test_import_contracts_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    out = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, check=False)  # (the code is asserted)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_every_package_of_tlview_is_a_layer():
    """A new package or top-level module must take its place in the layers: one outside them
    would be unchecked. (__main__ is the entry point; demo holds data files only.)"""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = {layer for contract in config["tool"]["importlinter"]["contracts"] if contract["type"] == "layers"
              for layer in contract["layers"]}
    top = {m for m in MODULES if m.count(".") == 1} - {"tlview.__main__", "tlview.demo"}
    assert top == layers


def test_no_import_cycle():
    """Function-local imports count: a cycle hidden inside a function is still a cycle."""
    graph = grimp.build_graph("tlview", exclude_type_checking_imports=True)
    cycles = []
    for importer in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.append(" -> ".join((importer, *back)))
    assert cycles == []


_WITHOUT_TEXTUAL = """
import importlib, json, sys
class NoTextual:  # any import of textual, however deep, fails and names who asked
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "textual":
            raise ImportError("imports textual")
sys.meta_path.insert(0, NoTextual())
found = {}
for module in sys.argv[1:]:
    try:
        importlib.import_module(module)
        found[module] = None
    except ImportError as exc:
        found[module] = str(exc)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def imports_without_textual() -> dict:
    """Every core module imported in one interpreter where importing Textual fails: a module
    that imports it (itself or through another) fails to import. One process, not one each."""
    out = subprocess.run([sys.executable, "-c", _WITHOUT_TEXTUAL, *CORE], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", CORE)
def test_core_module_does_not_import_textual(module, imports_without_textual):
    assert imports_without_textual[module] is None, imports_without_textual[module]


def test_json_output_runs_without_textual():
    code = (
        "import sys, io, contextlib\n"
        "from tlview.cli import main\n"
        "buf = io.StringIO()\n"
        f"rc = main(['--json', {str(CORPUS / 'model' / 'trace')!r}])\n"
        "assert rc == 0\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_the_panes_not_shown_first_are_imported_after_the_first_screen():
    """The explorer imports the panes it mounts after its first screen only then (detail.TABS):
    their modules took 23 ms of the 0.5 s to it; the code panes' lexer (pygments) 8 ms more."""
    from tlview.ui.detail import COMPOSED_FIRST, TABS

    later = [pane for tab_id, _, _, pane in TABS if tab_id not in COMPOSED_FIRST]
    assert later and all(isinstance(pane, str) for pane in later)
    modules = [f"tlview.ui.{pane.split('.')[0]}" for pane in later] + ["rich.syntax", "pygments"]  # (the lexer's)
    code = ("import sys\nimport tlview.ui.launch\n"
            f"print([m for m in {modules!r} if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
