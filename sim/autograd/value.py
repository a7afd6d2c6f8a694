"""A scalar that remembers how it was made, and backward() that applies the chain rule through that record.

As micrograd: every operation makes a new Value whose `_parents` are its operands and whose `_local` are the
derivatives of its result with respect to each operand, evaluated at the forward values. backward() walks the
graph in reverse topological order and adds, for each parent, child.grad * local into parent.grad.
"""
from __future__ import annotations

import math
from collections.abc import Iterable


class Value:
    """A scalar of the computational graph: `data` (forward value) and `grad` (d output / d this, after backward)."""

    __slots__ = ("data", "grad", "op", "label", "_parents", "_local")

    def __init__(self, data: float, label: str = "", _parents: tuple[Value, ...] = (), _local: tuple[float, ...] = (),
                 op: str = ""):
        self.data = float(data)
        self.grad = 0.0
        self.op = op  # "" for a leaf, else "+", "*", "**2", "tanh", ...
        self.label = label
        self._parents = _parents
        self._local = _local  # d self / d parent, one per parent

    @property
    def parents(self) -> tuple[Value, ...]:
        return self._parents

    @property
    def local_grads(self) -> tuple[float, ...]:
        """The derivative of this node with respect to each parent, at the forward values."""
        return self._local

    # ---------- arithmetic ----------
    def __add__(self, other: Value | float) -> Value:
        other = as_value(other)
        return Value(self.data + other.data, _parents=(self, other), _local=(1.0, 1.0), op="+")

    def __mul__(self, other: Value | float) -> Value:
        other = as_value(other)
        return Value(self.data * other.data, _parents=(self, other), _local=(other.data, self.data), op="*")

    def __pow__(self, exponent: float) -> Value:
        if isinstance(exponent, Value) or not isinstance(exponent, (int, float)):
            raise TypeError("only a number exponent is supported")
        d = exponent * self.data ** (exponent - 1) if exponent != 0 else 0.0
        return Value(self.data ** exponent, _parents=(self,), _local=(d,), op=f"**{exponent:g}")

    def __neg__(self) -> Value:
        return Value(-self.data, _parents=(self,), _local=(-1.0,), op="neg")

    def __sub__(self, other: Value | float) -> Value:
        other = as_value(other)
        return Value(self.data - other.data, _parents=(self, other), _local=(1.0, -1.0), op="-")

    def __truediv__(self, other: Value | float) -> Value:
        return self * as_value(other) ** -1

    def __radd__(self, other: float) -> Value:
        return self + other

    def __rmul__(self, other: float) -> Value:
        return self * other

    def __rsub__(self, other: float) -> Value:
        return as_value(other) - self

    def __rtruediv__(self, other: float) -> Value:
        return as_value(other) / self

    # ---------- functions ----------
    def tanh(self) -> Value:
        y = math.tanh(self.data)
        return Value(y, _parents=(self,), _local=(1.0 - y * y,), op="tanh")

    def relu(self) -> Value:
        return Value(max(self.data, 0.0), _parents=(self,), _local=(1.0 if self.data > 0 else 0.0,), op="relu")

    def sigmoid(self) -> Value:
        x = self.data  # written so that neither branch overflows
        y = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
        return Value(y, _parents=(self,), _local=(y * (1.0 - y),), op="sigmoid")

    def exp(self) -> Value:
        y = math.exp(self.data)
        return Value(y, _parents=(self,), _local=(y,), op="exp")

    def log(self) -> Value:
        if self.data <= 0:
            raise ValueError(f"log of {self.data:g}: only positive numbers have one")
        return Value(math.log(self.data), _parents=(self,), _local=(1.0 / self.data,), op="log")

    # ---------- backpropagation ----------
    def backward(self) -> None:
        """d self / d node into every node's grad. As torch: a leaf's grad adds to what is there (zero it between
        steps), an intermediate node's is this pass's alone."""
        order = topological(self)
        for node in order:
            if node._parents:
                node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            for parent, local in zip(node._parents, node._local, strict=True):
                parent.grad += node.grad * local

    def __repr__(self) -> str:
        return f"Value(data={self.data:g}, grad={self.grad:g}{', op=' + self.op if self.op else ''})"


def as_value(x: Value | float) -> Value:
    return x if isinstance(x, Value) else Value(x)


def topological(root: Value) -> list[Value]:
    """Every node `root` depends on, each after all of its parents (iterative: deep graphs do not hit the recursion
    limit)."""
    order: list[Value] = []
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in reversed(node._parents) if id(p) not in seen)
    return order


def zero_grad(nodes: Iterable[Value]) -> None:
    for n in nodes:
        n.grad = 0.0
