"""The paths section's update formulas, read as mathematics: every line's symbolic right-hand side is evaluated
with the step's own numbers (the point, the gradient, the state before the step, the hyper-parameters) and must give
the numbers printed beside it; the last line must give the point the engine stepped to.

The LaTeX is parsed here, independently of sim/plots/optimizers.py (a small reader for the notation it writes:
symbols, \\hat, \\sqrt{...}, ^, implicit products), so a sign or a factor wrong on screen fails even when the numbers
printed beside the formula are right."""
import re

import numpy as np
import pytest

from sim.optim.optimizers import OPTIMIZERS, surface, trace
from sim.plots.optimizers import update_latex

# the state before the step, under the name the formula gives it: displayed letter -> the engine's state key
PREVIOUS = {"sgd": {}, "momentum": {"v": "buf"}, "nesterov": {"v": "buf"}, "adagrad": {"s": "sum"},
            "rmsprop": {"s": "square_avg"}, "adam": {"m": "m", "v": "v"}, "adamw": {"m": "m", "v": "v"},
            "lion": {"m": "m"}}
GREEK = {r"\eta": "lr", r"\beta_1": "beta1", r"\beta_2": "beta2", r"\beta": "beta", r"\alpha": "alpha",
         r"\epsilon": "eps", r"\lambda": "weight_decay"}
FUNCTIONS = {"sqrt": np.sqrt, "sign": np.sign}
TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\*\*|[-+*/()])")


def python(tex: str) -> str:
    """A formula's symbolic side as a Python expression over named arrays."""
    s = tex.replace(r"\left(", "(").replace(r"\right)", ")").replace(r"\,", " ").replace(r"\ ", " ")
    s = s.replace(r"\operatorname{sign}", "sign")
    while r"\sqrt{" in s:
        s = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", s)
    s = re.sub(r"\\hat\s*([a-z])_t", r"\1_hat", s)
    s = re.sub(r"\\theta_\{t-1\}", "theta_prev", s).replace(r"\theta_t", "theta_t")
    s = re.sub(r"\b([a-z])_\{t-1\}", r"\1_prev", s)
    for sym, name in sorted(GREEK.items(), key=lambda kv: -len(kv[0])):
        s = s.replace(sym, f" {name} ")
    s = re.sub(r"\^\{([^{}]*)\}", r"**(\1)", s).replace("^", "**")
    tokens, pos = [], 0
    while pos < len(s.rstrip()):
        m = TOKEN.match(s, pos)
        assert m, f"cannot read {s[pos:]!r} in {tex!r}"
        tokens.append(m.group(1))
        pos = m.end()
    out = []
    for tok in tokens:  # implicit products: an operand or ')' followed by an operand or '('
        prev = out[-1] if out else None
        if prev and (prev == ")" or re.match(r"[A-Za-z_0-9]", prev)) and prev not in FUNCTIONS \
                and (tok == "(" or re.match(r"[A-Za-z_0-9]", tok)):
            out.append("*")
        out.append(tok)
    return " ".join(out)


def numbers(tex: str) -> np.ndarray:
    """A printed 2-vector \\left(a,\\ b\\right) as numbers (\\infty and ? read as inf and nan)."""
    inner = tex.strip().removeprefix(r"\left(").removesuffix(r"\right)")
    return np.array([float(v.replace(r"\infty", "inf").replace("?", "nan")) for v in inner.split(r",\ ")])


def check(opt: str, records: list[dict], hyper: dict, tex: str) -> None:
    """Evaluate `tex`, the written-out update of the last record, and compare with what it prints and what the
    engine did."""
    rec = records[-1]
    before = records[-2]["state"] if len(records) > 1 else {}
    env = {"theta_prev": rec["theta"], "g_t": rec["grad"], "t": rec["step"], **hyper}
    for letter, key in PREVIOUS[opt].items():
        env[f"{letter}_prev"] = before.get(key, np.zeros(2))
    body = tex.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}")
    lines = body.split(r" \\ ")
    assert lines[0].startswith("t &=")  # the inputs: t, θ_{t−1} and g_t
    last = None
    for line in lines[1:]:
        line = re.sub(r"\\?\s*\\quad\s*\((\\[a-z]+(_\d)?|t) = [^()]*\)|\\ \(\\[a-z]+ = [^()]*\)", "", line)
        for formula in line.split(r",\quad"):
            formula = formula.replace("&", "")
            if r"\leftarrow" in formula:  # a rebinding, g_t ← g_t + λθ
                lhs, rhs = formula.split(r"\leftarrow")
                env[python(lhs).strip()] = eval(python(rhs), FUNCTIONS, dict(env))
                continue
            lhs, sym, *shown = [p.strip() for p in formula.split(" = ")]
            name = python(lhs).replace(" ", "")
            value = eval(python(sym), FUNCTIONS, dict(env))
            np.testing.assert_allclose(value, numbers(shown[-1]), rtol=2e-3, atol=1e-12,
                                       err_msg=f"{opt}: {formula}")
            env[name] = value
            last = name
    assert last == "theta_t", tex
    np.testing.assert_allclose(env["theta_t"], rec["theta_new"], rtol=1e-12, atol=1e-15, err_msg=tex)


CASES = {"adam": {"weight_decay": 0.1}, "adamw": {"weight_decay": 0.1}, "lion": {"weight_decay": 0.1}}


@pytest.mark.parametrize("opt", OPTIMIZERS)
@pytest.mark.parametrize("steps", [1, 2, 7])
def test_every_written_out_update_evaluates_to_the_step_taken(opt, steps):
    hyper = {**OPTIMIZERS[opt], **CASES.get(opt, {})}
    records = trace(opt, surface("quadratic", 10.0, 30.0, noise=0.3), None, steps, seed=4, **hyper)
    check(opt, records, hyper, update_latex(opt, records[-1], hyper))


def test_the_reader_catches_a_wrong_sign():
    """The check itself: the AdamW line with the decay added (as it was once written) does not pass."""
    hyper = {**OPTIMIZERS["adamw"], "weight_decay": 0.1}
    records = trace("adamw", surface("quadratic"), None, 3, **hyper)
    good = update_latex("adamw", records[-1], hyper)
    check("adamw", records, hyper, good)
    with pytest.raises(AssertionError):
        check("adamw", records, hyper, good.replace(r"- \eta\lambda\theta_{t-1}", r"+ \eta\lambda\theta_{t-1}"))
