"""sim.autograd against torch.autograd (float64, 1e-12): random expressions, the lab's networks at every size, one
gradient step, the training loop's calls and the gradient norms with depth."""
import math
import random

import numpy as np
import pytest
import torch

from sim.autograd import Value
from sim.autograd.depth import ACTIVATIONS, deep_net, first_layer_by_depth, layer_grad_norms
from sim.autograd.loop import dropout_outputs, saved_for_backward, torch_net, train
from sim.autograd.network import NetConfig, Sample, build, chain_rule, draw, forward_backward, step
from sim.autograd.value import topological

TOL = 1e-12


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


# ---------- random expressions ----------
UNARY = ("tanh", "relu", "sigmoid", "exp", "log", "pow", "neg")
BINARY = ("+", "-", "*", "/")


def random_expression(rng: random.Random, leaves: list, depth: int):
    """The same random expression applied to Values and to torch scalars: (value, tensor)."""
    if depth == 0:
        return rng.choice(leaves)
    if rng.random() < 0.4:
        (v, t), op = random_expression(rng, leaves, depth - 1), rng.choice(UNARY)
        if op == "log":  # a positive argument: log of a square plus one
            v, t = v * v + 1.0, t * t + 1.0
            return v.log(), torch.log(t)
        if op == "pow":
            n = rng.choice((2, 3, 0.5, -1.0))
            if n in (0.5, -1.0):
                v, t = v * v + 0.5, t * t + 0.5
            return v ** n, t ** n
        if op == "exp":
            v, t = v.tanh(), torch.tanh(t)  # keep exp's argument small
        if op == "neg":
            return -v, -t
        return getattr(v, op)(), getattr(torch, op)(t)
    (a, ta), (b, tb) = random_expression(rng, leaves, depth - 1), random_expression(rng, leaves, depth - 1)
    op = rng.choice(BINARY)
    if op == "/":
        b, tb = b * b + 1.0, tb * tb + 1.0
    if rng.random() < 0.2:  # a plain number on one side
        c = rng.uniform(-2, 2)
        a, ta = c, c  # the same op with a number on the left
    f = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q, "/": lambda p, q: p / q}[op]
    return f(a, b), f(ta, tb)


@pytest.mark.parametrize("seed", range(40))
def test_random_expressions_match_torch(seed):
    rng = random.Random(seed)
    xs = [rng.uniform(-2, 2) for _ in range(4)]
    values = [Value(x) for x in xs]
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out, tout = random_expression(rng, list(zip(values, tensors, strict=True)), depth=5)
    if not isinstance(out, Value) or not tout.requires_grad:
        pytest.skip("the expression came out a constant")
    out.backward()
    tout.backward()
    assert close(out.data, tout.item())
    for v, t in zip(values, tensors, strict=True):
        assert close(v.grad, 0.0 if t.grad is None else t.grad.item()), (seed, v.grad, t.grad)


def test_each_function_and_its_derivative():
    for x in (-3.0, -0.5, 0.7, 2.5):
        for name in ("tanh", "relu", "sigmoid", "exp"):
            v, t = Value(x), torch.tensor(x, dtype=torch.float64, requires_grad=True)
            getattr(v, name)().backward()
            getattr(torch, name)(t).backward()
            assert close(v.grad, t.grad.item()), (name, x)
    v = Value(2.0)
    v.log().backward()
    assert v.grad == 0.5
    assert Value(-800.0).sigmoid().data == 0.0 and Value(800.0).sigmoid().data == 1.0  # no overflow either way


def test_bad_uses_are_refused():
    with pytest.raises(ValueError):
        Value(0.0).log()
    with pytest.raises(TypeError):
        Value(2.0) ** Value(3.0)


def test_a_node_used_twice_gets_both_contributions_and_backward_adds_up():
    a = Value(3.0)
    b = a * a + a  # db/da = 2a + 1 = 7
    b.backward()
    assert a.grad == 7.0
    b.backward()  # without zeroing, as torch: the gradients add up
    assert a.grad == 14.0


