"""remat: memory-saving gradients planned by remat's C++ planners.

`remat.torch.partition(budget=...)` is a partition function for PyTorch's AOT
Autograd (docs/torch.md). `plan_training_graph` is the C++ call beneath it.
"""

from ._remat import plan_training_graph

__all__ = ["plan_training_graph"]
