"""One redactor for every byte of a `tlview --bundle --redact` bundle: so a trace can be attached
to a bug report by someone who may not share their code, names, hosts or keys.

It works in layers, each over the whole text, in this order:
1. Values shaped like secrets: known key shapes (`sk-...`, `ghp_...`, `hf_...`, `AKIA...`, JWTs,
   private keys), the value after `api_key=`/`token:`/`password=`/`Bearer`, credentials in a URL,
   e-mail addresses, IPv4 addresses and host names (`db.acme-corp.internal`): `secret_1`,
   `email_1`, `ip_1`, `host_1`.
2. The user's names, learned from the logs and, where the user's files are here, from the files
   (bundle.learn): the folders and files of the user's code whatever their spelling (dotted,
   hyphenated), names defined in it (functions, classes, arguments, variables, attributes set on
   `self`), its string literals (quoted, and unquoted where a bytecode trace shows them) and
   comments, this machine's host and user names: `fn_1`, `Class_1`, `attr_1`, `var_1`, `file_1`,
   `dir_1`, `host_1`, `str_1`, `# comment_1`, the same everywhere. A path torch shortened from
   the left (`uokkacorp_lab/prog.py`) has its first folder's placeholder.
3. Every word that is left and is not a word of PyTorch's or Python's own code
   (torch_words.txt.gz, made by fixtures/tools/make_torch_words.py from their sources) becomes
   `word_1` (`hash_1` where it is hex or base32: torch's hashes, or a key): what the first two
   layers did not recognise is dropped, not kept. Numbers stay.

What is torch's stays: op names, shapes, dtypes, devices, and the words of PyTorch's messages (a
user's name that is also a word of theirs is not replaced by layer 2: that would change what they
say, and what tlview finds in them). Paths of installed packages keep their part from
`lib/pythonX.Y` on (`<env>/lib/python3.11/site-packages/torch/...`); the Inductor cache folder's
user name becomes `user`.

The replacement is by hand, with regular expressions (Python's tokenizer would stop at the first
line that is not Python: most of a log is not).
"""

from __future__ import annotations

import ast
import builtins
import gzip
import io
import keyword
import re
import tokenize
from collections import Counter
from functools import lru_cache
from pathlib import Path

import ahocorasick

PREFIXES = {"fn": "fn", "class": "Class", "attr": "attr", "var": "var", "file": "file", "dir": "dir",
            "host": "host", "user": "user", "secret": "secret", "email": "email", "ip": "ip", "word": "word",
            "hash": "hash"}
# Never the user's: Python's own words, and the names every torch program uses for torch.
KEEP = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {
    "self", "cls", "torch", "nn", "F", "functional", "np", "numpy", "math", "os", "sys", "logging",
    "warnings", "time", "random", "functools", "itertools", "collections", "typing", "dataclasses",
    "forward", "backward", "Tensor", "Parameter", "Module", "training", "weight", "bias",
    "setup_context", "reset_parameters", "extra_repr", "main", "py", "lib", "site", "packages",
    "aten", "prims", "inductor", "triton", "dynamo", "fx", "GraphModule", "tlview",
}
# Folder names that tell nothing of the user (`/tmp`, `/home`): kept, so paths stay readable.
GENERIC_FOLDERS = frozenset({"tmp", "home", "usr", "opt", "var", "srv", "mnt", "root", "data", "work",
                             "workspace", "src", "code", "job", "jobs", "users", "Users", "local"})
