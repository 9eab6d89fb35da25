"""Command line: pick the TUI or a headless output. Importing this module never imports Textual."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from tlview.cli_args import build_parser, dask_misuse
from tlview.index import gc_pauses
from tlview.textsafe import escape_undecodable, json_chunks, visible

if TYPE_CHECKING:
    from tlview.report.bundle import Bundled
    from tlview.report.perfetto import PerfettoWritten

EXIT_OK = 0
EXIT_ERROR = 1  # tlview's own error, or its output could not be written
EXIT_USAGE = 2  # a bad command line, or nothing to read
EXIT_SIGNAL = 128  # + the signal's number: 130 Ctrl+C (SIGINT), 129 SIGHUP, 143 SIGTERM

_leave_at_once = False  # an index was built: entry() ends the process without tearing it down


class EndedBySignal(BaseException):
    """SIGTERM or SIGHUP in a headless run, raised in the main thread: what it was writing (the
    `.partial` file of output_file.replaced_atomically) is removed on the way out, as for Ctrl+C,
    and main() returns 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_ending(signum: int, _frame) -> None:
    raise EndedBySignal(signum)


def _headless_signals(run):
    """`run` (a headless command) with SIGTERM and SIGHUP raising EndedBySignal: their default
    ended the process where it stood, and left the `.partial` file of a --bundle or --perfetto
    in OUT's folder. A signal ignored (nohup) stays ignored; the explorer's own handling
    (ui/early_signals.py) is not this."""

    def with_signals(*args, **kwargs) -> int:
        before = {}
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                if signal.getsignal(sig) is signal.SIG_DFL:
                    before[sig] = signal.signal(sig, _raise_ending)
            except (ValueError, OSError):
                pass  # not the main thread (a caller's): the defaults stay
        try:
            return run(*args, **kwargs)
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)

    return with_signals


def entry() -> None:
    """The `tlview` command and `python -m tlview`. After the explorer (the terminal given back),
    or a headless output, the process ends at once: Python's teardown freed a 20,000-rank index
    object by object (0.8-1 s after `q`; 17 ms after `--json` of a 100 MB trace, 6% of its
    time), and joined a pane's loader still reading every rank (2.3 s more)."""
    code = main()
    if _leave_at_once:
        from tlview.index.pool import stop_pools

        stop_pools()  # no exit handler will end them: an indexing pool still reading
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(code)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    """Exit codes:

    0    ok; also when the reader of the output left early (`tlview --report x | head -1`)
    1    what --fail-on names was found (a line for each), or an error of tlview's own, or the
         output could not be written (a full disk, a closed
         stdout): one line on stderr says which
    2    a bad command line, or nothing to read (the message says why)
    128+N  ended by signal N: 130 SIGINT, 129 SIGHUP, 143 SIGTERM (the explorer gives the
         terminal back first); Ctrl+C and q in the explorer quit with 0
    """
    gc_pauses.start()  # no cyclic GC as tlview starts, nor in a headless run (gc_pauses.start)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return EXIT_SIGNAL + signal.SIGINT
    except EndedBySignal as ended:
        return EXIT_SIGNAL + ended.signum
    except Exception as exc:  # (users get one line; TLVIEW_DEBUG=1 shows the traceback)
        if os.environ.get("TLVIEW_DEBUG"):
            raise
        _say(f"tlview: internal error: {type(exc).__name__}: {exc} (TLVIEW_DEBUG=1 shows where; "
             "please report it)")
        return EXIT_ERROR
    finally:
        gc_pauses.started()  # (a caller in the same process, a test, gets its GC back)


def _say(line: str) -> None:
    """One line on stderr, if there is a stderr (`2>&-`: print would write to stdout instead).
    What came from the input in it (a name, a reason) is made visible, never run by the terminal."""
    if sys.stderr is not None:
        try:
            print(visible(line), file=sys.stderr)
        except (OSError, ValueError):
            pass


