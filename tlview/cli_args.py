"""The command line's words: every option, its help, and the examples `tlview --help` ends with
(cli.py acts on them)."""

from __future__ import annotations

import argparse

from tlview import __version__

EPILOG = """\
examples:
  tlview /tmp/tracedir                 explore a TORCH_TRACE folder (or one file, or TORCH_LOGS text)
  tlview --follow /tmp/tracedir        follow a running job live
  tlview --report /tmp/tracedir        print a summary and exit
  tlview --json --filter recompiles f  one JSON document on stdout
  tlview --compare before/ after/      what went away, what is new, what stayed (explorer)
  tlview --compare a b --fail-on new   CI: exit 1, a line per new recompile/break/failure
  tlview --report --markdown f         the report as markdown, to paste into an issue
  tlview --perfetto out.json /tmp/tr   every rank's chromium events in one Chrome trace (Perfetto)
  tlview --bundle bug.tar.gz --redact /tmp/tr   one archive for a bug report, your names replaced
  tlview --report --source-root /home/me/job=. /tmp/tr   your code's lines, from a copy of it here
filter words: recompiles, graph_breaks, restarts, errors, perf, guards, dynamic, perf_hints, output_code, rank:N
environment: TLVIEW_FIRST_SCREEN=top opens the explorer on the first compile id (by default: on the
  run's worst problem, its pane shown)
"""


DASK_INSTALL = "pip install 'tlview[dask]'"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tlview", description="A terminal explorer for torch.compile logs "
        "(TORCH_TRACE folders and files, TORCH_LOGS text).", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", nargs="?",
                   help="a TORCH_TRACE folder or file, or TORCH_LOGS text ('-' for stdin with --follow)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--report", action="store_true", help="print a readable summary and exit")
    out.add_argument("--json", action="store_true", help="print one JSON document and exit")
    p.add_argument("--filter", default="", metavar="WORDS",
                   help="keep compile ids matching any of these comma-separated words")
    p.add_argument("--rank", type=int, default=None, help="keep one rank")
    p.add_argument("--latest", action="store_true", help="read only the newest trace file of a folder")
    p.add_argument("--follow", action="store_true",
                   help="follow a running job: PATH may not exist yet; '-' reads TORCH_LOGS text from stdin")
    p.add_argument("--poll", action="store_true",
                   help="with --follow: poll files every second instead of waiting for file events (NFS)")
    p.add_argument("--demo", action="store_true",
                   help="replay a bundled real trace as if a job were running, and follow it")
    p.add_argument("--run", action="store_true",
                   help="--run -- COMMAND ...: run COMMAND with TORCH_TRACE (and TORCH_LOGS, captured) "
                   "set to a new folder, and follow it; the folder is kept (everything after --run is "
                   "the command)")
    p.add_argument("--logs", default="recompiles,graph_breaks,perf_hints,dynamic",
                   help="with --run: the TORCH_LOGS categories to capture (default: %(default)s)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="compare two runs (folders, files or TORCH_LOGS text): the recompiles, graph "
                   "breaks and failures gone, new, and the same")
    p.add_argument("--fail-on", default=None, metavar="WORDS",
                   help="exit 1, one line per item, when any is found: new (with --compare), "
                   "recompiles, graph_breaks, errors, restarts, skipped_frames, perf (comma-separated)")
    p.add_argument("--markdown", action="store_true",
                   help="with --report: GitHub-flavoured markdown (to paste into an issue)")
    p.add_argument("--perfetto", metavar="FILE",
                   help="write the chromium events of every rank to FILE as one Chrome trace JSON "
                   "(a process per rank), to open in Perfetto")
    p.add_argument("--bundle", metavar="OUT.tar.gz",
                   help="write one archive for a bug report: the trace files, the TORCH_LOGS text, "
                   "the markdown report and a README (OUT must be outside the folder read)")
    p.add_argument("--redact", action="store_true",
                   help="with --bundle: replace the user's paths, file names, names and source text "
                   "by placeholders (torch's own code, ops, shapes and messages stay)")
    p.add_argument("--only-problems", action="store_true",
                   help="with --bundle: only the compile ids with a problem (and what they recompiled against)")
    p.add_argument("--source-root", action="append", default=[], metavar="OLD=NEW",
                   help="read the user's source files the logs name under OLD from NEW instead "
                   "(traces copied from another machine); repeatable")
    p.add_argument("--no-verify", action="store_true",
                   help="headless: do not check every payload's md5 (faster on huge traces)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="headless: index the trace files on the Dask cluster whose scheduler is at "
                   "ADDRESS (tcp://host:8786); its workers read the same paths (a shared "
                   f"filesystem). Needs {DASK_INSTALL}")
    p.add_argument("--version", action="version", version=f"tlview {__version__}")
    return p


def dask_misuse(args, fail_on: list[str]) -> str | None:
    """Why --dask does not go with the rest of the command line, if it does not: it indexes the
    files of one run that are there for a headless output (the explorer reads in this machine)."""
    if args.dask is None:
        return None
    if args.compare or args.follow or args.run or args.demo or args.bundle is not None or args.path == "-":
        return ("--dask indexes one folder or file for --json, --report or --perfetto: "
                "tlview --json --dask ADDRESS PATH")
    if not (args.report or args.json or fail_on or args.perfetto is not None):
        return "--dask is for the headless outputs (the explorer reads here): add --json or --report"
    return None