_LIBRARY_PREFIX = re.compile(r"(?<![\w/.~-])(?:~|/)[^\s\"'<>:,()\[\]]*?(?=/lib/python3\.\d+/)")
_INDUCTOR_USER = re.compile(r"torchinductor_[\w.-]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_F_STRING = re.compile(r"(?i)r?f|fr")
_F_STRING_FIELD = re.compile(r"(?<!\{)\{([^{}!:]+)")  # `{name}`, `{obj.attr!r:>8}`: its expression
_QUOTED = re.compile(r"`[^`]*`|<[^<>]*>|'[^']*'|\"[^\"]*\"")

# ---- layer 1: values shaped like secrets -------------------------------------------------------------
# (no quote or backslash inside any of them: a JSON or Python string around one stays whole)
_KEY_SHAPES = (
    r"(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_])*[A-Za-z0-9]{12,}",  # sk-live-..., sk-proj-..., sk_test_...
    r"gh[pousr]_[A-Za-z0-9]{20,}", r"github_pat_[A-Za-z0-9_]{20,}", r"glpat-[A-Za-z0-9_-]{20,}",
    r"hf_[A-Za-z0-9]{20,}", r"xox[abprs]-[A-Za-z0-9-]{10,}", r"AKIA[0-9A-Z]{16}", r"AIza[0-9A-Za-z_-]{35}",
    r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # a JWT
    r"-----BEGIN[A-Z ]*PRIVATE KEY-----",
)
_SECRET = re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(_KEY_SHAPES) + r")(?![A-Za-z0-9_-])")
# The value after a name that says it is one (`api_key=...`, `"token": "..."`, `Bearer ...`).
# The value after a name that says it is one (`api_key=...`, `DB_PASS=...`, `"token": "..."`,
# `Bearer ...`): the name alone or as the last part of a longer one.
_NAMED_SECRET = re.compile(r"(?i)(?:(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|apikey|access[_-]?key|"
                           r"secret(?:[_-]?key)?|private[_-]?key|auth[_-]?token|token|password|passwd|pass|pwd|"
                           r"credentials?)[\"']?\s*[=:]\s*[\"']?|\bBearer\s+)"
                           r"(?!(?:None|null|true|false|True|False)\b)(?P<value>[^\s'\"\\,;)}\]]{4,})")
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s/@:'\"\\]+:[^\s/@'\"\\]+(?=@)")
# Top-level domains a host name in a log ends with (not `.py`, `.pt`, `.so`, `.sh`: files).
_TLDS = ("com|org|edu|gov|io|ai|co|cloud|internal|corp|intranet|lan|localdomain|cluster|svc|"
         "us|uk|de|fr|jp|cn|ca|au|nl|eu|ch|se|kr|ru|in|br|sg|il|net|dev|app|local")
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}\b")
# A card's number, a US social security number (numbers stay, but for these shapes)
_NUMBER_SECRET = re.compile(r"(?<![\w.-])(?:\d{4}[ -]){3}\d{4}(?![\w.-])|(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w.-])")
# IPv6: with `::`, or eight groups
_IPV6 = re.compile(r"(?<![\w:.])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}"
                   r"|(?:[0-9A-Fa-f]{1,4}:){0,6}(?:[0-9A-Fa-f]{1,4})?"
                   r"::(?:[0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{0,4})(?![\w:])")
_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])")
# A host: labels joined by dots, ending in a top-level domain; of two labels only with one that
# no Python attribute ends with (`self.net`, `threading.local` are not hosts).
_HOST = re.compile(r"(?<![\w.@-])(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.){2,}(?:" + _TLDS + r")"
                   r"|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.(?:com|org|edu|gov|io|ai|internal|corp|intranet))"
                   r"(?![\w-]|\.[A-Za-z])")

# ---- layer 3: words no torch code uses -----------------------------------------------------------------
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_HASH = re.compile(r"[0-9a-f]{16,}|[0-9A-F]{16,}|[a-z2-7]{32,}|[A-Z2-7]{32,}")
# A word, or a string escape (`\n` is no part of the next word; nor `\\` of an escape after it).
_TOKEN = re.compile(r"(\\\\|\\u[0-9a-fA-F]{4}|\\[nrt]|[^\W_]+)")


@lru_cache(maxsize=1)
def torch_words() -> frozenset[str]:
    """The words of PyTorch's and Python's own code, lowercased (44,658: 160 KB gzipped)."""
    with gzip.open(Path(__file__).with_name("torch_words.txt.gz"), "rt", encoding="utf-8") as f:
        return frozenset(f.read().split())


_TORCH_NAME = re.compile(r"\b(?:aten|prims|torch|_C|_nn|nn|F|functional|ops|Tensor|inductor)\.(\w+)")


def torch_names(text: str) -> set[str]:
    """Names torch's own code uses in the logs (`aten.relu`, `torch.nn.functional.linear`): kept
    even where the user named something the same."""
    return set(_TORCH_NAME.findall(text))


def message_words(text: str) -> set[str]:
    """The words of a PyTorch message (quoted code and reprs left out: a user's function named
    in it is still the user's)."""
    return set(_WORD.findall(_QUOTED.sub(" ", text)))


