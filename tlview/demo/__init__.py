"""A bundled real run for `tlview --demo`: the graph_breaks scenario of the shared corpus
(PyTorch 2.13.0, CPU; fixtures/corpus/graph_breaks has its program and what it must show)."""
