"""The assistant lab's engines against independent references: MinHash against the exact Jaccard, LSH's banding
against its formula and a brute-force search, the cleaning steps against the corpus's injected truth, logistic
regression against torch, the Gaussian fit against numpy, the posterior against Bayes' rule by hand, the
self-supervised pairs against the language model's own, and the bandit's policy gradient against torch autograd."""
import math

import numpy as np
import pytest
import torch

from sim.dedup import jaccard, jaccard_estimate, lsh_bands, minhash, shingles
from sim.dedup.clean import STEPS, CleanConfig, clean, line_hash, quality_reasons, word_ngrams
from sim.dedup.corpus import make_corpus
from sim.dedup.minhash import EMPTY, candidate_probability, lsh_candidates, normalise
from sim.paradigms.bandit import PAYOUTS, policy_gradient, softmax, train_bandit
from sim.paradigms.generative import fit_gaussians, fit_logistic, logistic_loss_grad, two_classes
from sim.paradigms.selfsup import next_token_examples


# ---------- MinHash and LSH ----------
def random_pair(rng, size=200):
    """Two sets of integers with a Jaccard similarity anywhere from 0 to 1."""
    universe = np.arange(10 * size)
    a = set(rng.choice(universe, size, replace=False).tolist())
    keep = int(rng.integers(0, size + 1))
    b = set(list(a)[:keep]) | set(rng.choice(universe, size - keep, replace=False).tolist())
    return a, b


def test_minhash_signature_shape_type_and_determinism():
    s = shingles("The cat sees a red ball in the garden.")
    sig = minhash(s, 128, seed=3)
    assert sig.shape == (128,) and np.issubdtype(sig.dtype, np.integer)
    assert np.array_equal(sig, minhash(set(s), 128, seed=3))
    assert not np.array_equal(sig, minhash(s, 128, seed=4))
    assert np.array_equal(minhash(set(), 16, 0), np.full(16, EMPTY))
    with pytest.raises(ValueError):
        minhash(s, 0, 0)


def test_minhash_estimates_are_within_a_tenth_of_the_exact_jaccard_at_128_permutations():
    rng = np.random.default_rng(0)
    errors, signed = [], []
    for k in range(400):
        a, b = random_pair(rng)
        est = jaccard_estimate(minhash(a, 128, seed=k), minhash(b, 128, seed=k))
        errors.append(abs(est - jaccard(a, b)))
        signed.append(est - jaccard(a, b))
    errors = np.array(errors)
    # the estimate is a mean of 128 coin flips of chance J: its spread is at most 0.5/√128 = 0.044, so ±0.1 is
    # 2.3 standard deviations at worst (J = 0.5) and far more near 0 and 1
    assert np.mean(errors <= 0.1) >= 0.97
    assert errors.max() < 0.2 and abs(np.mean(signed)) < 0.01  # unbiased


def test_identical_sets_agree_everywhere_and_disjoint_ones_nearly_nowhere():
    a = set(range(300))
    assert jaccard_estimate(minhash(a, 64, 1), minhash(set(a), 64, 1)) == 1.0
    assert jaccard_estimate(minhash(a, 128, 1), minhash(set(range(1000, 1300)), 128, 1)) < 0.05
    with pytest.raises(ValueError):
        jaccard_estimate(np.zeros(3), np.zeros(4))


def test_shingles_and_jaccard_by_hand():
    assert shingles("AbC!", 5) == {"abc"} and shingles("", 5) == set()
    assert shingles("abcdef", 3) == {"abc", "bcd", "cde", "def"}
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5 and jaccard(set(), set()) == 1.0
    assert normalise("  The CAT, sat!! ") == "the cat sat"


def test_lsh_bands_give_the_s_curve_its_threshold():
    for threshold in (0.3, 0.55, 0.7, 0.9):
        b, r = lsh_bands(128, threshold)
        assert b * r <= 128
        knee = (1 / b) ** (1 / r)  # where the S-curve rises steepest (Leskovec et al., 3.4.2)
        assert abs(knee - threshold) < 0.12
    assert math.isclose(float(candidate_probability(0.5, 4, 2)), 1 - (1 - 0.25) ** 4)