def test_topological_order_puts_every_node_after_its_parents_even_when_deep():
    x = Value(0.5)
    y = x
    for _ in range(5000):  # deeper than Python's recursion limit
        y = y * 1.0 + 0.0
    order = topological(y)
    where = {id(n): i for i, n in enumerate(order)}
    assert all(where[id(p)] < where[id(n)] for n in order for p in n.parents)
    y.backward()
    assert x.grad == 1.0


# ---------- the lab's network ----------
CONFIGS = [NetConfig(n_in, layers, width, act, seed) for n_in in (1, 2, 3) for layers in (1, 2) for width in (1, 2, 3)
           for act in ("tanh", "relu", "sigmoid") for seed in (0, 7)]


def torch_grads(config: NetConfig, s: Sample) -> tuple[float, list[float]]:
    net = torch_net(config, s)
    loss = ((net(torch.tensor([s.x], dtype=torch.float64)) - s.y) ** 2).sum()
    loss.backward()
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    grads = [g for m in linears for g in m.weight.grad.flatten().tolist()] + \
            [g for m in linears for g in m.bias.grad.tolist()]
    return loss.item(), grads


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_every_network_size_has_torchs_gradients(config):
    s = draw(config)
    g = forward_backward(config, s)
    loss, grads = torch_grads(config, s)
    assert close(g.loss.data, loss)
    assert len(g.params) == len(grads)
    assert all(close(p.grad, t) for p, t in zip(g.params, grads, strict=True))


def test_the_graph_is_in_forward_order_and_the_chain_rule_sums_to_each_gradient():
    g = forward_backward(NetConfig(3, 2, 3, "sigmoid", 4))
    where = {id(n): i for i, n in enumerate(g.nodes)}
    assert all(where[id(p)] < i for i, n in enumerate(g.nodes) for p in n.parents)
    assert g.nodes[-1] is g.loss and len(g.nodes) == 82
    for i, n in enumerate(g.nodes[:-1]):
        terms = chain_rule(g, i)
        assert terms, n.label  # every node but the loss feeds another
        assert close(sum(grad * local for _, grad, local in terms), n.grad)
    # every edge's local derivative is the one of its op
    for _, c, d in g.edges():
        child = g.nodes[c]
        if child.op == "tanh":
            assert close(d, 1 - child.data ** 2)
        elif child.op == "sigmoid":
            assert close(d, child.data * (1 - child.data))


def test_one_gradient_step_is_torchs_sgd_step():
    config = NetConfig(2, 2, 3, "tanh", 3)
    s = draw(config)
    new, before, after = step(config, 0.1, s)
    net = torch_net(config, s)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.tensor([s.x], dtype=torch.float64)
    loss = ((net(x) - s.y) ** 2).sum()
    loss.backward()
    opt.step()
    assert close(before, loss.item())
    with torch.no_grad():
        assert close(after, ((net(x) - s.y) ** 2).sum().item())
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    for W, m in zip(new.weights, linears, strict=True):
        assert np.allclose(W, m.weight.detach().numpy(), rtol=0, atol=1e-12)
    assert after < before  # a small step down the gradient lowers the loss


def test_config_limits_are_enforced():
    for bad in (NetConfig(n_in=4), NetConfig(layers=3), NetConfig(width=0), NetConfig(activation="gelu")):
        with pytest.raises(ValueError):
            build(bad)


# ---------- the training loop's calls ----------
def value_grad_at(config: NetConfig, s: Sample) -> float:
    """dL/dw1[1,1] at the sample's weights, by the Value engine."""
    return forward_backward(config, s).params[0].grad


def test_with_zero_grad_the_loop_is_plain_gradient_descent():
    config = NetConfig(2, 1, 2, "tanh", 1)
    run = train(config, lr=0.2, steps=12, zero_grad=True)
    s = draw(config)
    for k in range(12):
        g = forward_backward(config, s)
        assert close(run.loss[k], g.loss.data) and close(run.grad[k], g.params[0].grad)
        s = step(config, 0.2, s)[0]
    assert run.diverged_at is None and run.loss[-1] < run.loss[0]


