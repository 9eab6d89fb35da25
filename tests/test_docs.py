"""The documents agree with the code: docs/cli.md and docs/keys.md are what docs/make_docs.py
writes, docs/architecture.md's picture lists the import-linter contract's layers in its order,
the README keeps the test command .ci/run runs, and every relative link leads to a file."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no tomllib: read only the one array of strings this test needs
    tomllib = None

DOCS = ROOT / "docs"
MARKDOWN = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)


def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", DOCS / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["cli.md", "keys.md"])
def test_generated_docs_are_what_make_docs_writes(name):
    written = make_docs().documents()[DOCS / name]
    assert (DOCS / name).read_text(encoding="utf-8") == written, \
        f"docs/{name} is out of date: run `python docs/make_docs.py` and commit it"


def test_cli_doc_names_every_option():
    from tlview.cli_args import build_parser

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    for action in build_parser()._actions:
        for option in action.option_strings:
            assert f"`{option}" in text or f", {option}" in text, option


def test_keys_doc_has_every_row_of_the_key_table():
    from tlview.ui.keys import key_table

    text = (DOCS / "keys.md").read_text(encoding="utf-8")
    rows = key_table()
    assert len(rows) > 20  # the explorer's keys, not an empty table
    for section, keys, _what in rows:
        assert f"## {section}" in text
        assert f"| {keys.replace('|', chr(92) + '|')} |" in text, keys


def contract_layers() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if tomllib is not None:
        contracts = tomllib.loads(text)["tool"]["importlinter"]["contracts"]
        return next(c["layers"] for c in contracts if c["type"] == "layers")
    block = re.search(r'type = "layers"\s*\nlayers = \[(.*?)\]', text, re.DOTALL)
    return re.findall(r'"([\w.]+)"', block.group(1))


def picture_layers(text: str) -> list[str]:
    """The layer names at the start of the lines of the first ```text block under "## The layers"."""
    section = text.split("## The layers", 1)[1]
    picture = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)
    return re.findall(r"^(tlview\.\w+)\b", picture, re.MULTILINE)


def test_architecture_picture_lists_the_contracts_layers_in_order():
    layers = contract_layers()
    assert layers[0] == "tlview.cli" and len(layers) >= 8
    assert picture_layers((DOCS / "architecture.md").read_text(encoding="utf-8")) == layers


def test_the_picture_check_fails_on_layers_out_of_order():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    swapped = text.replace("tlview.views ", "tlview.@@@ ").replace("tlview.index ", "tlview.views ") \
        .replace("tlview.@@@ ", "tlview.index ")
    assert picture_layers(swapped) != contract_layers()


def test_readme_keeps_the_test_command_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.split("# The README's test command:\n", 1)[1].splitlines()[0]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # .ci/run adds --quiet to pip: the README's command is the same without it
    assert command.replace("pip install --quiet ", "pip install ") in readme


def test_readme_is_one_screen():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 70


@pytest.mark.parametrize("document", MARKDOWN, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file(document):
    text = document.read_text(encoding="utf-8")
    targets = [t.split("#", 1)[0] for t in LINK.findall(text)]
    relative = [t for t in targets if t and "://" not in t and not t.startswith("mailto:")]
    assert relative or document.name != "README.md"  # the README links into docs/
    missing = [t for t in relative if not (document.parent / t).exists()]
    assert not missing, f"{document.relative_to(ROOT)} links to files that do not exist: {missing}"


def test_the_readme_s_first_minute_quotes_what_tlview_says_first():
    """The tour's first line is the headline `--report` prints for the README's run (the explorer
    shows the same line on top: test_worst_problem.py)."""
    from conftest import run_cli

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = readme.split("The line on top says what happened: `", 1)[1].split("`", 1)[0]
    quoted = " ".join(quoted.split()).removeprefix("⚠ ")
    code, out = run_cli("--report", str(ROOT / "fixtures" / "corpus" / "graph_breaks"))
    assert code == 0
    headline = out.splitlines()[1]
    assert headline.startswith(quoted), (quoted, headline)
