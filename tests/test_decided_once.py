"""Each compile's verdict, its compile ids' diagnoses and each problem's fix are decided once per
change of the compile (issue #46: --report at 10,000 compile ids chose 22,000 fixes for 6,000
problems), and decided again when a followed compile takes a record."""

from __future__ import annotations

from conftest import CORPUS

from tlview.diagnose import classify
from tlview.diagnose.classify import diagnose_node, fix_for
from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.report.summary import build_summary
from tlview.source.discover import FoundLog

TRACE = next((CORPUS / "graph_breaks" / "trace").glob("*.log"))


def _said(index: Index) -> dict[str, list]:
    """Each compile id's diagnoses and the fixes of its compile's problems."""
    return {node.id: [[d.as_dict() for d in diagnose_node(node)],
                      [fix_for(p) for p in node.compile.verdict.problems]]
            for node in index.iter_nodes() if node.compile is not None}


def test_a_followed_compile_is_diagnosed_again_when_it_takes_a_record(tmp_path):
    """Asked after every record as a follower reads them: what is said at the end is what a
    fresh index of the whole trace says (a cache kept past a record says the old diagnoses)."""
    data = TRACE.read_bytes()
    path = tmp_path / TRACE.name
    path.write_bytes(b"")
    index = Index(verify_md5=False)
    index.add_log(FoundLog(str(path), "trace", None))
    records = [i for i in range(len(data)) if data[i:i + 1] != b"\t" and (i == 0 or data[i - 1:i] == b"\n")]
    changed = 0
    with open(path, "ab") as f:
        for start, end in zip(records, [*records[1:], len(data)], strict=True):
            f.write(data[start:end])
            f.flush()
            before = _said(index)
            index.refresh()
            after = _said(index)
            changed += any(before.get(cid) not in (None, said) for cid, said in after.items())
    index.finish()
    fresh = open_index(str(TRACE), parallel_ok=False)
    assert changed  # (records did change what was said of compile ids already there)
    assert _said(index) == _said(fresh)


def test_the_summary_chooses_each_fix_once(monkeypatch):
    """The costs, each compile id's entry and its diagnoses all say a problem's fix: chosen once."""
    chosen: list[int] = []
    choose = classify._fix

    def counted(problem, settings):
        chosen.append(id(problem))
        return choose(problem, settings)

    monkeypatch.setattr(classify, "_fix", counted)
    index = open_index(str(TRACE), parallel_ok=False)
    summary = build_summary(index)
    assert chosen and sorted(chosen) == sorted(set(chosen))
    assert sum(len(entry["verdict"]) for entry in summary["compiles"]) >= len(set(chosen))
