"""`python bench/floor.py PATH...` (issue #46): the work `tlview --json` cannot leave out, done in
plain Python in this one process, as a floor to read its figures against (bench/scale.py prints
it beside them): each record's payload found (a line that starts with "V" starts a record) and
its md5 taken as the trace's md5 check takes it (TABs out), the files read whole.

It parses no JSON, keeps nothing, builds no index: a scanner written in Python does at least this.
Divided by the cores, plus `python -c "import tlview..."`, it is what a figure would be were
the rest of tlview free.
"""

from __future__ import annotations

import os
import sys
from hashlib import md5


def payload_md5s(path: str) -> int:
    """The payloads of one trace file hashed, one at a time; how many."""
    with open(path, "rb") as file:
        data = file.read()
    count = 0
    for record in data.split(b"\nV"):
        eol = record.find(b"\n")
        if eol > 0 and record[eol + 1:eol + 2] == b"\t":
            md5(record[eol + 1:].replace(b"\t", b"")).hexdigest()
            count += 1
    return count


def main() -> None:
    paths = [os.path.join(p, name) for p in sys.argv[1:] for name in sorted(os.listdir(p))] \
        if all(os.path.isdir(p) for p in sys.argv[1:]) else sys.argv[1:]
    print(sum(payload_md5s(path) for path in paths))


if __name__ == "__main__":
    main()