def split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """`tlview [options] --run [--] COMMAND ...`: the command is everything after --run (argparse
    would take a `--` there as the end of its options and COMMAND's words as its own)."""
    if "--run" not in argv:
        return argv, None
    at = argv.index("--run")
    command = argv[at + 1:]
    return argv[:at + 1], command[1:] if command[:1] == ["--"] else command


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argv, command = split_command(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    from tlview.views.filters import Filter, FilterError

    try:
        flt = Filter.parse(args.filter, rank=args.rank)
    except FilterError as exc:
        return _fail(str(exc))
    if args.markdown and not args.report:
        return _fail("--markdown goes with --report: tlview --report --markdown PATH")
    fail_on = [w.strip() for w in (args.fail_on or "").split(",") if w.strip()]
    if args.fail_on is not None and not fail_on:  # (`--fail-on ''` opened the explorer, and waited)
        return _fail(f"--fail-on names nothing; use {', '.join(FAIL_ON)}")
    if unknown := [w for w in fail_on if w not in FAIL_ON]:
        return _fail(f"--fail-on: unknown {', '.join(map(repr, unknown))}; use {', '.join(FAIL_ON)}")
    if "new" in fail_on and not args.compare:
        return _fail("--fail-on new needs --compare BEFORE AFTER")
    if problem := dask_misuse(args, fail_on):
        return _fail(problem)
    if (args.redact or args.only_problems) and args.bundle is None:
        return _fail("--redact and --only-problems go with --bundle: tlview --bundle OUT.tar.gz --redact PATH")
    if args.bundle is not None:
        if args.path is None or args.compare or args.follow or args.run or args.demo or args.path == "-":
            return _fail("--bundle packs logs that are there: tlview --bundle OUT.tar.gz [--redact] PATH")
        return _bundle(args)
    if args.perfetto is not None and (args.compare or args.follow or args.run or args.demo):
        return _fail("--perfetto writes the Chrome trace of logs that are there: tlview --perfetto FILE PATH")
    if args.compare:
        if args.path is not None or args.follow or args.run or args.demo:
            return _fail("--compare takes the two runs and nothing else: tlview --compare BEFORE AFTER")
        if args.report or args.json or fail_on:
            return _headless_compare(args, flt, fail_on)
        return _tui_compare(args, flt)
    if args.run or args.demo:
        if args.run and not command:
            return _fail("--run needs a command: tlview --run -- python train.py")
        if args.report or args.json:
            return _fail(f"{'--run' if args.run else '--demo'} opens the explorer; "
                         "it does not go with --report or --json")
        return _tui_live(flt, args, run=command) if args.run else _tui_live(flt, args, demo=True)
    if args.path is None:
        parser.print_usage(sys.stderr)
        return _fail("give a TORCH_TRACE folder or file, or a TORCH_LOGS text file")
    if args.follow:
        if args.report or args.json:
            return _fail("--follow is for the explorer; --report and --json read what is there now")
        return _tui_live(flt, args, path=args.path)
    if args.path == "-":  # the explorer follows the pipe until it ends; the others read it whole
        headless = args.report or args.json or fail_on or args.perfetto is not None
        return _headless_stdin(args, flt, fail_on) if headless else _tui_live(flt, args, path="-")
    if args.report or args.json or fail_on or args.perfetto is not None:
        return _headless(args, flt, fail_on)
    return _tui(args, flt)


@_headless_signals
def _headless_stdin(args, flt, fail_on) -> int:
    """`cmd | tlview --report -`: what the pipe holds once it ends, in a private copy."""
    if problem := _stdin_closed():
        return _fail(problem)
    import tempfile

    from tlview.source.stdin_log import copy_whole

    with tempfile.TemporaryDirectory(prefix="tlview-stdin-") as folder:
        args.path = os.path.join(folder, "stdin")
        problem = copy_whole(args.path)
        return _fail(problem) if problem else _headless(args, flt, fail_on)


def _stdin_closed() -> str | None:
    """What to say where standard input is closed (`tlview PATH <&-`): the explorer reads its keys
    there, and `-` its logs; an internal error (a descriptor of None) said neither."""
    try:
        if sys.stdin is not None and sys.stdin.fileno() >= 0:
            os.fstat(sys.stdin.fileno())
            return None
    except (OSError, ValueError, AttributeError):
        pass
    return ("standard input is closed: the explorer reads its keys there (and `-` its logs); "
            "give it a terminal, or use --report or --json")


def _fail(message: str) -> int:
    _say(f"tlview: {message}")
    return EXIT_USAGE


# --fail-on's words: the verdict's kinds, by their filter words (`new`: with --compare)
FAIL_ON = ("new", "recompiles", "graph_breaks", "errors", "restarts", "skipped_frames", "perf")


@_headless_signals
def _headless(args, flt, fail_on: Sequence[str] = ()) -> int:
    from tlview.index.dask_index import ClusterError
    from tlview.index.indexing import open_index
    from tlview.report.summary import build_summary
    from tlview.source.discover import NoLogsError
    from tlview.source.user_source import SourceFiles, parse_roots
    from tlview.views.filters import missing_rank

    what = "the JSON" if args.json else "the report"
    try:
        roots = parse_roots(args.source_root)
    except ValueError as exc:
        return _fail(str(exc))
    to_stdout = args.report or args.json or fail_on  # (--perfetto alone writes only its file)
    if sys.stdout is None and to_stdout:  # started with stdout closed (`>&-`): say so first
        return _cannot_write(what, "stdout is closed")
    if args.perfetto is not None and _reads(args.path, args.perfetto):  # said before a long read
        return _fail(NO_WRITE_HERE.format(args.perfetto))
    try:
        index = open_index(args.path, latest=args.latest, verify_md5=not args.no_verify, cluster=args.dask)
    except (NoLogsError, ClusterError) as exc:
        return _fail(str(exc))
    global _leave_at_once
    _leave_at_once = True  # (its children were waited for; a cluster's client is closed)
    try:
        if problem := missing_rank(flt.rank, index.ranks()):
            return _fail(problem)
        if args.perfetto is not None:
            code = _perfetto(args.perfetto, args.path, index, flt.rank)
            if code != EXIT_OK or not to_stdout:
                return code
        # (its compile entries made as they are written or folded, never all held: streamed)
        summary = build_summary(index, flt, SourceFiles(roots), streamed=True)

        write = _writer(args, summary, "markdown_report", "text_report.render_report")

        offending = []
        if fail_on:
            from tlview.diagnose.compare import problems

            offending = [visible(p.line("found")) for p in problems(index, _keep(flt)) if p.counted_as in fail_on]
        return _output(what, write, offending, to_stdout=not (args.json or args.report))
    finally:
        index.close()


NO_WRITE_HERE = ("--perfetto {}: tlview never writes over a log it reads or in a folder it reads "
                 "(links resolved); write the trace elsewhere")


def _perfetto(target: str, read_path: str, index, rank) -> int:
    """Write the Chrome trace to `target`, never into what is read; say what was written."""
    from tlview.report.output_file import write_file
    from tlview.report.perfetto import write_perfetto

    if _reads(read_path, target, index):
        return _fail(NO_WRITE_HERE.format(target))
    try:
        # (write_file returns what its `write` returned, typed `object`)
        written = cast("PerfettoWritten", write_file(
            target, lambda out: write_perfetto(index, out, rank if rank is not None else ...)))
    except OSError as exc:
        return _cannot_write(f"the Chrome trace {target}", exc.strerror or str(exc))
    _say(written.said(target, index.has_traces))
    return EXIT_OK


@_headless_signals
def _bundle(args) -> int:
    """Write the bundle, never into what is read; say what went into it."""
    from tlview.index.indexing import open_index
    from tlview.report.bundle import write_bundle
    from tlview.report.output_file import write_file
    from tlview.source.discover import NoLogsError
    from tlview.source.user_source import SourceFiles, parse_roots

    target = args.bundle
    try:
        roots = parse_roots(args.source_root)
    except ValueError as exc:
        return _fail(str(exc))
    if _reads(args.path, target):
        return _fail(NO_WRITE_HERE.format(target).replace("--perfetto", "--bundle").replace(
            "the trace", "the bundle"))
    try:
        index = open_index(args.path, latest=args.latest, verify_md5=not args.no_verify)
    except NoLogsError as exc:
        return _fail(str(exc))
    try:
        if _reads(args.path, target, index):
            return _fail(NO_WRITE_HERE.format(target).replace("--perfetto", "--bundle").replace(
                "the trace", "the bundle"))
        try:
            # (write_file returns what its `write` returned, typed `object`)
            done = cast("Bundled", write_file(target, lambda out: write_bundle(
                index, out, args.redact, args.only_problems, SourceFiles(roots))))
        except OSError as exc:
            return _cannot_write(f"the bundle {target}", exc.strerror or str(exc))
    finally:
        index.close()
    redacted = (", redacted: " + ", ".join(f"{n} {k}" for k, n in sorted(done.replaced.items()))
                if args.redact else "")
    _say(f"tlview: wrote {target}: {done.trace_files} trace file(s), {done.records:,} records, "
         f"{done.text_files} text file(s), report.md, README.md{redacted}")
    return EXIT_OK


def _reads(read_path: str, target: str, index=None) -> bool:
    """Whether writing `target` would write into what tlview reads (a log, a folder read)."""
    from tlview.report.output_file import writes_into_input

    return writes_into_input(target, read_path, [s.path for s in index.sources] if index is not None else ())


def _keep(flt):
    """--rank and --filter as a test of a compile id (None: every one)."""
    return flt.matches if flt.active else None


@_headless_signals
def _headless_compare(args, flt, fail_on: list[str]) -> int:
    from tlview.diagnose.compare import compare
    from tlview.index.indexing import open_index
    from tlview.source.discover import NoLogsError
    from tlview.views.filters import missing_rank

    what = "the JSON" if args.json else "the report"
    if sys.stdout is None:
        return _cannot_write(what, "stdout is closed")
    indexes = []
    try:
        for path in args.compare:
            try:
                indexes.append(open_index(path, latest=args.latest, verify_md5=not args.no_verify))
            except NoLogsError as exc:
                return _fail(str(exc))
            if problem := missing_rank(flt.rank, indexes[-1].ranks()):
                return _fail(f"{path}: {problem}")
        (before, after), (before_name, after_name) = indexes, args.compare  # (--compare takes two)
        comparison = compare(before, after, before_name, after_name, keep=_keep(flt))
        doc = comparison.as_dict()

        write = _writer(args, doc, "markdown_compare", "compare_report.render_compare")

        offending = [visible(p.line("new")) for p in comparison.new] if "new" in fail_on else []
        offending += [visible(p.line("found")) for p in comparison.new + comparison.same if p.counted_as in fail_on]
        return _output(what, write, offending, to_stdout=not (args.json or args.report))
    finally:
        for index in indexes:
            index.close()


def _writer(args, doc: Mapping[str, object], markdown: str, report: str):
    """What --json, --report --markdown or --report writes of `doc` (renderers named by their
    place in tlview.report, imported only when used: --json never imports rich)."""
    from importlib import import_module

    def render(name: str):
        module, _, function = name.rpartition(".")
        return getattr(import_module(f"tlview.report.{module or 'markdown'}"), function)

    def write() -> None:
        if args.json:
            for chunk in json_chunks(doc):
                _write(chunk)
            _write(b"\n")
        elif args.markdown:
            _write(render(markdown)(doc).encode("utf-8", "replace"))
        elif args.report:
            escape_undecodable(sys.stdout)
            render(report)(doc, report_console())
            sys.stdout.flush()

    return write


def _output(what: str, write, offending: list[str], to_stdout: bool) -> int:
    """Write the output, then the --fail-on lines (on stdout when they are the only output, else
    on stderr: a JSON document stays one document); exit 1 when there are any."""
    try:
        write()
        if offending and to_stdout:
            _write(("\n".join(offending) + "\n").encode("utf-8", "replace"))
    except BrokenPipeError:
        # `tlview --report x | head -1`: the reader has what it wanted; not an error.
        _drop_stdout()
        return EXIT_ERROR if offending else EXIT_OK
    except OSError as exc:  # a full disk (`> /dev/full`), a closed or failing stdout
        _drop_stdout()
        return _cannot_write(what, exc.strerror or str(exc))
    if offending and not to_stdout:
        for line in offending:
            _say(line)
    return EXIT_ERROR if offending else EXIT_OK


def _cannot_write(what: str, why: str) -> int:
    _say(f"tlview: cannot write {what}: {why}")
    return EXIT_ERROR


def _drop_stdout() -> None:
    """After a failed write, what is left in stdout's buffer goes nowhere: the interpreter's own
    flush at exit would fail again, with a traceback, and turn the exit code into 120."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a file (tests capture stdout in memory): nothing is flushed at exit


def report_console():
    """A terminal gets lines fitted to its width; a pipe or a file gets whole lines, unwrapped
    (paths and reasons stay whole for grep and for pasting)."""
    from rich.console import Console

    class ReportConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit with 1; the reader leaving is handled (as success) by _headless.
            self.quiet = True
            raise BrokenPipeError

    if sys.stdout.isatty():
        return ReportConsole(highlight=False)
    return ReportConsole(highlight=False, soft_wrap=True, width=100_000, color_system=None)


def _write(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def _tui(args, flt) -> int:
    from tlview.source.discover import NoLogsError, find_logs, one_log_at
    from tlview.views.filters import missing_rank

    try:  # the rest is read by the explorer's worker, after its first screen
        found, _notes = find_logs(args.path, latest=args.latest, first_only=flt.rank is None)
    except NoLogsError as exc:
        return _fail(str(exc))
    named = {log.rank_from_name for log in found if log.kind == "trace"}
    if named and None not in named and (problem := missing_rank(flt.rank, sorted(named))):
        return _fail(problem)  # every trace file names its rank: a rank not among them is a typo
    from tlview.source.user_source import parse_roots

    try:
        roots = parse_roots(args.source_root)
    except ValueError as exc:
        return _fail(str(exc))
    if problem := _stdin_closed():
        return _fail(problem)
    from tlview.index.indexing import prepare_for
    from tlview.ui import early_signals

    early_signals.catch()  # (before the pool starts: a signal from now on is the app's to act on)
    prepare_for(found[0], alone=one_log_at(args.path, args.latest))
    from tlview.ui.launch import run_app

    code = run_app(args.path, flt, latest=args.latest, source_roots=roots)
    global _leave_at_once
    _leave_at_once = True
    return code


def _tui_compare(args, flt) -> int:
    from tlview.source.discover import NoLogsError, find_logs

    for path in args.compare:
        try:
            find_logs(path, latest=args.latest)
        except NoLogsError as exc:
            return _fail(str(exc))
    if problem := _stdin_closed():
        return _fail(problem)
    from tlview.ui.launch import run_compare

    before, after = args.compare  # (--compare takes two)
    return run_compare(before, after, latest=args.latest, flt=flt)


def _tui_live(flt, args, path: str | None = None, demo: bool = False, run: list[str] | None = None) -> int:
    from tlview.source.discover import NoLogsError, check_readable
    from tlview.source.follow import check_followable

    if path is not None:
        try:
            check_followable(path)
            if path != "-" and os.path.exists(path):
                check_readable(path)  # a pipe or a device would be waited on forever
        except NoLogsError as exc:
            return _fail(str(exc))
    if run and shutil.which(run[0]) is None:  # (said before the terminal is asked for)
        return _fail(f"cannot run {run[0]}: no such program")
    if problem := _stdin_closed():
        return _fail(problem)
    from tlview.ui.launch import run_live

    try:
        return run_live(flt, path=path, demo=demo, run=run, poll=args.poll, logs=args.logs)
    except NoLogsError as exc:
        return _fail(str(exc))


if __name__ == "__main__":
    raise SystemExit(main())
