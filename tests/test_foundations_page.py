"""AppTest: the foundations lab in both languages, every section, its buttons and widgets, URL values, bad input."""
import json
import random

import pytest

from apptools import fuzz_widget, open_lab, schema_choices, shared_lab, texts
from labs.foundations.schema import SCHEMA, SECTIONS
from sim.autograd.network import NetConfig, forward_backward
from sim.linalg.vectors import KINDS
from ui.i18n import catalogue

P = "labs/foundations/page.py"
EN, ZH = catalogue("en"), catalogue("zh")


def page(lang="en", **query):
    return open_lab(P, lang, **query)


def head(key: str, cat=EN) -> str:
    """The fixed start of a message, before its first placeholder."""
    return cat[key].split("{")[0].strip()[:30]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(P, lang, section=section)
    cat = catalogue(lang)
    assert not at.exception and not at.error
    assert at.title[0].value == cat["fnd.title"]
    if section == "vectors":  # the canvas pad, with a and b from the page's values
        (pad,) = [e for e in at.get("bidi_component") if e.proto.component_name.endswith("mlsim_vector_pad")]
        assert '"a": [3.0, 1.0]' in pad.proto.json
    elif section == "hardware":  # before the sweep: the intensities and the published table (the sweep: its own test)
        assert at.dataframe and at.button(key="fnd.hw_run")
    elif section == "embeddings":  # the live view's canvas (tests/test_foundations_embed_page.py looks inside)
        assert any(e.proto.component_name.endswith("mlsim_live_plots") for e in at.get("bidi_component"))
    else:
        assert at.get("plotly_chart")


def test_stepping_forward_then_backward_then_the_update():
    at = page()
    g = forward_backward(NetConfig())
    n = len(g.nodes)
    assert at.slider(key="fnd.k").value == 0
    for _ in range(4):
        at.button(key="fnd.bp_next").click().run()
    assert at.slider(key="fnd.k").value == 4 and at.query_params["k"] == "4"
    # the fourth node of the forward order (a product), its formula with its numbers
    node = g.nodes[3]
    a, b = node.parents
    assert node.op == "*" and f"{node.label} = {a.label} × {b.label} = {a.data:.4g} × {b.data:.4g} = {node.data:.4g}" \
        in texts(at).replace("\\", "")
    at.button(key="fnd.bp_end").click().run()
    assert at.slider(key="fnd.k").value == n
    at.button(key="fnd.bp_next").click().run()  # on to the backward pass
    assert at.query_params["phase"] == "backward" and at.slider(key="fnd.k").value == 0
    at.button(key="fnd.bp_next").click().run()
    assert "∂L/∂L = 1" in texts(at)
    at.button(key="fnd.bp_next").click().run()  # the loss's parent: ŷ − y, whose gradient is 2(ŷ − y)
    err = next(v for v in g.nodes if v.label == "ŷ−y")
    assert f"{err.grad:.4g}" in texts(at)
    at.button(key="fnd.bp_prev").click().run()
    assert at.slider(key="fnd.k").value == 1
    at.button(key="fnd.bp_end").click().run()
    at.button(key="fnd.bp_next").click().run()  # the gradient step
    assert at.query_params["phase"] == "update"
    before, after = (float(m.value) for m in at.metric[:2])
    assert before == pytest.approx(g.loss.data, rel=1e-5) and after < before
    at.button(key="fnd.bp_end").click().run()  # "start again"
    assert at.query_params["phase"] == "forward" and at.slider(key="fnd.k").value == 0


def test_the_chain_rule_at_a_chosen_node_has_its_gradient():
    g = forward_backward(NetConfig(3, 2, 3, "sigmoid", 5))
    at = page(n_in="3", layers="2", width="3", act="sigmoid", seed="5", phase="backward", k=str(len(g.nodes)))
    w = g.params[0]
    at.selectbox(key="fnd.node").select(g.index(w)).run()
    text = texts(at).replace("\\", "")  # labels reach the page through plain(): brackets escaped
    assert f"∂L/∂{w.label} = " in text and f"**{w.grad:.4g}**" in text


def test_a_large_rate_makes_the_step_overshoot():
    at = page(phase="update", lr="2", act="relu", seed="3")
    assert not at.exception
    before, after = (float(m.value) for m in at.metric[:2])
    assert (after > before) == bool([w for w in at.warning if head("fnd.bp.overshoot") in w.value])


