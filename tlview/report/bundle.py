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
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import BinaryIO

import orjson

from tlview.model.index import Index
from tlview.model.reasons import is_library_path
from tlview.model.verdict import Kind
from tlview.report.markdown import markdown_report
from tlview.report.redact import Redactor, message_words, torch_names
from tlview.report.summary import build_summary
from tlview.source.payload import decode_file_region
from tlview.source.text_log import LINE_RE
from tlview.source.trace_file import TraceFile
from tlview.source.user_source import SourceFiles

ROOT = "tlview-bundle"
_RESUME = "torch_dynamo_resume_in_"
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+)", line \d+, in (?P<fn>[\w<>.]+)')
_GRAPH_COMMENT = re.compile(r"File: (?P<path>\S+?\.py):\d+ in (?P<fn>[\w<>]+), code: (?P<code>.*)")
_GUARD_COMMENT = re.compile(r"#\s+(?P<code>\S.*?)\s+#\s+(?P<path>\S+\.py):\d+ in (?P<fn>[\w<>]+)")
_STACK_FRAME = re.compile(r'\{"line": \d+, "name": "(?P<fn>[^"]+)", "filename": (?P<file>\d+), "loc": "(?P<loc>(?:[^"\\]|\\.)*)"')
_MAIN_CLASS = re.compile(r"__main__\.(\w+)")
_PATH = re.compile(r"(?<![\w./~-])/[^\s\"'<>:,()]+\.py\b")
_GENERATED = re.compile(r"/c[a-z0-9]{40,}\.py$|torchinductor_|/triton/|/fxgraph/")


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
        for source in index.sources:
            name = _unique(os.path.basename(source.path), names)
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
        _write_report(root)
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
    keep = set()
    for node in index.iter_nodes():
        verdict = node.compile.verdict
        if verdict.problems:
            keep.update(node.compile.attempts)
            keep.update(p.against for p in verdict.problems if p.kind is Kind.RECOMPILE and p.against is not None)
    return keep


# ---- learning what is the user's (--redact) -----------------------------------------------------------

def learn(index: Index, sources: SourceFiles) -> Redactor:
    """A Redactor that knows the user's names in these logs (and in the user's files, where here)."""
    keep: set[str] = set()
    for node in index.iter_nodes():
        for problem in node.compile.verdict.problems:
            evidence = problem.evidence
            for text in (getattr(evidence, "reason", None), getattr(evidence, "detail", None),
                         getattr(evidence, "explanation", None), *getattr(evidence, "hints", []),
                         (getattr(evidence, "fail_reason", None) or "").split("\n", 1)[0],
                         evidence if isinstance(evidence, str) else None):
                if text:
                    keep |= message_words(text)
    seen_lines: list[tuple[str, str, str]] = []  # (path, function, code) of the user's quoted lines
    user_files: set[str] = set()
    classes: set[str] = set()  # the user's classes, as Python names them (`__main__.ZephyrGate`)
    for source in index.sources:
        strings = getattr(source, "strings", {})
        for path in strings.values():
            if isinstance(path, str) and _is_user_file(path):
                user_files.add(path)
        for text in _texts_of(source):
            keep |= torch_names(text) | _schema_keys(text)
            user_files.update(p for p in _PATH.findall(text) if _is_user_file(p))
            seen_lines += _quoted_user_lines(text, strings)
            classes.update(_MAIN_CLASS.findall(text))
    redactor = Redactor(keep)
    for path in sorted(user_files):
        redactor.path(path)
        text = sources.text(path)
        if text is not None:
            redactor.source(text)
    for path, function, code in seen_lines:
        if _is_user_file(path):
            if not function.startswith(_RESUME):  # (torch's name; the user's inside it is replaced)
                redactor.name(function, "fn")
            if code:
                redactor.code_line(code)
    for name in sorted(classes):
        redactor.name(name, "class")
    return redactor


_KEY = re.compile(r'"(\w+)": ')
_USER_KEYED = re.compile(r'"(?:graph_node_shapes|sizes)": \{[^{}]*\}')


def _schema_keys(text: str) -> set[str]:
    """The field names of the envelopes (a user's variable of the same name keeps its name: the
    field must stay), but for the dicts keyed by FX node names."""
    return set(_KEY.findall(_USER_KEYED.sub("", text)))


def _is_user_file(path: str) -> bool:
    """A file of the user's: not an installed package's, the standard library's, torch's, or code
    torch generated (Inductor's cache)."""
    return (path.endswith(".py") and path.startswith("/") and not is_library_path(path)
            and "/torch/" not in path and _GENERATED.search(path) is None)


