"""Compile ids as torch writes them, and the compile an attempt belongs to."""

from __future__ import annotations

import pytest

from tlview.domain.compile_id import CompileId


@pytest.mark.parametrize(("text", "compile_text"), [
    ("0/1_2", "0/1"), ("!3/0/1_1", "!3/0/1"), ("4/0", "4/0"), ("!2", "!2/-/-"), ("[!3/-/-]", "!3/-/-"),
])
def test_an_attempt_belongs_to_its_compile(text, compile_text):
    cid = CompileId.parse(text)
    assert cid is not None
    key = cid.compile_key
    assert str(key) == compile_text and key.attempt == 0
    assert (key.autograd, key.frame, key.frame_compile) == (cid.autograd, cid.frame, cid.frame_compile)
    assert key == CompileId.parse(f"{text.split('_')[0]}") and hash(key) == hash(key.compile_key)