def test_the_loop_section_measures_zero_grad_no_grad_and_eval():
    at = page(section="loop", l_lr="2", l_steps="100")
    assert head("fnd.loop.diverged") in texts(at).replace("\\", "")  # without zero_grad the run blows up
    on, off = (m.value for m in at.metric[:2])
    assert off == "0 B" and int(on.split()[0].replace(",", "")) >= 1024 * (2 + 2) * 8  # the input and the tanh output
    at.select_slider(key="fnd.l_batch").set_value(1).run()
    assert int(at.metric[0].value.split()[0].replace(",", "")) < int(on.split()[0].replace(",", ""))
    df = at.dataframe[0].value
    assert df["model.eval()"].nunique() == 1 and df["model.train()"].nunique() > 1


def test_the_depth_section_and_no_activation_chosen():
    at = page(section="depth", d_act="sigmoid", d_depth="30")
    assert not at.exception and "sigmoid" in texts(at)
    at.button_group(key="fnd.d_act").set_value([]).run()
    assert at.info and head("fnd.depth.none") in at.info[0].value


def pad_data(at) -> dict:
    (pad,) = [e for e in at.get("bidi_component") if e.proto.component_name.endswith("mlsim_vector_pad")]
    return json.loads(pad.proto.json)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_vectors_presets_and_the_zero_vector(lang):
    """The pad gets a, b, k and the page's texts in the page's language (it writes the numbers itself: checked
    against the engine in tests/test_foundations_browser.py)."""
    cat = catalogue(lang)
    at = page(lang, section="vectors", scalar="-2")
    at.button(key="fnd.vec_perpendicular").click().run()
    data = pad_data(at)
    assert at.slider(key="fnd.bx").value == -1.0 and data["a"] == [2.0, 1.0] and data["b"] == [-1.0, 2.0]
    assert data["k"] == -2.0 and data["texts"]["numbers"] == cat["fnd.vec.numbers"]
    assert data["texts"]["angle"] == cat["fnd.vec.angle"] and data["texts"]["zero"] == cat["fnd.vec.zero"]
    assert data["texts"]["kind"] == {k: cat[f"fnd.vec.kind.{k}"] for k in KINDS}
    at.button(key="fnd.vec_zero").click().run()
    assert pad_data(at)["a"] == [0.0, 0.0] and not at.exception
    assert "7.6811" in texts(at) and "√59" in texts(at)  # the article's example beside the lab's number


def test_matrices_presets_singular_and_ab_ba():
    at = page(section="matrices", mm_n="65536")
    at.button(key="fnd.mat_a_squash").click().run()
    assert head("fnd.mat.singular") in at.warning[0].value
    at.button(key="fnd.mat_article").click().run()
    assert at.slider(key="fnd.a22").value == -1.0 and head("fnd.mat.compose.differ") in texts(at)
    assert at.error and head("fnd.cost.too_large") in at.error[0].value  # 65536³: refused with a message
    assert "fnd.measure" not in [b.key for b in at.button]  # nothing to press for a refused size


def test_timing_a_small_product_shows_the_measurement_beside_published_figures():
    at = page(section="matrices", mm_n="256")
    at.button(key="fnd.measure").click().run()
    assert not at.exception
    text = texts(at)
    assert text.count("GFLOP/s") >= 2 and "A100" in "".join(str(c.proto.spec) for c in at.get("plotly_chart"))


def test_bad_url_values_get_a_notice_and_the_defaults():
    at = page(n_in="9", act="gelu", k="-3", ax="nan", section="vectors")
    assert len(at.warning) >= 4 and not at.exception
    at = page(k="150")  # in range for the schema, past the graph's end: held to its size
    assert at.slider(key="fnd.k").value == len(forward_backward(NetConfig()).nodes)


def test_fuzz_every_widget():
    rng = random.Random(25)
    choices = schema_choices("fnd", SCHEMA)
    for section in SECTIONS:
        at = page(section=section, mm_n="256")
        for i in range(6):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button", "button_group",
                                      "toggle") for w in getattr(at, kind)
                       if w.key and w.key.startswith("fnd.") and w.key not in ("fnd.section", "fnd.node", "fnd.mm_n",
                                                                                 "fnd.measure", "fnd.hw_run",
                                                                                 "fnd.emb_word")]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, choices)
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)


@pytest.mark.parametrize("ids", ["0", "none", ""])
def test_a_lookup_link_with_id_0_or_no_id_opens(ids):
    """`?section=lookup&lk_ids=0` (the one id 0) shows its lookup; an empty list gets the URL's usual message."""
    at = open_lab(P, "en", section="lookup", lk_ids=ids)
    assert not at.exception
    if ids == "0":
        assert at.session_state["_vals.fnd"]["lk_ids"] == (0,) and not at.warning
    else:
        assert any("lk_ids" in w.value or EN["fnd.lk_ids"] in w.value for w in at.warning)
