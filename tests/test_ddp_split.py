"""Why one compiled DDP module became several graphs: DDPOptimizer's split told (how many, why:
DDP's gradient buckets, the bucket cap where logged, each bucket's parameters), in --json,
--report and the Graphs pane, and each sub-graph's runtime estimates told apart. On a real torch
2.15 gloo run (fixtures/generated/dist215/ddp2: a 5-block MLP in DistributedDataParallel,
bucket_cap_mb=1) and on the corpus's DDP run, of another model (fixtures/corpus/distributed)."""

from __future__ import annotations

import json

from conftest import FIXTURES, GENERATED, SIZE, json_for, ready, run_cli, until
from textual.widgets import OptionList, Static

from tlview.ui.app import TlviewApp
from tlview.ui.graphs_pane import GraphsPane

DDP = GENERATED / "dist215" / "ddp2"
MIB = 1 << 20


def _splits(doc: dict) -> dict:
    return {(c["id"], c["rank"]): c["ddp_split"] for c in doc["compiles"] if "ddp_split" in c}


def test_the_trace_tells_each_bucket_of_the_split():
    splits = _splits(json_for(DDP / "trace"))
    assert set(splits) == {("4/0", 0), ("4/0", 1)}  # the compile of Tower.forward, on each rank
    split = splits[("4/0", 0)]
    assert split["graphs"] == 3 and split["bucket_cap_bytes"] is None  # (the trace does not log the cap)
    layer = (384 * 384 + 384) * 4  # a Linear(384, 384)'s weight and bias, float32
    assert split["buckets"] == [
        {"graph": "submod_0", "parameters": ["blocks.0.weight", "blocks.0.bias"], "bytes": layer},
        {"graph": "submod_1", "parameters": ["blocks.1.weight", "blocks.1.bias", "blocks.2.weight",
                                             "blocks.2.bias"], "bytes": 2 * layer},
        {"graph": "submod_2", "parameters": ["blocks.3.weight", "blocks.3.bias", "blocks.4.weight", "blocks.4.bias",
                                             "head.weight", "head.bias"], "bytes": 2 * layer + (384 + 1) * 4}]
    assert splits[("4/0", 1)] == split
    # no other compile id says it was split
    assert all("ddp_split" not in c for c in json_for(DDP / "trace")["compiles"] if c["id"] != "4/0")


def test_the_text_tells_the_bucket_cap_and_the_count():
    splits = _splits(json_for(DDP / "torch_logs"))
    assert {k: (v["graphs"], v["bucket_cap_bytes"]) for k, v in splits.items()} == \
        {("4/0", 0): (3, MIB), ("4/0", 1): (3, MIB)}


def test_a_split_of_another_model_is_read_alike():
    split = _splits(json_for(FIXTURES / "corpus" / "distributed" / "trace"))[("4/0", 0)]
    assert [(b["graph"], b["parameters"]) for b in split["buckets"]] == [
        ("submod_0", ["net.0.weight", "net.0.bias"]), ("submod_1", ["net.2.weight", "net.2.bias"]),
        ("submod_2", ["net.4.weight", "net.4.bias", "net.6.weight", "net.6.bias"])]


def test_the_report_says_why_one_graph_became_three():
    code, out = run_cli("--report", str(DDP / "torch_logs"))
    assert code == 0
    assert ("  [4/0] ranks 0-1 one graph became 3: DDPOptimizer cut it at DDP's gradient buckets (bucket cap "
            "1.00 MiB), so that each bucket's all_reduce starts as soon as its sub-graph's backward ends") \
        in out.splitlines()
    code, out = run_cli("--report", str(DDP / "trace"))
    lines = out.splitlines()
    at = lines.index("DDP graph splits")
    assert lines[at + 1].startswith("  [4/0] ranks 0-1 one graph became 3: DDPOptimizer cut it at DDP's gradient "
                                    "buckets (its bucket_cap_mb: the trace does not log it, TORCH_LOGS=dynamo does)")
    assert lines[at + 2:at + 5] == [
        "      submod_0: blocks.0.weight, blocks.0.bias (0.56 MiB)",
        "      submod_1: blocks.1.weight, blocks.1.bias, blocks.2.weight, blocks.2.bias (1.13 MiB)",
        ("      submod_2: blocks.3.weight, blocks.3.bias, blocks.4.weight, blocks.4.bias, head.weight, head.bias "
         "(1.13 MiB)")]


def test_each_sub_graph_has_its_own_runtime_entry(tmp_path):
    runtime = json_for(DDP / "trace")["divergence"]["runtime_estimates"]
    labels = ["submod_0", "submod_1", "submod_2", "backward 1", "backward 2", "backward 3"]
    assert [(r["compile_id"], r.get("graph")) for r in runtime["graphs"]] == [("4/0", g) for g in labels]
    assert [(r["compile_id"], r.get("graph")) for r in runtime["by_graph"]] == [("4/0", g) for g in labels]
    out = tmp_path / "trace.json"
    assert run_cli("--perfetto", str(out), str(DDP / "trace"))[0] == 0
    tracks = [e["args"]["name"] for e in json.loads(out.read_text())["traceEvents"]
              if e["name"] == "thread_name" and e["args"]["name"].startswith("graph ")]
    assert tracks == [f"graph 4/0 {g}" for g in labels] * 2  # on each rank


async def test_the_graphs_pane_says_why_beside_a_sub_graph():
    app = TlviewApp(str(DDP / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        node = next(n for n in app.index.iter_nodes() if n.id == "4/0" and n.rank == 0)  # the split's compile
        assert app.tree.select_key(("cid", node.group, node.cid))
        await pilot.press("2")
        pane = app.query_one(GraphsPane)
        options = pane.query_one("#graph-list", OptionList)
        await until(pilot, lambda: options.option_count > 0, what="the graphs")
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        options.highlighted = labels.index("DDP split child · submod_1")
        info = pane.query_one("#graph-info", Static)
        await until(pilot, lambda: "one graph became 3" in str(info.content), what="the split said")
        bucket = "submod_1: blocks.1.weight, blocks.1.bias, blocks.2.weight, blocks.2.bias (1.13 MiB)"
        assert bucket in str(info.content)