class _Words(dict):
    """A word -> itself, or its placeholder when no torch or Python code uses it (decided once
    per distinct word: a log repeats its words)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor
        self.vocabulary = torch_words()

    def __missing__(self, word: str) -> str:
        if self._known(word):
            kept = word
        else:  # (a hash of torch's, or a key: either way not kept)
            kept = self.redactor.placeholder(word, "hash" if _HASH.fullmatch(word) else "word")
        self[word] = kept
        return kept

    def _known(self, word: str) -> bool:
        if word[0] == "\\" or word.isdigit() or word in self.redactor.keep:
            return True
        lower = word.lower()
        # `buf12`, `s0`, `float32`, `2d`, `1e`: a word of torch's with a number around it; an
        # address (`0x7f3a...`)
        return (lower in self.vocabulary or lower.strip("0123456789") in self.vocabulary
                or _ADDRESS.fullmatch(lower) is not None)


class Redactor:
    def __init__(self, keep: set[str] | frozenset = frozenset()) -> None:
        self.keep = KEEP | keep | set(PREFIXES.values()) | {"env", "comment", "str"}
        self.names: dict[str, str] = {}  # a user's name -> its placeholder
        self.literals: dict[str, str] = {}  # a string literal's text (quotes and all) or a comment -> placeholder
        self.shaped: dict[str, str] = {}  # a secret, e-mail, address, host, word -> placeholder
        self.counts: Counter = Counter()  # placeholders made, by kind
        self._names: ahocorasick.Automaton | None = None  # the learned names and literals
        self._short: re.Pattern | None = None
        self._suffixes: dict[str, str] = {}
        self._words = _Words(self)

    def placeholder(self, value: str, kind: str) -> str:
        found = self.shaped.get(value)
        if found is None:
            self.counts[kind] += 1
            found = self.shaped[value] = f"{PREFIXES[kind]}_{self.counts[kind]}"
        return found

    # ---- learning what is the user's -------------------------------------------------------------

    def name(self, name: str, kind: str) -> None:
        if (not name or name in self.names or name in self.keep or not name.isidentifier()
                or (name.startswith("__") and name.endswith("__"))):
            return
        self._add(name, kind)

    def _add(self, name: str, kind: str) -> None:
        self.counts[kind] += 1
        self.names[name] = f"{PREFIXES[kind]}_{self.counts[kind]}"
        self._names = None

    def segment(self, name: str, kind: str) -> None:
        """A folder's or file's name, whatever its spelling (`carol.danvers`, `acme-payroll-model`)."""
        if (len(name) < 2 or name in self.names or name in self.keep or name in GENERIC_FOLDERS
                or not re.fullmatch(r"[\w.@+~-]+", name) or not re.search(r"[^\W\d_]", name)):
            return
        self._add(name, kind)

    def path(self, path: str) -> None:
        """A user's file: its folder names and its file name."""
        *folders, file = path.replace("\\", "/").split("/")
        for folder in folders:
            self.segment(folder, "dir")
        self.segment(file.removesuffix(".py"), "file")

    def source(self, text: str) -> bool:
        """A user's whole file: every name it defines, its string literals and comments. False
        if it is not Python this version parses (its code lines are then learned one by one)."""
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.name(node.name, "fn")
            elif isinstance(node, ast.ClassDef):
                self.name(node.name, "class")
            elif isinstance(node, ast.arg):
                self.name(node.arg, "var")
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.name(node.id, "var")
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for name in node.names:
                    self.name(name, "var")
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                self.name(node.attr, "attr")
        for line in text.split("\n"):
            self._literals_of(line)
        return True

    def code_line(self, line: str) -> None:
        """A line of the user's code the logs quote: its names (not another object's attribute:
        most often a tensor's method), its string literals and its comment."""
        try:
            tokens = [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline)]
        except (tokenize.TokenError, IndentationError, SyntaxError):  # a line cut short: words outside quotes
            bare = re.split(r"[\"'#]", _QUOTED.sub(" ", line), maxsplit=1)[0]
            tokens = [(tokenize.OP if w == "." else tokenize.NAME, w) for w in re.findall(r"\.|[A-Za-z_]\w*", bare)]
        for i, (kind, text) in enumerate(tokens):
            if kind == tokenize.STRING and _F_STRING.match(text):  # (Python < 3.12: one token)
                for expression in _F_STRING_FIELD.findall(text):
                    self.code_line(expression)
            if kind != tokenize.NAME:
                continue
            after_dot = i > 0 and tokens[i - 1] == (tokenize.OP, ".")
            if not after_dot:
                self.name(text, "var")
            elif i > 1 and tokens[i - 2][1] in ("self", "cls"):
                self.name(text, "attr")
        self._literals_of(line)

    def literal(self, content: str) -> None:
        """A string the user's code holds (a dict's key), as Python and JSON quote it."""
        self._literal(repr(content), "str")

    def _literals_of(self, line: str) -> None:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return
        for token in tokens:
            if token.type == tokenize.STRING and len(token.string) > 2 and token.string[-1] in "'\"":
                self._literal(token.string, "str")
            elif token.type == tokenize.COMMENT and len(token.string) > 1:
                self._literal(token.string, "comment")

    def _literal(self, text: str, kind: str) -> None:
        content = text.strip("'\"")
        if text in self.literals or content in self.keep or (content.startswith("__") and content.endswith("__")):
            return
        self.counts[kind] += 1
        if kind == "comment":
            self.literals[text] = f"# comment_{self.counts[kind]}"
        else:  # as written, as Python shows it (a bytecode dump: 'text'), and bare where it is
            # more than one word (a bytecode trace: `LOAD_CONST zephyr gate: hidden`)
            self.literals[text] = f"{text[-1]}str_{self.counts[kind]}{text[-1]}"
            if text[:1] in "'\"" and len(text) > 2 and (shown := repr(content)) != text:
                self.literals.setdefault(shown, f"{shown[0]}str_{self.counts[kind]}{shown[0]}")
            if len(content) >= 6 and re.search(r"[^\w]", content) and not content.startswith(("\\", "{")):
                self.literals.setdefault(content, f"str_{self.counts[kind]}")
        self._names = None

    # ---- replacing ---------------------------------------------------------------------------------

    def text(self, text: str, words: bool = True) -> str:
        """`text` with what is the user's replaced; `words=False` keeps words torch never uses
        (tlview's own report: its words are tlview's, its values already redacted)."""
        if self._names is None:
            self._compile()
        text = self._cued_lines(text)
        if self._names is not None and len(self._names):
            text = self._learned(text)
        if self._short is not None:
            text = self._short.sub(self._replace, text)
        if words:
            parts = _TOKEN.split(text)
            parts[1::2] = map(self._words.__getitem__, parts[1::2])
            text = "".join(parts)
        return text

    def _cued_lines(self, text: str) -> str:
        """Layer 1, and the paths: each pattern only on the lines that hold a cue of it (`@`,
        `://`, `.com`, `token`, `.py`, ...), the cues found by one automaton at C speed. (Every
        pattern over every line: 1.3 s a MB.)"""
        spans: dict[int, list[int]] = {}  # a line's start -> [its end, the patterns it is cued for]
        for end, mask in _CUES.iter(text):
            start = text.rfind("\n", 0, end) + 1
            span = spans.get(start)
            if span is None:
                stop = text.find("\n", end)
                spans[start] = [len(text) if stop < 0 else stop, mask]
            else:
                span[1] |= mask
        if not spans:
            return text
        pieces, pos = [], 0
        for start in sorted(spans):
            stop, mask = spans[start]
            pieces += [text[pos:start], self._cued(text[start:stop], mask)]
            pos = stop
        pieces.append(text[pos:])
        return "".join(pieces)

    def _cued(self, line: str, mask: int) -> str:
        if mask & _LIBRARY:
            line = _LIBRARY_PREFIX.sub("<env>", line)
        if mask & _INDUCTOR:
            line = _INDUCTOR_USER.sub("torchinductor_user", line)
        if mask & _URL:
            line = _URL_CREDENTIALS.sub(lambda m: self.placeholder(m.group(), "secret"), line)
        if mask & _KEY:
            line = _SECRET.sub(lambda m: self.placeholder(m.group(), "secret"), line)
        if mask & _NAMED:
            line = _NAMED_SECRET.sub(lambda m: m.group()[:m.start("value") - m.start()]
                                     + self.placeholder(m.group("value"), "secret"), line)
        if mask & _AT:
            line = _EMAIL.sub(lambda m: self.placeholder(m.group(), "email"), line)
        if mask & _DIGITS:
            line = _IPV4.sub(lambda m: self.placeholder(m.group(), "ip"), line)
        if mask & _NUMBERS:
            line = _NUMBER_SECRET.sub(lambda m: self.placeholder(m.group(), "secret"), line)
        if mask & _COLONS:
            line = _IPV6.sub(self._ipv6, line)
        if mask & _DOMAIN:
            line = _HOST.sub(self._host, line)
        if mask & _PY and self._suffixes:
            line = _SEGMENT_START.sub(self._shortened, line)
        return line

    def _ipv6(self, m: re.Match) -> str:
        address = m.group()
        # (`::` alone, `a::b` are C++'s names; an address has a digit)
        return self.placeholder(address, "ip") if any(c.isdigit() for c in address) else address

    def _host(self, m: re.Match) -> str:
        host = m.group()
        return host if host in self.keep else self.placeholder(host, "host")

    def _learned(self, text: str) -> str:
        """Layer 2: every learned name and literal, found by one automaton; at each place the
        longest that is whole there (a name is not part of a longer word: `_` and a string escape
        before it bound it, as FX writes names inside its own, `l_self_modules_gate_proj_...`)."""
        assert self._names is not None
        found = sorted(((end - len(key) + 1, -len(key), key) for end, key in self._names.iter(text)))
        if not found:
            return text
        pieces, pos = [], 0
        for start, _, key in found:
            end = start + len(key)
            if start < pos:
                continue
            if key not in self.literals and not _whole(text, start, end):
                continue
            pieces += [text[pos:start], self.literals.get(key) or self.names[key]]
            pos = end
        pieces.append(text[pos:])
        return "".join(pieces)

    def _replace(self, m: re.Match) -> str:
        return self.names[m.group()]

    def _shortened(self, m: re.Match) -> str:
        return self._suffixes.get(m.group(), m.group())

    def _compile(self) -> None:
        names = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for key in (*self.literals, *(n for n in self.names if len(n) >= 3)):
            names.add_word(key, key)
        names.make_automaton()
        self._names = names
        # A short name (`x`) only as a word, or as FX writes an argument (`L_x_`).
        short = sorted((n for n in self.names if len(n) < 3), key=len, reverse=True)
        self._short = re.compile(r"\b(?:" + "|".join(map(re.escape, short)) + r")\b|(?<=[lLgG]_)(?:"
                                 + "|".join(map(re.escape, short)) + r")(?=_)") if short else None
        # What torch writes of a long path is its end (`uokkacorp_lab/prog.py`): a folder's or
        # file's name cut from the left starts it.
        self._suffixes = {}
        for name, placeholder in self.names.items():
            if placeholder.startswith(("dir_", "file_")):
                for cut in range(1, len(name) - 3):
                    self._suffixes.setdefault(name[cut:], placeholder)

    def replaced(self) -> dict[str, int]:
        """How many of each kind were replaced (the bundle's README lists them)."""
        return dict(self.counts)


