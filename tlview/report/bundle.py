"""`tlview --bundle OUT.tar.gz PATH [--redact] [--only-problems]`: one archive to attach to a bug
report: the trace files (every record, or with --only-problems those of the compiles with a
problem and the records of no compile id), the TORCH_LOGS text, the markdown report of what is in
it, and a README that says what it holds and how to open it.

With --redact, what names the user's code becomes placeholders (redact.py) in every envelope and
payload and in the text; each envelope is written again as torch writes it (`json.dumps`), and
each payload's md5 is computed again, so tlview and tlparse read the bundle as a trace.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import IO, BinaryIO

import orjson

from tlview.domain.compile_node import CompileNode
from tlview.domain.reasons import is_generated_path, is_library_path
from tlview.domain.verdict import Kind
from tlview.index.index import Index
from tlview.report.markdown import markdown_report
from tlview.report.redact import Redactor, message_words, torch_names, torch_words
from tlview.report.summary import build_summary, compile_of
from tlview.source.damaged_lines import ENVELOPE_LINE_MAX
from tlview.source.discover import RANK_IN_NAME
from tlview.source.payload import PayloadDecoder
from tlview.source.text_log import LINE_RE
from tlview.source.trace_file import TraceFile
from tlview.source.user_source import SourceFiles

ROOT = "tlview-bundle"
BLOCK = 8 << 20  # read, learnt from and redacted this much at a time: memory follows it, not a file's size
_RESUME = "torch_dynamo_resume_in_"
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+)", line \d+, in (?P<fn>[\w<>.]+)')
_GRAPH_COMMENT = re.compile(r"File: (?P<path>\S+?\.py):\d+ in (?P<fn>[\w<>]+), code: (?P<code>.*)")
_GUARD_COMMENT = re.compile(r"#\s+(?P<code>\S.*?)\s+#\s+(?P<path>\S+\.py):\d+ in (?P<fn>[\w<>]+)")
_STACK_FRAME = re.compile(r'\{"line": \d+, "name": "(?P<fn>[^"]+)", "filename": (?P<file>\d+), '
                          r'"loc": "(?P<loc>(?:[^"\\]|\\.)*)"')
# +dynamo's bytecode trace: the line it starts (its code on the next line), the names it loads
_STARTS_LINE = re.compile(r"TRACE starts_line (?P<path>\S+?\.py):\d+ in (?P<fn>[\w<>]+)")
_BYTECODE_NAME = re.compile(r"TRACE (?:LOAD|STORE|DELETE)_(?:FAST|GLOBAL|DEREF|NAME|CLOSURE)\w* (?P<names>[^\[]*)")
_TAGS = re.compile(r"^\s*(?:\[[^\]]*\]\s)*")  # `[0/0] [__trace_source] ` (a trace's payload has them)
_MAIN_CLASS = re.compile(r"__main__\.(\w+)")
_PATH = re.compile(r"(?<![\w./~-])/[^\s\"'<>:,()]+\.py\b")


@dataclass
class Bundled:
    """What went into a bundle (the README and the command line say it)."""

    trace_files: int = 0
    records: int = 0
    records_left_out: int = 0  # --only-problems: records of compiles with no problem
    damaged_left_out: int = 0  # --redact: records whose envelope is not JSON (they cannot be rewritten)
    text_files: int = 0
    replaced: dict = field(default_factory=dict)


def write_bundle(index: Index, out: BinaryIO, redact: bool = False, only_problems: bool = False,
                 sources: SourceFiles | None = None) -> Bundled:
    bundled = Bundled()
    redactor = learn(index, sources or SourceFiles()) if redact else None
    keep = _problem_nodes(index) if only_problems else None
    with tempfile.TemporaryDirectory(prefix="tlview-bundle-") as work:
        root = os.path.join(work, ROOT)
        names: set[str] = set()
        for number, source in enumerate(index.sources, 1):
            name = os.path.basename(source.path)
            name = _unique(_member_name(name, number, isinstance(source, TraceFile)) if redact else name, names)
            if isinstance(source, TraceFile):
                folder = os.path.join(root, "trace")
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, name), "wb") as f:
                    _write_trace(index, source, f, redactor, keep, bundled)
                bundled.trace_files += 1
            else:
                folder = os.path.join(root, "torch_logs")
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, name), "wb") as f:
                    _write_text(source, f, redactor)
                bundled.text_files += 1
        bundled.replaced = redactor.replaced() if redactor is not None else {}
        _write_report(root, redactor)
        with open(os.path.join(root, "README.md"), "w", encoding="utf-8") as f:
            f.write(readme(bundled, redact, only_problems))
        with tarfile.open(fileobj=out, mode="w:gz") as tar:
            tar.add(root, arcname=ROOT, filter=_plain)
    return bundled


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner or time of this machine in the archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


_TORCH_TRACE_NAME = re.compile(r"dedicated_log_torch_trace_(?:rank_\d+_)?[a-z0-9_]{1,16}\.log")


def _member_name(name: str, number: int, trace: bool) -> str:
    """A file's name in a redacted bundle: torch's own name for a trace file (its random part is
    tempfile's), else its number and rank (the user named it: `acme_stderr.txt`)."""
    if trace and _TORCH_TRACE_NAME.fullmatch(name):
        return name
    rank = RANK_IN_NAME.search(name)
    return f"{'trace' if trace else 'torch_logs'}_{number}{f'_rank_{rank.group(1)}' if rank else ''}" \
        f"{'.log' if trace else '.txt'}"


def _unique(name: str, taken: set[str]) -> str:
    stem, dot, ext = name.partition(".")
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{stem}_{n}{dot}{ext}"
    taken.add(candidate)
    return candidate


# ---- what to keep (--only-problems) -----------------------------------------------------------------

def _problem_nodes(index: Index) -> set:
    """The compile ids of the compiles with a problem, and of those their recompiles were measured
    against (the Diff compares the two)."""
    keep: set[CompileNode] = set()
    for node in index.iter_nodes():
        compile_ = compile_of(node)
        verdict = compile_.verdict
        if verdict.problems:
            keep.update(compile_.attempts)
            keep.update(p.against for p in verdict.problems if p.kind is Kind.RECOMPILE and p.against is not None)
    return keep


# ---- learning what is the user's (--redact) -----------------------------------------------------------

def learn(index: Index, sources: SourceFiles) -> Redactor:
    """A Redactor that knows the user's names in these logs (and in the user's files, where here)."""
    keep: set[str] = set()
    for node in index.iter_nodes():
        for problem in compile_of(node).verdict.problems:
            evidence = problem.evidence
            for text in (getattr(evidence, "reason", None), getattr(evidence, "detail", None),
                         getattr(evidence, "explanation", None), *getattr(evidence, "hints", []),
                         (getattr(evidence, "fail_reason", None) or "").split("\n", 1)[0],
                         evidence if isinstance(evidence, str) else None):
                if text:
                    keep |= message_words(text)
    seen_lines: set[tuple[str, str, str]] = set()  # (path, function, code) of the user's quoted lines
    user_files: set[str] = set()
    classes: set[str] = set()  # the user's classes, as Python names them (`__main__.ZephyrGate`)
    homes: set[str] = set()  # user names of home folders (`/home/carol.danvers/...`)
    hosts: set[str] = set()  # hosts of addresses (`tcp://gpu-node-17:29500`, `gpu-node-17:29500`)
    keys: set[str] = set()  # keys of the user's dicts, as guards and sources subscript them
    for source in index.sources:
        strings = getattr(source, "strings", {})
        for path in strings.values():
            if isinstance(path, str) and _is_user_file(path):
                user_files.add(path)
        for text in _texts_of(source):
            keep |= torch_names(text) | _schema_keys(text)
            # (on the lines that name a .py file: over every line, the pattern costs 3x)
            user_files.update(p for line in text.split("\n") if ".py" in line
                              for p in _PATH.findall(line) if _is_user_file(p))
            seen_lines.update(_quoted_user_lines(text, strings))
            keys.update(_SUBSCRIPT_KEY.findall(text))
            classes.update(_MAIN_CLASS.findall(text))
            homes.update(_HOME.findall(text))
            if ":" in text:
                hosts.update(_PORT_HOST.findall(text))
            if "://" in text or "host" in text:
                hosts.update(_ADDRESS_HOST.findall(text))
    redactor = Redactor(keep)
    for name in sorted(homes):
        redactor.segment(name, "user")
    for host in sorted(hosts | _this_machine()):
        redactor.segment(host, "host")
    for path in sorted(user_files):
        redactor.path(path)
        text = sources.text(path)
        if text is not None:
            redactor.source(text)
    codes: set[str] = set()  # (a line quoted by a thousand frames is learned once)
    for path, function, code in sorted(seen_lines):
        if _is_user_file(path):
            if not function.startswith(_RESUME):  # (torch's name; the user's inside it is replaced)
                redactor.name(function, "fn")
            if code and code not in codes:
                codes.add(code)
                redactor.code_line(code)
    for name in sorted(classes):
        redactor.name(name, "class")
    for key in sorted(keys):  # a dict's key in a guard or source (`L['batch']['patient_ssn']`)
        if key not in redactor.names and not key.startswith("__"):
            redactor.literal(key)
    return redactor


_HOME = re.compile(r"(?:/(?:home|Users)/|\b[A-Za-z]:\\{1,2}Users\\{1,2})([\w.@+-]+)(?:/|\\)")
# a host by its port: `gpu-node-17:29500` (a name with a hyphen or a digit: `x:1` is no host)
_PORT_HOST = re.compile(r"(?<![\w.:/-])([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+):\d{2,5}\b")
_SUBSCRIPT_KEY = re.compile(r"\[['\"]([^'\"\\\[\]]{1,200})['\"]\]")
_ADDRESS_HOST = re.compile(r"(?:://|host[=:]\s*|hostname[=:]\s*)([A-Za-z0-9][\w.-]*[A-Za-z0-9])(?=[:/\s'\"]|$)")


def _this_machine() -> set[str]:
    """This machine's host name and its first label, and who runs tlview: a bundle made where
    the job ran names them (torch's store and NCCL messages, home folders)."""
    import getpass
    import socket

    found = set()
    try:
        host = socket.gethostname()
        found |= {host, host.split(".")[0]}
    except OSError:
        pass
    try:
        found.add(getpass.getuser())
    except (KeyError, OSError):  # (no name for this uid, in a container)
        pass
    words = torch_words()
    # A name that is a word of torch's own (`localhost`, `root`, `gpu`) would replace that word
    # in torch's messages; a plain word of another spelling is dropped by the words layer.
    return {n for n in found if n and n.lower() not in words}


_KEY = re.compile(r'"([\w.]+)": ')
_ENVELOPE_LINE = re.compile(r"[VIWEDC]\d{4} [\d:.]+ +\d+ [^\]\n]*\] \{")
_USER_KEYED = re.compile(r'"(?:graph_node_shapes|sizes)": \{[^{}]*\}')


def _schema_keys(text: str) -> set[str]:
    """The field names of the envelopes (a user's variable of the same name keeps its name: the
    field must stay), but for the dicts keyed by FX node names. Only an envelope's: a dict the
    user's code prints or quotes (`{"patient_ssn": x}`) is the user's."""
    envelopes = "\n".join(line.partition("] {")[2] for line in text.split("\n")
                          if _ENVELOPE_LINE.match(line))
    keys = set(_KEY.findall(_USER_KEYED.sub("", envelopes)))
    # and their parts: a user's `backend` is no reason to rewrite `backend_compile_time_s`
    return keys | {part for key in keys for part in re.split(r"[_.]", key) if part}


def _is_user_file(path: str) -> bool:
    """A file of the user's: not an installed package's, the standard library's, torch's, or code
    torch generated (Inductor's cache)."""
    return (path.endswith(".py") and path.startswith("/") and not is_library_path(path)
            and "/torch/" not in path and not is_generated_path(path))


def _texts_of(source):
    """A log's text, a block of whole lines at a time (payload lines without their TAB, text
    log lines without torch's prefix)."""
    size = os.path.getsize(source.path)
    pos, step, rest, skipping = 0, BLOCK, b"", False
    while pos < size:
        data = source.read_range(pos, min(size, pos + step))
        pos += step
        if skipping:  # the rest of a line longer than tlview reads
            newline = data.find(b"\n")
            if newline < 0:
                continue
            data, skipping = data[newline + 1:], False
        data = rest + data
        cut = data.rfind(b"\n") + 1 if pos < size else len(data)
        rest = data[cut:]
        if len(rest) > ENVELOPE_LINE_MAX:
            # A line the index skipped too (a 108 MB stack of 1.5 million frames): nothing of it
            # is in the bundle, and learning from it took minutes and a GB.
            rest, skipping = b"", True
        text = data[:cut].decode("utf-8", "replace")
        if isinstance(source, TraceFile):
            yield text.replace("\n\t", "\n")
        else:
            yield "\n".join(_message(line) for line in text.split("\n"))


def _message(line: str) -> str:
    """A text log line without torch's prefix (`V1125 20:07:34.67 25133 torch/x.py:12] [0/0] `)."""
    m = LINE_RE.match(line.encode("utf-8", "replace"))
    return line[len(m.group().decode("utf-8", "replace")):] if m else line


def _quoted_user_lines(text: str, strings: dict) -> list[tuple[str, str, str]]:
    """(path, function, code) of every line of code the logs quote: a traceback's frames, a
    graph's `File: ..., code: ...` comments, a guard's comment, a stack frame's `loc`."""
    found = []
    lines = text.split("\n")
    frame: tuple[str, str] | None = None  # the user's frame +dynamo's bytecode trace is in
    for i, line in enumerate(lines):
        if "TRACE " in line:
            if (m := _STARTS_LINE.search(line)) is not None:
                frame = (m.group("path"), m.group("fn")) if _is_user_file(m.group("path")) else None
                if frame is not None and i + 1 < len(lines) and "TRACE " not in lines[i + 1]:
                    found.append((*frame, _TAGS.sub("", lines[i + 1]).strip()))
            elif frame is not None and (m := _BYTECODE_NAME.search(line)) is not None:
                # (a variable's name, not an attribute's: a tensor's methods are torch's)
                found += [(*frame, name) for name in re.findall(r"[A-Za-z_]\w*", m.group("names"))]
            continue
        if (m := _FILE_LINE.search(line)) is not None:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not _FILE_LINE.search(lines[i + 1]) else ""
            found.append((m.group("path"), m.group("fn"), code))
        for m in _GRAPH_COMMENT.finditer(line):
            found.append((m.group("path"), m.group("fn"), m.group("code")))
        for m in _GUARD_COMMENT.finditer(line):
            found.append((m.group("path"), m.group("fn"), m.group("code")))
        if '"loc": "' in line:
            for m in _STACK_FRAME.finditer(line):
                path = strings.get(int(m.group("file")))
                if isinstance(path, str):
                    try:
                        code = json.loads(f'"{m.group("loc")}"')
                    except ValueError:
                        code = ""
                    found.append((path, m.group("fn"), code))
    return found


# ---- writing ----------------------------------------------------------------------------------------

def _write_trace(index: Index, source: TraceFile, out: BinaryIO, redactor: Redactor | None,
                 keep: set | None, bundled: Bundled) -> None:
    for rec in range(len(source.offsets)):
        if keep is not None:
            node = index.node_of_record(source, rec)
            if node is not None and node not in keep:
                bundled.records_left_out += 1
                continue
        if redactor is None:
            start, end = source.record_span(rec)
            data = source.read_range(start, end)
            out.write(data if data.endswith(b"\n") else data + b"\n")
        elif not _redacted_record(source, rec, redactor, out):
            bundled.damaged_left_out += 1
            continue
        bundled.records += 1


def _redacted_record(source: TraceFile, rec: int, redactor: Redactor, out: BinaryIO) -> bool:
    """Record `rec` written again with what is the user's replaced; False (nothing written) if
    its envelope is not JSON or nests too deep to rewrite. The payload is redacted a line at a
    time into a spool (its md5 goes in the envelope, before it): memory follows the longest
    line, not the payload."""
    line, payload_start, end = source._envelope(rec)
    head, sep, body = line.partition(b"] {")
    try:
        meta = orjson.loads(b"{" + body)
    except orjson.JSONDecodeError:
        return False
    if not sep or not isinstance(meta, dict):
        return False
    md5 = meta.get("has_payload")
    if isinstance(md5, str):
        meta["has_payload"] = ""  # (computed again, of the redacted payload)
    try:
        meta = _redacted_value(meta, redactor)
    except _TooDeep:
        return False
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as payload:
        if isinstance(md5, str):
            event = next((v for v in meta.values() if isinstance(v, dict)), {})
            as_json = event.get("encoding") == "json" and end - payload_start <= _JSON_PARSED
            meta["has_payload"] = _redacted_payload(source, payload_start, end, redactor, as_json, payload)
        try:
            envelope = json.dumps(meta)
        except (RecursionError, ValueError):
            return False
        # (the prefix is torch's: the level and time, the pid, the torch file that wrote the
        # record; it passes the redactor too, as every byte does)
        head = redactor.text(head.decode("utf-8", "replace")).encode("utf-8")
        out.write(head + b"] " + envelope.encode("utf-8") + b"\n")
        payload.seek(0)
        shutil.copyfileobj(payload, out)
    return True


_SPOOL_IN_MEMORY = 8 << 20
_JSON_PARSED = 1 << 20  # a JSON payload up to this is parsed (its strings redacted); a larger one as lines
_DEPTH = 200  # an envelope nested deeper is not rewritten (torch's nest a few levels)


class _TooDeep(Exception):
    pass


class _PayloadLines(PayloadDecoder):
    """A payload's text as it is decoded (its lines without their TAB), held until taken."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        super().__init__(0)
        self.pending = bytearray()

    def _emit(self, text: bytes) -> None:
        self.pending += text


class _PayloadWriter:
    """Payload text written as torch writes it (a TAB before each line), its md5 taken as it goes."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.digest = hashlib.md5()
        self.lines = 0
        self.in_line = False  # a line was begun and not ended

    def write(self, text: str, ends_line: bool = True) -> None:
        data = text.encode("utf-8")
        if not self.in_line and self.lines:
            self.digest.update(b"\n")  # (between two lines)
        self.digest.update(data)
        self.out.write((b"" if self.in_line else b"\t") + data.replace(b"\n", b"\n\t")
                       + (b"\n" if ends_line else b""))
        self.lines += data.count(b"\n") + (0 if self.in_line else 1)
        self.in_line = not ends_line


def _redacted_payload(source: TraceFile, start: int, end: int, redactor: Redactor, as_json: bool,
                      out: IO[bytes]) -> str:
    """Writes the payload in [start, end) redacted, as payload lines; returns its new md5."""
    writer = _PayloadWriter(out)
    lines = _PayloadLines()
    pos = start
    while pos < end:
        data = source.read_range(pos, min(end, pos + BLOCK))
        if not data:
            break
        pos += len(data)
        lines.feed(data)
        pending = lines.pending
        if as_json:
            continue
        if (cut := pending.rfind(b"\n") + 1):
            writer.write(redactor.text(bytes(pending[:cut - 1]).decode("utf-8", "replace")))
            del pending[:cut]
        elif len(pending) > BLOCK:
            # One line longer than that (a flood): its part up to a space, where no word goes on
            # (a UTF-8 character is not cut either: a space is one byte of its own).
            cut = pending.rfind(b" ") + 1 or len(pending)
            writer.write(redactor.text(bytes(pending[:cut]).decode("utf-8", "replace")), ends_line=False)
            del pending[:cut]
    lines.close()
    rest = bytes(lines.pending).decode("utf-8", "replace")
    if rest or writer.in_line or not writer.lines:
        writer.write(_redacted_json(rest, redactor) if as_json else redactor.text(rest))
    return writer.digest.hexdigest()


def _redacted_value(value, redactor: Redactor, keys: bool = False, depth: int = 0):
    """Every string in an envelope's value. Keys are torch's field names, but for the FX node
    names of `graph_node_shapes` (which carry the user's variable names)."""
    if depth > _DEPTH:
        raise _TooDeep
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, dict):
        return {(redactor.text(k) if keys else k): _redacted_value(v, redactor, k in _NAMED_BY_USER, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted_value(v, redactor, False, depth + 1) for v in value]
    return value


_NAMED_BY_USER = frozenset({"graph_node_shapes", "sizes"})  # FX node names -> shapes


def _redacted_json(text: str, redactor: Redactor) -> str:
    """A JSON payload (recompile reasons: a list of strings, or bare text for one)."""
    try:
        value = json.loads(text)
        return json.dumps(_redacted_value(value, redactor), indent=0 if text.startswith("[\n") else None)
    except (ValueError, RecursionError, _TooDeep):
        return redactor.text(text)


def _write_text(source, out: BinaryIO, redactor: Redactor | None) -> None:
    size = os.path.getsize(source.path)
    pos = 0
    while pos < size:
        data = source.read_range(pos, min(size, pos + BLOCK))
        if not data:
            break
        cut = data.rfind(b"\n") + 1 if pos + len(data) < size else len(data)
        cut = cut or len(data)
        block, pos = data[:cut], pos + cut
        if redactor is None:
            out.write(block)
            continue
        lines = []
        for raw in block.decode("utf-8", "replace").split("\n"):
            message = _message(raw)
            lines.append(redactor.text(raw[:len(raw) - len(message)]) + redactor.text(message))
        out.write("\n".join(lines).encode("utf-8"))


def _write_report(root: str, redactor: Redactor | None) -> None:
    """The markdown report of what the bundle holds, made from it: a redacted bundle's report
    names nothing the bundle does not (and passes the redactor again, but for the words layer:
    its words are tlview's)."""
    from tlview.index.indexing import open_index

    index = open_index(root, verify_md5=True, parallel_ok=False)
    try:
        report = markdown_report(build_summary(index))
    finally:
        index.close()
    report = report.replace(root + "/", "")  # its files as the bundle names them (`trace/x.log`)
    if redactor is not None:
        report = redactor.text(report, words=False)
    with open(os.path.join(root, "report.md"), "w", encoding="utf-8") as f:
        f.write(report)


def readme(bundled: Bundled, redact: bool, only_problems: bool) -> str:
    lines = [
        "# A torch.compile bundle, made by tlview", "",
        "What it holds:", "",
        f"- `trace/`: {bundled.trace_files} TORCH_TRACE file(s), {bundled.records:,} records"
        + (f" (only the compiles with a problem, and those their recompiles were measured against: "
           f"{bundled.records_left_out:,} records of other compiles left out)" if only_problems else ""),
        f"- `torch_logs/`: {bundled.text_files} TORCH_LOGS text file(s)",
        "- `report.md`: tlview's report of this bundle (what recompiled, broke or failed, why, and the fix)",
        "", "How to open it:", "",
        "```bash",
        "tar xzf bundle.tar.gz",
        "pip install tlview && tlview tlview-bundle          # the explorer (or --report)",
        "pip install tlparse && tlparse tlview-bundle/trace/FILE.log -o out   # tlparse's HTML, a file",
        "tlparse tlview-bundle/trace --all-ranks-html -o out                   # or every rank",
        "```", "",
    ]
    if redact:
        kinds = {"fn": "function names", "class": "class names", "attr": "attribute names",
                 "var": "variable and argument names", "file": "file names", "dir": "folder names",
                 "str": "string literals", "comment": "comments", "host": "host names",
                 "user": "user names", "secret": "values shaped like keys, tokens or passwords",
                 "email": "e-mail addresses", "ip": "IP addresses",
                 "word": "other words that no code of PyTorch's or Python's uses (dropped: not recognised)",
                 "hash": "hex or base32 strings (torch's hashes, or keys: dropped)"}
        replaced = [f"- {n} {kinds.get(k, k)} (`{k if k != 'class' else 'Class'}_1`, ...)"
                    for k, n in sorted(bundled.replaced.items()) if n]
        lines += [("Redacted: every file, and every file's name, passed one redactor; what names the user's code, "
                  "and what it did not recognise, was replaced, the same placeholder everywhere:"), "",
                  *(replaced or ["- nothing was found to replace"]),
                  ("- the folder of installed packages and the standard library, up to `lib/pythonX.Y` (`<env>`),"
                  " and the user name of Inductor's cache folder (`torchinductor_user`)"), "",
                  ("Kept: torch's own code and paths after `lib/pythonX.Y`, op names, shapes, dtypes, devices, "
                  "numbers, compile ids, times, and the words of PyTorch's messages: a word is kept only if "
                  "PyTorch's or Python's own code uses it. Each payload's md5 was computed again. The trace "
                  "and text files are named by their number and rank (or torch's own name for a trace file). "
                  "`report.md` is tlview's, made from the redacted files.")]
        if bundled.damaged_left_out:
            lines += ["", (f"{bundled.damaged_left_out} records were left out: their envelope is not JSON, "
                      "or nests too deep to rewrite.")]
    return "\n".join(lines) + "\n"
