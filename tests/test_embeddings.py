"""Word embeddings (sim.language.embeddings) against independent references: the SGNS loss and gradients against
torch autograd, the cosines against torch.nn.functional.cosine_similarity, the projection against numpy's SVD, the
agreement score by hand; the live run against the live-run contract (tests/live_contract.py)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from live_contract import assert_grouping_invariant, check_two_cursors

from labs.foundations.embeddings import embed_spec
from labs.foundations.schema import SCHEMA
from sim.language.embeddings import (
    POS,
    SENSIBLE,
    EmbedConfig,
    EmbedRun,
    agreement,
    corpus,
    cosine_matrix,
    nearest,
    pca_2d,
    sgns_loss_grads,
    vocabulary,
)
from sim.language.grammar import grammar

DEFAULTS = {p.name: p.default for p in SCHEMA}


def test_sgns_loss_and_gradients_equal_torch_autograd():
    rng = np.random.default_rng(0)
    V, d, B, k = 9, 5, 7, 4
    W_in, W_out = rng.normal(size=(V, d)), rng.normal(size=(V, d))
    centres, contexts = rng.integers(0, V, B), rng.integers(0, V, B)
    negatives = rng.integers(0, V, (B, k))  # repeats included: the gradients must add up
    centres[1] = centres[0]
    loss, G_in, G_out = sgns_loss_grads(W_in, W_out, centres, contexts, negatives)
    a = torch.tensor(W_in, requires_grad=True)
    b = torch.tensor(W_out, requires_grad=True)
    v = a[torch.tensor(centres)]
    pos = (v * b[torch.tensor(contexts)]).sum(1)
    neg = torch.einsum("bkd,bd->bk", b[torch.tensor(negatives)], v)
    ref = -(F.logsigmoid(pos).sum() + F.logsigmoid(-neg).sum()) / B
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    np.testing.assert_allclose(G_in, a.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(G_out, b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_a_pair_by_hand():
    """One pair, one negative, d = 1: loss = log(1 + e^−uv) + log(1 + e^{wv}) and its derivatives."""
    W_in, W_out = np.array([[2.0], [0.0]]), np.array([[0.0], [0.5]])
    W_out = np.array([[-1.0], [0.5]])  # u_0 = −1 (the negative), u_1 = 0.5 (the context)
    loss, G_in, G_out = sgns_loss_grads(W_in, W_out, np.array([0]), np.array([1]), np.array([[0]]))
    s_o, s_n = 2.0 * 0.5, 2.0 * -1.0
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    assert loss == pytest.approx(np.log1p(np.exp(-s_o)) + np.log1p(np.exp(s_n)))
    assert G_in[0, 0] == pytest.approx((sig(s_o) - 1) * 0.5 + sig(s_n) * -1.0) and G_in[1, 0] == 0
    assert G_out[1, 0] == pytest.approx((sig(s_o) - 1) * 2.0) and G_out[0, 0] == pytest.approx(sig(s_n) * 2.0)


def test_cosine_matrix_equals_torch():
    W = np.random.default_rng(1).normal(size=(6, 4))
    ref = F.cosine_similarity(torch.tensor(W)[:, None, :], torch.tensor(W)[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(cosine_matrix(W), ref, atol=1e-12)
    W[2] = 0.0
    assert (cosine_matrix(W)[2] == 0).all()  # a zero vector: 0, not NaN


def test_pca_equals_numpy_svd_up_to_sign():
    W = np.random.default_rng(2).normal(size=(15, 6)) * np.array([5, 3, 1, 1, 0.5, 0.1])
    Y = pca_2d(W)
    X = W - W.mean(0)
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    ref = X @ Vt[:2].T
    for c in range(2):
        sign = np.sign(ref[np.argmax(np.abs(ref[:, c])), c])
        np.testing.assert_allclose(Y[:, c], sign * ref[:, c], atol=1e-9)
        assert Y[np.argmax(np.abs(Y[:, c])), c] > 0  # the signing rule
    np.testing.assert_allclose(pca_2d(W * -1.0), Y, atol=1e-9)  # flipping the vectors does not flip the picture


def test_nearest_and_agreement_by_hand():
    # four words: two nouns along x, two verbs along y; word 1 is nearer the verbs than its noun
    W = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.1, 1.0]])
    pos = np.array([0, 0, 1, 1])
    cos = cosine_matrix(W)
    assert [j for j, _ in nearest(cos, 1, 3)] == [3, 2, 0]
    assert nearest(cos, 0, 1)[0][1] == pytest.approx(0.6)
    share, chance = agreement(cos, pos)
    assert share == pytest.approx(3 / 4)  # word 0's nearest is word 1 (0.6 > 0.0995); 1's is 3; 2's, 3's: each other
    assert chance == pytest.approx(1 / 3)
    # a word alone in its part of speech is not scored
    share, chance = agreement(cosine_matrix(np.vstack([W, [[-1.0, 0.0]]])), np.array([0, 0, 1, 1, 2]))
    assert chance == pytest.approx(1 / 4)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_word_of_the_language_has_a_part_of_speech(lang):
    words, pos = vocabulary(lang)
    in_grammar = {w for rules in grammar(lang).rules.values() for w, _, _ in rules}
    assert set(words) == in_grammar == {w for ws in POS[lang].values() for w in ws}
    c = corpus(lang, 2)
    assert grammar(lang).parse("".join(c.words[i] for i in c.ids[:200])) is not None  # a text of the language
    assert len(c.pairs) == 4 * len(c.ids) - 6  # offsets ±1, ±2 at every position that has them
    assert c.noise[-1] == pytest.approx(1.0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_training_finds_the_parts_of_speech(lang):
    """From chance to SENSIBLE: the defaults' run, a few thousand steps (the benchmark times it)."""
    run = EmbedRun(EmbedConfig(lang=lang))
    first = run.frame()
    assert first["agree"] < SENSIBLE
    run.advance(5000)
    f = run.frame()
    assert f["agree"] >= SENSIBLE > 2 * f["chance"] and f["sensible_from"] is not None
    assert f["loss"][-1] < f["loss"][0]
    words = [w.strip() for w in run.data.words]
    if lang == "en":
        cos = cosine_matrix(run.W_in)
        assert words[nearest(cos, words.index("the"), 1)[0][0]] == "a"


def test_a_rate_too_large_diverges_and_stops():
    run = EmbedRun(EmbedConfig(lr=1e6))
    run.advance(200)
    assert run.stopped and run.frame()["diverged"]
    with pytest.raises(ValueError):
        EmbedRun(EmbedConfig(dim=0))


def spec(lang="en"):
    return embed_spec({**DEFAULTS, "emb_speed": 2}, lang)


def probe(run):
    return run.W_in.copy(), run.W_out.copy()


def test_advance_grouping_changes_nothing():
    assert_grouping_invariant(spec(), [(3, 17), (40, 1)], probe)


def test_two_cursors_see_what_a_private_run_shows():
    frames, probes = check_two_cursors(spec("zh"), probe)
    assert frames > 10 and probes > 5


def test_the_frame_is_compact_and_complete():
    run = spec().build()
    run.advance(7)
    f = run.frame()
    V = len(run.data.words)
    assert f["steps"] == 7 and list(f["curve"]) == list(range(1, 8)) and f["curve"].dtype == np.int32
    assert f["xy"].shape == (V, 2) and f["cos"].shape == (V, V) and f["xy"].dtype == f["cos"].dtype == np.float32
    assert 0 <= f["chance"] <= 1 and 0 <= f["agree"] <= 1
