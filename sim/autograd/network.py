"""A small network written with Value, one scalar per node, and what the page draws of it: the nodes in the order
the forward pass computes them, the edges with their local derivatives, the chain rule at a node, one gradient step.

The network: inputs x (n_in), one or two hidden layers of `width` neurons with an activation, one linear output ŷ,
and the squared error L = (ŷ − y)². Weights are drawn uniform in [−1, 1] from the seed, as micrograd does.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sim.autograd.value import Value, topological

ACTIVATIONS = ("tanh", "relu", "sigmoid")
MAX_INPUTS, MAX_LAYERS, MAX_WIDTH = 3, 2, 3  # the graph stays readable (at most 96 nodes)


@dataclass(frozen=True)
class NetConfig:
    n_in: int = 2  # inputs
    layers: int = 1  # hidden layers
    width: int = 2  # neurons per hidden layer
    activation: str = "tanh"
    seed: int = 0  # draws the weights, the inputs and the target

    def check(self) -> None:
        if not (1 <= self.n_in <= MAX_INPUTS and 1 <= self.layers <= MAX_LAYERS and 1 <= self.width <= MAX_WIDTH):
            raise ValueError(f"network {self.n_in}-{self.layers}x{self.width} is outside the drawn sizes")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {self.activation!r}")

    @property
    def sizes(self) -> list[int]:
        """Neurons per layer, the inputs first and the output last: [2, 2, 1]."""
        return [self.n_in] + [self.width] * self.layers + [1]


@dataclass(frozen=True)
class Sample:
    weights: list[list[list[float]]]  # per layer, per neuron, per input
    biases: list[list[float]]  # per layer, per neuron
    x: list[float]
    y: float


def draw(config: NetConfig) -> Sample:
    """The seed's weights, biases, input and target (uniform in [−1, 1])."""
    config.check()
    rng = random.Random(config.seed)
    sizes = config.sizes
    pairs = zip(sizes, sizes[1:], strict=False)
    weights = [[[rng.uniform(-1, 1) for _ in range(a)] for _ in range(b)] for a, b in pairs]
    biases = [[rng.uniform(-1, 1) for _ in range(b)] for b in sizes[1:]]
    x = [round(rng.uniform(-1, 1), 2) for _ in range(config.n_in)]  # short inputs, easy to read on the graph
    return Sample(weights, biases, x, round(rng.uniform(-1, 1), 2))


@dataclass
class Graph:
    """The built network: every node in forward order, and the parameters among them."""

    nodes: list[Value]  # forward (topological) order; the loss last
    params: list[Value]  # weights then biases, layer by layer
    layer: dict[int, int]  # id(node) -> layer it belongs to (0 inputs, 1.. hidden, last the output and the loss)
    loss: Value

    def index(self, node: Value) -> int:
        return next(i for i, n in enumerate(self.nodes) if n is node)

    def edges(self) -> list[tuple[int, int, float]]:
        """(parent index, child index, d child / d parent) for every edge."""
        where = {id(n): i for i, n in enumerate(self.nodes)}
        return [(where[id(p)], c, d) for c, n in enumerate(self.nodes) for p, d in zip(n.parents, n.local_grads,
                                                                                    strict=True)]

    def children(self, i: int) -> list[tuple[int, float]]:
        """(child index, d child / d node i) of each node that node i feeds."""
        return [(c, d) for p, c, d in self.edges() if p == i]


def activate(v: Value, name: str) -> Value:
    return getattr(v, name)()


def build(config: NetConfig, sample: Sample | None = None) -> Graph:
    """The forward pass on the sample (the seed's by default), as a graph of Values, loss last."""
    s = sample or draw(config)
    layer_of: dict[int, int] = {}

    def leaf(value: float, label: str, layer: int) -> Value:
        v = Value(value, label=label)
        layer_of[id(v)] = layer
        return v

    def mark(v: Value, label: str, layer: int) -> Value:
        v.label = label
        layer_of[id(v)] = layer
        return v

    xs = [leaf(x, f"x{i + 1}", 0) for i, x in enumerate(s.x)]
    weights, biases = [], []
    h = xs
    last = len(s.weights)
    for li, (W, B) in enumerate(zip(s.weights, s.biases, strict=True), start=1):
        out = []
        for j, (row, b) in enumerate(zip(W, B, strict=True), start=1):
            ws = [leaf(w, f"w{li}[{j},{i}]", li) for i, w in enumerate(row, start=1)]
            bv = leaf(b, f"b{li}[{j}]", li)
            weights += ws
            biases.append(bv)
            name = "ŷ" if li == last else f"h{li}[{j}]"
            terms = [mark(w * x, f"{w.label}·{x.label}", li) for w, x in zip(ws, h, strict=True)]
            z = terms[0]
            for k, term in enumerate(terms[1:], start=2):
                z = mark(z + term, f"Σ{k}" if k < len(terms) else f"Σ {name}", li)
            z = mark(z + bv, f"z {name}" if li < last else name, li)
            out.append(z if li == last else mark(activate(z, config.activation), name, li))
        h = out
    y = leaf(s.y, "y", last)
    err = mark(h[0] - y, "ŷ−y", last + 1)
    loss = mark(err ** 2, "L", last + 1)
    return Graph(topological(loss), weights + biases, layer_of, loss)


def forward_backward(config: NetConfig, sample: Sample | None = None) -> Graph:
    g = build(config, sample)
    g.loss.backward()
    return g


def chain_rule(g: Graph, i: int) -> list[tuple[int, float, float]]:
    """The terms of node i's gradient: (child, child's grad, d child / d node i); their products sum to its grad."""
    return [(c, g.nodes[c].grad, d) for c, d in g.children(i)]


def step(config: NetConfig, lr: float, sample: Sample | None = None) -> tuple[Sample, float, float]:
    """One gradient step p ← p − lr·dL/dp on every weight and bias: the new sample, the loss before and after."""
    s = sample or draw(config)
    g = forward_backward(config, s)
    grads = iter(p.grad for p in g.params)
    n_w = sum(len(row) for W in s.weights for row in W)
    w_grads = [next(grads) for _ in range(n_w)]
    b_grads = list(grads)
    it_w, it_b = iter(w_grads), iter(b_grads)
    weights = [[[w - lr * next(it_w) for w in row] for row in W] for W in s.weights]
    biases = [[b - lr * next(it_b) for b in B] for B in s.biases]
    new = Sample(weights, biases, s.x, s.y)
    after = build(config, new).loss.data
    return new, g.loss.data, after


def finite(g: Graph) -> bool:
    return all(math.isfinite(n.data) and math.isfinite(n.grad) for n in g.nodes)


PHASES = ("forward", "backward", "update")


@dataclass(frozen=True)
class Stage:
    """What is known at position k of a pass: each node's value and gradient (None: not computed yet)."""

    values: list[float | None]
    grads: list[float | None]
    current: int | None  # the node computed last (forward) or whose gradient was found last (backward)


def stage(g: Graph, phase: str, k: int) -> Stage:
    """Forward: the first k nodes of the forward order have values. Backward: every value, and the gradients of the
    last k nodes (reverse order: a node's gradient is final once every node it feeds has its own). Update: all."""
    n = len(g.nodes)
    k = max(0, min(k, n))
    if phase == "forward":
        return Stage([v.data if i < k else None for i, v in enumerate(g.nodes)], [None] * n, k - 1 if k else None)
    values = [v.data for v in g.nodes]
    if phase == "backward":
        return Stage(values, [v.grad if i >= n - k else None for i, v in enumerate(g.nodes)], n - k if k else None)
    return Stage(values, [v.grad for v in g.nodes], None)
