"""Payloads (source/payload.py): the streaming decoder finds what decoding at once finds, and the
md5 the scan checks (from the block in memory when it can) agrees with the exact decoder."""

from __future__ import annotations

import hashlib
import re

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from tlview.index.indexing import open_index
from tlview.source.payload import PayloadDecoder

REAL = next((CORPUS / "recompiles" / "trace").glob("*.log"))
NAME = "dedicated_log_torch_trace_x.log"
RECORDS = [r for r in re.split(rb"(?m)^(?=V\d{4} )", REAL.read_bytes()) if r]  # a record a piece


@settings(max_examples=300, deadline=None)
@given(region=st.lists(st.sampled_from([b"\t", b"\n", b"\r", b" ", b"a", b"\t\t", b"\r\n", b"\n\t"]),
                       max_size=16).map(b"".join),
       cuts=st.lists(st.integers(0, 40), max_size=4))
def test_the_streaming_decoder_equals_decoding_at_once(region, cuts):
    """Fed in pieces of any size, the decoder finds the same payload, blank and bad lines."""
    def at_once(region: bytes):
        body = region if region.endswith(b"\n") else region + b"\n"
        lines, blank, bad, pos, in_payload = [], [], [], 0, True
        while region and pos < len(body):
            nl = body.find(b"\n", pos)
            line = body[pos:nl].removesuffix(b"\r")
            if in_payload and line[:1] == b"\t":
                lines.append(line[1:])
            elif in_payload and line == b"":
                blank.append(pos)
            else:
                in_payload = False
                if line.strip(b" "):
                    bad.append(pos)
            pos = nl + 1
        return b"\n".join(lines), blank, bad

    decoder = PayloadDecoder(keep=1 << 20)
    prev = 0
    for cut in sorted(c for c in cuts if c <= len(region)) + [len(region)]:
        decoder.feed(region[prev:cut])
        prev = cut
    decoder.close()
    text, blank, bad = at_once(region)
    assert (decoder.kept_text(), decoder.blank_lines, decoder.bad_lines) == (text, blank, bad)
    assert decoder.md5 == hashlib.md5(text).hexdigest()


_PAYLOAD_LINES = st.lists(st.text(alphabet="ab\t\r x", max_size=12), min_size=1, max_size=6)


@pytest.mark.slow  # a big input: seconds
@settings(max_examples=60, deadline=None)
@given(lines=_PAYLOAD_LINES, tamper=st.booleans(), blank=st.booleans())
def test_md5_checked_in_the_scan_agrees_with_the_decoder(tmp_path_factory, lines, tamper, blank):
    """Payload lines with TABs and CRs inside, a blank line, a changed byte: the scan (which hashes
    payloads from the block in memory when it can) finds exactly what the exact decoder finds."""
    text = "\n".join(lines).encode()
    at = next(i for i, r in enumerate(RECORDS) if b'"inductor_output_code"' in r[:300])
    head = re.sub(rb'"has_payload": "[0-9a-f]{32}"',
                  b'"has_payload": "' + hashlib.md5(text).hexdigest().encode() + b'"',
                  RECORDS[at].split(b"\n", 1)[0])
    region = b"\t" + text.replace(b"\n", b"\n\t") + b"\n"
    if blank:
        region = region.replace(b"\n", b"\n\n", 1)
    if tamper:
        region = region[:1] + b"Z" + region[2:]
    folder = tmp_path_factory.mktemp("md5")
    (folder / NAME).write_bytes(b"".join(RECORDS[:at]) + head + b"\n" + region + b"".join(RECORDS[at + 1:]))
    index = open_index(str(folder), verify_md5=True, parallel_ok=False)
    source = index.sources[0]
    decoded = PayloadDecoder()
    decoded.feed(region)
    decoded.close()
    expected_ok = decoded.md5 == hashlib.md5(text).hexdigest()
    assert source.md5_bad == (0 if expected_ok else 1)
    assert bool(decoded.blank_lines) == any(p.kind == "blank line" for p in index.problems)
    assert source.md5_ok + source.md5_bad == sum(1 for line in (folder / NAME).read_bytes().split(b"\n")
                                                 if line.startswith(b"V") and b"has_payload" in line)
