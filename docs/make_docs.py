"""Write docs/cli.md and docs/keys.md from the code: the command line's parser
(tlview/cli_args.py) and the explorer's keys (`tlview.ui.keys.key_table()`).

    python docs/make_docs.py           write them
    python docs/make_docs.py --check   exit 1 and name the files that differ from what it writes

tests/test_docs.py fails when a file here differs from what this writes: run it after changing an
option or a key, and commit what it wrote.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the tlview beside this folder, not another one installed

from tlview.cli_args import build_parser  # (after the path is set)
from tlview.ui.keys import key_table

GENERATED = "<!-- Written by docs/make_docs.py from {source}: edit that, then run `python docs/make_docs.py`. -->"


def cli_md() -> str:
    """The parser's description, one row per argument with its help, and the examples it ends
    with: made from the parser's actions, not argparse's formatted help, whose layout changes
    between Python versions and follows the terminal's width."""
    parser = build_parser()
    lines = [
        "# Command line",
        "",
        GENERATED.format(source="tlview/cli_args.py"),
        "",
        f"`tlview [OPTIONS] [PATH]`: {parser.description}",
        "",
        "What each option is for, with examples, is in [usage.md](usage.md).",
        "",
        "| argument | what it does |",
        "|---|---|",
    ]
    for action in parser._actions:  # argparse keeps them in this one list, in the order added
        if action.help == argparse.SUPPRESS:
            continue
        lines.append(f"| `{invocation(action)}` | {cell(expanded_help(parser, action))} |")
    lines += ["", "```text", (parser.epilog or "").rstrip(), "```", ""]
    return "\n".join(lines)


def invocation(action: argparse.Action) -> str:
    """`--compare BEFORE AFTER`, `--rank RANK`, `--json`, `path`: as a person types it."""
    if not action.option_strings:
        return action.metavar or action.dest
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or action.dest.upper()
    words = " ".join(metavar) if isinstance(metavar, tuple) else metavar
    return ", ".join(f"{option} {words}" for option in action.option_strings)


def expanded_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help with its `%(default)s` filled in, as `--help` prints it."""
    return (action.help or "") % {**vars(action), "prog": parser.prog}


def keys_md() -> str:
    lines = [
        "# Keys",
        "",
        GENERATED.format(source="tlview/ui/keys.py's key_table()"),
        "",
        "The explorer's keys, as `?` shows them (the footer and the command palette read the same",
        "bindings). The compare view has the same keys but `f` and `[ ]`, which are a single run's;",
        "see [usage.md](usage.md) for the explorer and the compare view.",
    ]
    section = None
    for key_section, keys, what in key_table():
        if key_section != section:
            section = key_section
            lines += ["", f"## {section}", "", "| key | what it does |", "|---|---|"]
        lines.append(f"| {cell(keys)} | {cell(what)} |")
    return "\n".join(lines) + "\n"


def cell(text: str) -> str:
    """Text in a markdown table's cell: a `|` would end the cell."""
    return text.replace("|", "\\|")


def documents() -> dict[Path, str]:
    """Each generated file with the text it must have."""
    return {DOCS / "cli.md": cli_md(), DOCS / "keys.md": keys_md()}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in documents().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'out of date' if check else 'wrote'}: {path.relative_to(DOCS.parent)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
