"""What names the user's code in a run's logs, replaced by stable placeholders (tlview --bundle
--redact): so a trace can be attached to a bug report by someone who may not share their code.

What is the user's is learned from the logs and, where the user's files are here, from the files:
- the user's files (frames outside installed packages and the standard library): their folder
  names and file names;
- names defined in them (functions, classes, arguments, variables, attributes set on `self`)
  when the file can be read and parsed; else the names of the user's frames and of the code
  lines the logs quote (a call's name, a variable: not an attribute of another object, which is
  most often a tensor's method);
- the string literals and comments of those lines.

Each becomes `fn_1`, `Class_1`, `attr_1`, `var_1`, `file_1`, `dir_1`, `str_1` or `# comment_1`,
the same everywhere (envelopes, payloads, text logs), so the logs still read as one run. What is
torch's stays: code, op names, shapes, dtypes, devices, and the words of PyTorch's messages (a
user's name that is also a word of theirs is kept: replacing it there would change what they say,
and what tlview finds in them). Paths of installed packages keep their part from `lib/pythonX.Y`
on (`<env>/lib/python3.11/site-packages/torch/...`); the Inductor cache folder's user name becomes
`user`.

A replacement is done by hand, with one regular expression over every name (Python's tokenizer
would stop at the first line that is not Python: most of a log is not).
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import tokenize
from collections import Counter

PREFIXES = {"fn": "fn", "class": "Class", "attr": "attr", "var": "var", "file": "file", "dir": "dir"}
# Never the user's: Python's own words, and the names every torch program uses for torch.
KEEP = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {
    "self", "cls", "torch", "nn", "F", "functional", "np", "numpy", "math", "os", "sys", "logging",
    "warnings", "time", "random", "functools", "itertools", "collections", "typing", "dataclasses",
    "forward", "backward", "Tensor", "Parameter", "Module", "training", "weight", "bias",
    "setup_context", "reset_parameters", "extra_repr", "main", "py", "lib", "site", "packages",
    "aten", "prims", "inductor", "triton", "dynamo", "fx", "GraphModule",
}
# Folder names that tell nothing of the user (`/tmp`, `/home`): kept, so paths stay readable.
GENERIC_FOLDERS = frozenset({"tmp", "home", "usr", "opt", "var", "srv", "mnt", "root", "data", "work",
                             "workspace", "src", "code", "job", "jobs", "users", "Users", "local"})
_LIBRARY_PREFIX = re.compile(r"(?<![\w/.~-])(?:~|/)[^\s\"'<>:,()\[\]]*?(?=/lib/python3\.\d+/)")
_INDUCTOR_USER = re.compile(r"torchinductor_[\w.-]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"`[^`]*`|<[^<>]*>|'[^']*'|\"[^\"]*\"")


_TORCH_NAME = re.compile(r"\b(?:aten|prims|torch|_C|_nn|nn|F|functional|ops|Tensor|inductor)\.(\w+)")


def torch_names(text: str) -> set[str]:
    """Names torch's own code uses in the logs (`aten.relu`, `torch.nn.functional.linear`): kept
    even where the user named something the same."""
    return set(_TORCH_NAME.findall(text))


def message_words(text: str) -> set[str]:
    """The words of a PyTorch message (quoted code and reprs left out: a user's function named
    in it is still the user's)."""
    return set(_WORD.findall(_QUOTED.sub(" ", text)))


class Redactor:
    def __init__(self, keep: set[str] | frozenset = frozenset()) -> None:
        self.keep = KEEP | keep
        self.names: dict[str, str] = {}  # a user's name -> its placeholder
        self.literals: dict[str, str] = {}  # a string literal's text (quotes and all) or a comment -> placeholder
        self.counts: Counter = Counter()  # placeholders made, by kind
        self._pattern: re.Pattern | None = None
        self._short: re.Pattern | None = None

    # ---- learning what is the user's -------------------------------------------------------------

    def name(self, name: str, kind: str) -> None:
        if (not name or name in self.names or name in self.keep or not name.isidentifier()
                or (name.startswith("__") and name.endswith("__"))):
            return
        self.counts[kind] += 1
        self.names[name] = f"{PREFIXES[kind]}_{self.counts[kind]}"
        self._pattern = None

    def path(self, path: str) -> None:
        """A user's file: its folder names and its file name."""
        *folders, file = path.replace("\\", "/").split("/")
        for folder in folders:
            if folder not in GENERIC_FOLDERS:
                self.name(folder, "dir")
        self.name(file[:-3] if file.endswith(".py") else file, "file")

    def source(self, text: str) -> bool:
        """A user's whole file: every name it defines, its string literals and comments. False
        if it is not Python this version parses (its code lines are then learned one by one)."""
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
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
            if kind != tokenize.NAME:
                continue
            after_dot = i > 0 and tokens[i - 1] == (tokenize.OP, ".")
            if not after_dot:
                self.name(text, "var")
            elif i > 1 and tokens[i - 2][1] in ("self", "cls"):
                self.name(text, "attr")
        self._literals_of(line)

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
        else:  # as written, and as Python shows it (a bytecode dump: 'text')
            self.literals[text] = f"{text[-1]}str_{self.counts[kind]}{text[-1]}"
            if text[:1] in "'\"" and len(text) > 2 and (shown := repr(content)) != text:
                self.literals.setdefault(shown, f"{shown[0]}str_{self.counts[kind]}{shown[0]}")
        self._pattern = None

    # ---- replacing ---------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """`text` with what is the user's replaced."""
        if self._pattern is None:
            self._compile()
        text = _LIBRARY_PREFIX.sub("<env>", text)
        text = _INDUCTOR_USER.sub("torchinductor_user", text)
        if self._pattern is not None:
            text = self._pattern.sub(self._replace, text)
        if self._short is not None:
            text = self._short.sub(self._replace, text)
        return text

    def _replace(self, m: re.Match) -> str:
        found = m.group()
        return self.literals.get(found) or self.names[found]

    def _compile(self) -> None:
        # Longest first: a name inside a longer one (`gate` in `gate_proj`) never cuts it.
        literals = sorted(self.literals, key=len, reverse=True)
        long = sorted((n for n in self.names if len(n) >= 3), key=len, reverse=True)
        short = sorted((n for n in self.names if len(n) < 3), key=len, reverse=True)
        parts = [re.escape(lit) for lit in literals]
        if long:
            # `_` bounds a name too: FX names it inside its own (`l_self_modules_quokka_proj_...`)
            parts.append(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, long)) + r")(?![A-Za-z0-9])")
        self._pattern = re.compile("|".join(parts)) if parts else None
        # A short name (`x`) only as a word, or as FX writes an argument (`L_x_`).
        self._short = re.compile(r"\b(?:" + "|".join(short) + r")\b|(?<=[lLgG]_)(?:" + "|".join(short)
                                 + r")(?=_)") if short else None

    def replaced(self) -> dict[str, int]:
        """How many of each kind were replaced (the bundle's README lists them)."""
        return dict(self.counts)
