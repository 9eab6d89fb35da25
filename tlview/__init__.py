"""tlview: a terminal explorer for torch.compile logs (TORCH_TRACE and TORCH_LOGS)."""

__version__ = "0.1.0"