def _whole(text: str, start: int, end: int) -> bool:
    """text[start:end] is not part of a longer word (a string escape before it ends one)."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (after.isascii() and after.isalnum()) and (
        not (before.isascii() and before.isalnum()) or (start > 1 and text[start - 2] == "\\" and before in "nrt"))


_LIBRARY, _INDUCTOR, _URL, _KEY, _NAMED, _AT, _DIGITS, _DOMAIN, _PY, _NUMBERS, _COLONS = (1 << i for i in range(11))


def _cues() -> ahocorasick.Automaton:
    """What a line holds where a pattern of layer 1 or a path may be, and which: the start of a
    secret's shape, a name that says one follows, `@`, digits around a dot, a top-level domain,
    a file of Python's."""
    cues = {"/lib/python3.": _LIBRARY, "torchinductor_": _INDUCTOR, "://": _URL | _DOMAIN, "@": _AT, ".py": _PY}
    for start in ("sk-", "sk_", "pk-", "pk_", "rk-", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
                  "glpat-", "hf_", "xox", "AKIA", "AIza", "eyJ", "-----BEGIN"):
        cues[start] = _KEY
    for word in ("api", "key", "token", "pass", "pwd", "bearer", "secret", "credential"):
        for spelling in (word, word.upper(), word.capitalize()):
            cues[spelling] = _NAMED
    for tld in _TLDS.split("|"):
        cues[f".{tld}"] = cues.get(f".{tld}", 0) | _DOMAIN
    for a in range(10):
        for b in range(10):
            cues[f"{a}.{b}"] = _DIGITS  # (an IPv4 address)
            cues[f"{a} {b}"] = cues[f"{a}-{b}"] = _NUMBERS  # (a card's number, an SSN)
    cues["::"] = _COLONS  # (an IPv6 address)
    automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
    for cue, mask in cues.items():
        automaton.add_word(cue, mask)
    automaton.make_automaton()
    return automaton


_CUES = _cues()
# The first part of a path (nothing of a path before it), followed by the rest of one.
_SEGMENT_START = re.compile(r"(?<![\w./~-])[\w.@+~-]{4,}(?=/[\w.-]|\.py\b)")
