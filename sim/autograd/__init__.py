"""Backpropagation, for the foundations lab: a scalar autograd value in the manner of micrograd (value.py), a small
network built from it and laid out as a computational graph (network.py), and the training loop's calls and the
gradient's size with depth measured with torch.autograd (loop.py, depth.py)."""
from sim.autograd.value import Value

__all__ = ["Value"]