def test_without_zero_grad_the_gradients_add_up():
    """.grad at step k is the sum of the fresh gradients of steps 0..k, each at the weights that step had."""
    config = NetConfig(2, 1, 2, "tanh", 1)
    run = train(config, lr=0.2, steps=8, zero_grad=False)
    assert np.allclose(np.cumsum(run.fresh), run.grad, rtol=0, atol=1e-12)
    assert close(run.fresh[0], value_grad_at(config, draw(config)))
    clean = train(config, lr=0.2, steps=8, zero_grad=True)
    assert close(run.loss[0], clean.loss[0]) and not close(run.loss[3], clean.loss[3])


def test_without_zero_grad_a_large_rate_diverges_and_says_when():
    run = train(NetConfig(2, 1, 2, "tanh", 0), lr=2.0, steps=100, zero_grad=False)
    assert run.diverged_at is not None and np.isnan(run.loss[run.diverged_at:]).all()


def test_no_grad_keeps_nothing_for_backward_and_the_graph_keeps_activations():
    config = NetConfig(3, 2, 3, "tanh", 0)
    off = saved_for_backward(config, 256, no_grad=True)
    assert (off.tensors, off.bytes, off.graph) == (0, 0, False)
    on = saved_for_backward(config, 256, no_grad=False)
    assert on.graph and on.tensors > 0
    assert on.bytes >= 256 * (3 + 3 + 3) * 8  # at least the input and each hidden layer's tanh output, float64
    bigger = saved_for_backward(config, 512, no_grad=False)
    assert bigger.tensors == on.tensors and bigger.bytes > 1.9 * on.bytes - 4096  # grows with the batch


def test_eval_turns_dropout_off_and_train_draws_new_masks():
    config = NetConfig(2, 2, 3, "tanh", 5)
    train_out, eval_out, plain = dropout_outputs(config, 0.5)
    assert all(o == plain for o in eval_out)
    assert len(set(train_out)) > 1
    assert close(plain, next(n.data for n in build(config).nodes if n.label == "ŷ"))


# ---------- gradient norms with depth ----------
def value_norms(activation: str, depth: int, scale: float, width: int, batch: int) -> list[float]:
    """‖dL/dW_l‖ computed by the Value engine, one scalar at a time, from deep_net's tensors."""
    x, target, weights, head = deep_net(depth, scale, width, batch, seed=0)
    W = [[[Value(w) for w in row] for row in m.tolist()] for m in weights]
    loss = Value(0.0)
    for b in range(batch):
        h = [Value(v) for v in x[b].tolist()]
        for m in W:
            h = [getattr(sum((w * v for w, v in zip(row, h, strict=True)), Value(0.0)), activation)() for row in m]
        out = sum((Value(c) * v for c, v in zip(head[0].tolist(), h, strict=True)), Value(0.0))
        loss = loss + (out - target[b, 0].item()) ** 2
    loss = loss / batch
    loss.backward()
    return [math.sqrt(sum(w.grad ** 2 for row in m for w in row)) for m in W]


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_layer_gradient_norms_match_the_value_engine(activation):
    ours = layer_grad_norms(activation, depth=4, scale=1.5, width=3, batch=3)
    assert np.allclose(ours, value_norms(activation, 4, 1.5, 3, 3), rtol=1e-12, atol=0)


def test_sigmoid_gradients_vanish_with_depth_and_large_tanh_init_explodes():
    first = first_layer_by_depth(1.0)
    assert (np.diff(np.log(first["sigmoid"])) < 0).all() and first["sigmoid"][-1] < 1e-20
    deep = layer_grad_norms("tanh", 40, 4.0)
    assert deep[0] > 1e3 * deep[-1]  # exploding: the gradient grows on its way back
    sig = layer_grad_norms("sigmoid", 20, 1.0)
    assert sig[0] < 1e-6 * sig[-1]  # vanishing: each sigmoid multiplies by at most 1/4
