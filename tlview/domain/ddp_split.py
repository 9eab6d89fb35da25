"""DDPOptimizer's split of a compiled DistributedDataParallel module's graph into several, one per
gradient bucket (torch/_dynamo/backends/distributed.py): why one module became several graphs.

DDP all-reduces gradients in buckets of about `bucket_cap_mb` as backward produces them; with
torch._dynamo.config.optimize_ddp the graph is cut where a bucket fills (parameters counted from
the last), so that each sub-graph's backward ends, and its bucket's all_reduce can start, before
the backward of the ones before it. What torch logs of it:
- the trace: `optimize_ddp_split_graph` (the split module) and one `optimize_ddp_split_child` per
  sub-graph (`{"name": "submod_0"}`, its code: its parameters are its inputs, with their shapes);
- TORCH_LOGS=dynamo: "DDPOptimizer used bucket cap 1048576 and created 3 buckets" (the cap is in
  no trace record).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tlview.patterns import lazy

if TYPE_CHECKING:
    from tlview.domain.compile_node import CompileNode

SPLIT_CHILD = "optimize_ddp_split_child"
BUCKETS_LINE = lazy(r"DDPOptimizer used bucket cap (?P<cap>\d+) and created (?P<count>\d+) buckets")

# A sub-graph's parameter, as Dynamo names the input: `l_self_modules_blocks_modules_0_parameters_weight_:
# "f32[384, 384]"` (the module attribute path, then the dtype and shape)
_PARAMETER = re.compile(r"\b[lL]_self_(?P<path>\w+?_parameters_\w+?)_: \"(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]\"")
_PATH_PART = re.compile(r"(?:^|_)(?:modules|parameters)_")
_DTYPE_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1,
                "b8": 1, "c64": 8, "c128": 16}


@dataclass(frozen=True, slots=True)
class DdpBucket:
    """One sub-graph: its name and the parameters whose gradients form its bucket."""

    graph: str  # `submod_0`
    parameters: tuple[str, ...]  # `blocks.0.weight`
    size: int | None  # bytes of those parameters; None where a shape is not a number


@dataclass(frozen=True, slots=True)
class DdpSplit:
    graphs: int  # how many graphs the one became
    bucket_cap: int | None  # bytes; None: not logged (the trace does not say it)
    buckets: tuple[DdpBucket, ...]  # each sub-graph's (none from the text alone)

    def sentence(self) -> str:
        cap = (f"bucket cap {megabytes(self.bucket_cap)}" if self.bucket_cap is not None
               else "its bucket_cap_mb: the trace does not log it, TORCH_LOGS=dynamo does")
        return (f"one graph became {self.graphs}: DDPOptimizer cut it at DDP's gradient buckets ({cap}), "
                "so that each bucket's all_reduce starts as soon as its sub-graph's backward ends")

    def bucket_lines(self) -> list[str]:
        return [f"{b.graph}: {parameters_said(b.parameters)}"
                f"{f' ({megabytes(b.size)})' if b.size is not None else ''}" for b in self.buckets]

    def as_dict(self) -> dict[str, Any]:
        return {"graphs": self.graphs, "bucket_cap_bytes": self.bucket_cap,
                "buckets": [{"graph": b.graph, "parameters": list(b.parameters), "bytes": b.size}
                            for b in self.buckets]}


    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DdpSplit:
        """As as_dict made it (--json's `ddp_split`)."""
        return cls(int(data["graphs"]), data.get("bucket_cap_bytes"),
                   tuple(DdpBucket(str(b["graph"]), tuple(b["parameters"]), b.get("bytes"))
                         for b in data.get("buckets") or ()))


def megabytes(size: int) -> str:
    return f"{size / (1 << 20):.2f} MiB"


def parameters_said(parameters: tuple[str, ...]) -> str:
    """`blocks.1.weight, blocks.1.bias, blocks.2.weight, blocks.2.bias`, cut after 6."""
    shown = ", ".join(parameters[:6])
    return shown + (f" and {len(parameters) - 6} more" if len(parameters) > 6 else "") if parameters \
        else "no parameters"


def bucket_of(graph: str, code: str) -> DdpBucket:
    """A sub-graph's bucket, from its code's signature (its parameters, as inputs)."""
    signature = code.split("def forward(", 1)[-1].split("\n", 1)[0]
    names: list[str] = []
    sizes: list[int | None] = []
    for m in _PARAMETER.finditer(signature):
        names.append(_PATH_PART.sub(".", m.group("path")).strip("."))
        shape = [d.strip() for d in m.group("shape").split(",") if d.strip()]
        width = _DTYPE_BYTES.get(m.group("dtype"))
        sizes.append(width * _product(int(d) for d in shape)
                     if width is not None and all(d.isdigit() for d in shape) else None)
    known = [s for s in sizes if s is not None]
    return DdpBucket(graph, tuple(names), sum(known) if len(known) == len(sizes) else None)


def _product(numbers: Iterable[int]) -> int:
    result = 1
    for n in numbers:
        result *= n
    return result


def ddp_split(nodes: Sequence[CompileNode]) -> DdpSplit | None:
    """The split of a compile (its attempts' records), or None where DDPOptimizer did not split it."""
    children = [a for node in nodes for a in node.artifacts if a.name == SPLIT_CHILD]
    told = next((n.text.ddp_buckets for n in nodes if n.text.ddp_buckets is not None), None)
    if len(children) < 2 and (told is None or told[1] < 2):
        return None
    buckets = tuple(bucket_of(str((a.info or {}).get("name") or f"submod_{i}"), a.load().text)
                    for i, a in enumerate(children))
    return DdpSplit(len(children) or (told[1] if told else 0), told[0] if told else None, buckets)