def _texts_of(source):
    """A log's text, a block of whole lines at a time (payload lines without their TAB, text
    log lines without torch's prefix)."""
    size = os.path.getsize(source.path)
    pos, step, rest = 0, 8 << 20, b""
    while pos < size:
        data = rest + source.read_range(pos, min(size, pos + step))
        pos += step
        cut = data.rfind(b"\n") + 1 if pos < size else len(data)
        rest = data[cut:]
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
    for i, line in enumerate(lines):
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
        else:
            written = _redacted_record(source, rec, redactor)
            if written is None:
                bundled.damaged_left_out += 1
                continue
            out.write(written)
        bundled.records += 1


def _redacted_record(source: TraceFile, rec: int, redactor: Redactor) -> bytes | None:
    line, payload_start, end = source._envelope(rec)
    head, sep, body = line.partition(b"] {")
    try:
        meta = orjson.loads(b"{" + body)
    except orjson.JSONDecodeError:
        return None
    if not sep or not isinstance(meta, dict):
        return None
    meta = _redacted_value(meta, redactor)
    payload = b""
    if isinstance(meta.get("has_payload"), str):
        text = decode_file_region(source.read_range, payload_start, end, keep=max(end - payload_start, 0)).kept_text()
        decoded = text.decode("utf-8", "replace")
        event = next((v for k, v in meta.items() if isinstance(v, dict)), {})
        redacted = (_redacted_json(decoded, redactor) if event.get("encoding") == "json"
                    else redactor.text(decoded))
        data = redacted.encode("utf-8")
        meta["has_payload"] = hashlib.md5(data).hexdigest()
        payload = b"".join(b"\t" + part + b"\n" for part in data.split(b"\n"))
    # (the prefix is torch's: the level and time, the pid, the torch file that wrote the record)
    return head + b"] " + json.dumps(meta).encode("utf-8") + b"\n" + payload


def _redacted_value(value, redactor: Redactor, keys: bool = False):
    """Every string in an envelope's value. Keys are torch's field names, but for the FX node
    names of `graph_node_shapes` (which carry the user's variable names)."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, dict):
        return {(redactor.text(k) if keys else k): _redacted_value(v, redactor, k in _NAMED_BY_USER)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted_value(v, redactor) for v in value]
    return value


_NAMED_BY_USER = frozenset({"graph_node_shapes", "sizes"})  # FX node names -> shapes


def _redacted_json(text: str, redactor: Redactor) -> str:
    """A JSON payload (recompile reasons: a list of strings, or bare text for one)."""
    try:
        value = json.loads(text)
    except ValueError:
        return redactor.text(text)
    return json.dumps(_redacted_value(value, redactor), indent=0 if text.startswith("[\n") else None)


def _write_text(source, out: BinaryIO, redactor: Redactor | None) -> None:
    size = os.path.getsize(source.path)
    pos = 0
    while pos < size:
        data = source.read_range(pos, min(size, pos + (8 << 20)))
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
            lines.append(raw[:len(raw) - len(message)] + redactor.text(message))
        out.write("\n".join(lines).encode("utf-8"))


def _write_report(root: str) -> None:
    """The markdown report of what the bundle holds (made from it: a redacted bundle's report
    names nothing the bundle does not)."""
    from tlview.model.indexing import open_index

    index = open_index(root, verify_md5=True, parallel_ok=False)
    try:
        report = markdown_report(build_summary(index))
    finally:
        index.close()
    report = report.replace(root + "/", "")  # its files as the bundle names them (`trace/x.log`)
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
                 "str": "string literals", "comment": "comments"}
        replaced = [f"- {n} {kinds.get(k, k)} (`{k if k != 'class' else 'Class'}_1`, ...)"
                    for k, n in sorted(bundled.replaced.items()) if n]
        lines += ["Redacted: what names the user's code was replaced, the same placeholder everywhere:", "",
                  *(replaced or ["- nothing was found to replace"]),
                  "- the folder of installed packages and the standard library, up to `lib/pythonX.Y` (`<env>`),"
                  " and the user name of Inductor's cache folder (`torchinductor_user`)", "",
                  "Kept: torch's own code and paths after `lib/pythonX.Y`, op names, shapes, dtypes, devices, "
                  "compile ids, times, and the words of PyTorch's messages. Each payload's md5 was computed "
                  "again."]
        if bundled.damaged_left_out:
            lines += ["", f"{bundled.damaged_left_out} damaged records (their envelope is not JSON) were left out."]
    return "\n".join(lines) + "\n"