def test_lsh_candidates_equal_a_brute_force_search_for_band_collisions():
    rng = np.random.default_rng(1)
    sigs = rng.integers(0, 3, (30, 8))
    found = lsh_candidates(sigs, 4, 2)
    brute = {(i, j) for i in range(30) for j in range(i + 1, 30)
             if any(np.array_equal(sigs[i, k * 2:(k + 1) * 2], sigs[j, k * 2:(k + 1) * 2]) for k in range(4))}
    assert found == brute


# ---------- the corpus and the cleaning steps ----------
def test_corpus_flags_are_the_truth_by_corpus_order():
    c = make_corpus(0)
    seen = set()
    for i, line in enumerate(c.lines):
        assert c.exact[i] == (line in seen)
        seen.add(line)
    assert not (c.exact & c.near).any() and not (c.junk & (c.exact | c.near | c.test)).any()
    assert {c.test_lines[j] for j in c.leaked} & set(c.lines)  # some test lines leaked verbatim
    assert not set(c.heldout) & set(c.lines) and not set(c.heldout) & set(c.test_lines)
    for a, b in c.near_pairs():
        assert a < b and c.sources[a] == c.sources[b] and c.lines[a] != c.lines[b]


def test_quality_rules_exact_hash_and_ngrams_by_hand():
    cfg = CleanConfig()
    assert quality_reasons("ok", cfg) == ["short"]
    assert quality_reasons("$$$ 100% FREE $$$ >>> 12345 <<<", cfg) == ["symbols"]
    assert quality_reasons("buy now buy now buy now buy now cheap", cfg) == ["repeats"]
    assert quality_reasons("The cat sees a red ball in the garden and a dog reads an old book.", cfg) == []
    assert line_hash("a b") == line_hash("a b") != line_hash("a  b")
    assert word_ngrams("A b, C d", 3) == {("a", "b", "c"), ("b", "c", "d")}


@pytest.mark.parametrize("seed", range(5))
def test_defaults_find_95_percent_of_the_near_duplicates_and_all_but_a_few_problems(seed):
    c = make_corpus(seed)
    r = clean(c)
    by = {s.name: s for s in r.steps}
    assert [s.name for s in r.steps] == list(STEPS)
    assert by["near"].recall >= 0.95 and by["near"].precision >= 0.95
    assert by["exact"].recall == by["exact"].precision == 1.0
    assert by["quality"].recall == 1.0 and by["contamination"].recall == 1.0
    assert r.left["junk"] == r.left["exact"] == r.left["test"] == 0
    # the scores are counts of the truth: recomputed here from the flags
    kept = set(r.kept)
    assert len(kept) == len(c) - sum(len(s.removed) for s in r.steps)
    assert r.left["near"] == sum(c.near[i] for i in kept)


def test_each_step_alone_and_its_settings_change_what_it_removes():
    c = make_corpus(0)
    only_near = clean(c, CleanConfig(steps=("near",))).steps[0]
    assert only_near.targets == int((c.exact | c.near).sum())  # without exact dedup it catches the exact repeats
    loose = clean(c, CleanConfig(steps=("near",), threshold=0.3)).steps[0]
    assert loose.precision < only_near.precision  # a low threshold removes distinct lines too
    short = clean(c, CleanConfig(steps=("contamination",), ngram=4)).steps[0]
    assert short.precision < 0.9  # 4-grams of a small grammar are shared by unrelated lines
    nothing = clean(c, CleanConfig(steps=()))
    assert nothing.kept == list(range(len(c))) and nothing.share_kept == 1.0


# ---------- discriminative and generative ----------
def test_logistic_gradient_equals_torch_autograd():
    X, y = two_classes(30, 1.5, 0)
    w, b = np.array([0.3, -0.7]), 0.2
    loss, gw, gb = logistic_loss_grad(w, b, X, y, 0.01)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    z = torch.tensor(X) @ tw + tb
    ref = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(y, dtype=torch.float64)) + \
        0.005 * tw @ tw
    ref.backward()
    assert math.isclose(loss, ref.item(), rel_tol=1e-12)
    assert np.allclose(gw, tw.grad.numpy(), atol=1e-12) and math.isclose(gb, tb.grad.item(), abs_tol=1e-12)


def test_logistic_regression_reaches_the_optimum_torch_finds():
    X, y = two_classes(80, 2.0, 1)
    model = fit_logistic(X, y, steps=3000)
    tw = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    Xt, yt = torch.tensor(np.column_stack([X, np.ones(len(X))])), torch.tensor(y, dtype=torch.float64)
    opt = torch.optim.LBFGS([tw], max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(Xt @ tw, yt) + 0.5e-3 * tw[:2] @ tw[:2]
        loss.backward()
        return loss
    opt.step(closure)
    assert np.allclose(np.r_[model.w, model.b], tw.detach().numpy(), atol=1e-3)
    assert np.all(np.diff(model.losses) <= 1e-12)  # gradient descent with this step never goes up here


def test_gaussian_fit_equals_numpy_mean_and_cov():
    X, y = two_classes(50, 2.0, 2)
    g = fit_gaussians(X, y)
    for k in (0, 1):
        assert np.allclose(g.means[k], np.mean(X[y == k], axis=0))
        assert np.allclose(g.covs[k], np.cov(X[y == k], rowvar=False, ddof=0))
    assert np.allclose(g.priors, [0.5, 0.5])
    s = fit_gaussians(X, y, shared=True)
    assert np.allclose(s.covs[0], s.covs[1]) and np.allclose(s.covs[0], 0.5 * (g.covs[0] + g.covs[1]))


def test_posterior_is_bayes_rule_by_hand():
    X, y = two_classes(40, 1.0, 3)
    y = y[10:]
    X = X[10:]  # unequal classes: the priors matter
    g = fit_gaussians(X, y)
    x = np.array([0.3, -0.2])

    def density(k):
        d = x - g.means[k]
        c = g.covs[k]
        det = c[0, 0] * c[1, 1] - c[0, 1] * c[1, 0]
        inv = np.array([[c[1, 1], -c[0, 1]], [-c[1, 0], c[0, 0]]]) / det
        return math.exp(-0.5 * d @ inv @ d) / (2 * math.pi * math.sqrt(det))

    joint = [g.priors[k] * density(k) for k in (0, 1)]
    assert math.isclose(g.proba(x[None])[0], joint[1] / sum(joint), rel_tol=1e-10)


def test_samples_follow_the_fitted_model():
    X, y = two_classes(200, 2.0, 4)
    g = fit_gaussians(X, y)
    S, sy = g.sample(20_000, 5)
    assert abs(np.mean(sy == 1) - g.priors[1]) < 0.02
    for k in (0, 1):
        assert np.allclose(S[sy == k].mean(axis=0), g.means[k], atol=0.05)
        assert np.allclose(np.cov(S[sy == k], rowvar=False), g.covs[k], atol=0.06)


# ---------- self-supervised pairs and the bandit ----------
def test_next_token_examples_equal_the_language_models_pairs():
    from sim.language.lm import ARTICLE_SENTENCE, next_token_pairs
    from sim.language.tokenizer import CharTokenizer

    tok = CharTokenizer.train(ARTICLE_SENTENCE)
    ref = [(tok.decode(x), tok.decode([y])) for x, y in next_token_pairs(tok, ARTICLE_SENTENCE)]
    assert next_token_examples(ARTICLE_SENTENCE) == ref
    assert next_token_examples(ARTICLE_SENTENCE)[0] == ("我", "今") and len(ref) == len(ARTICLE_SENTENCE) - 1
    assert next_token_examples("a") == [] and len(next_token_examples("x" * 100, 40)) == 40


def test_policy_gradient_equals_torch_autograd():
    theta = np.array([0.2, -0.5, 1.0])
    t = torch.tensor(theta, requires_grad=True)
    (1.7 * torch.log_softmax(t, 0)[2]).backward()
    assert np.allclose(policy_gradient(theta, 2, 1.7), t.grad.numpy(), atol=1e-12)
    assert np.isclose(softmax(theta).sum(), 1.0)


def test_the_bandit_learns_the_best_arm_from_rewards_alone():
    wins = sum(train_bandit(400, 0.2, seed).probs[-1].argmax() == int(np.argmax(PAYOUTS)) for seed in range(10))
    assert wins >= 9
    run = train_bandit(50, 0.2, 0)
    assert run.probs.shape == (51, 3) and np.allclose(run.probs[0], 1 / 3)
    assert np.allclose(run.mean_reward(5)[4], run.rewards[:5].mean())
