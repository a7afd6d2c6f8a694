"""A synthetic language whose entropy per character is known exactly: the loss floor no model can beat.

The language is a probabilistic regular grammar (a finite automaton): in each state a word is drawn from that
state's list, and the word decides the next state. Because the next state follows from the word (the automaton is
"unifilar") and each state's words are prefix-free, the text can be parsed back into its words and states without
ambiguity, so

    entropy per word  h = Σ_s π(s) · H(words of s)        (π: the stationary distribution of the states)
    entropy per char  h / L̄,   L̄ = Σ_s π(s) Σ_w p(w|s) · len(w)   (mean characters per word)

in nats. A model reading characters (or BPE tokens: h per character × characters per token) cannot average a
lower cross-entropy than that on a long text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# state -> [(word, probability, next state)]; probabilities per state sum to 1
Rules = dict[str, list[tuple[str, float, str]]]

_NOUNS_EN = ((" cat", 0.3), (" dog", 0.25), (" bird", 0.2), (" girl", 0.15), (" boy", 0.1))
_ADJS_EN = ((" small", 0.4), (" red", 0.3), (" old", 0.2), (" happy", 0.1))
GRAMMAR_EN: Rules = {
    "start": [(" the", 0.6, "s_adj"), (" a", 0.4, "s_adj")],
    "s_adj": [*((w, 0.4 * p, "s_noun") for w, p in _ADJS_EN), *((w, 0.6 * p, "verb") for w, p in _NOUNS_EN)],
    "s_noun": [(w, p, "verb") for w, p in _NOUNS_EN],
    "verb": [(" sees", 0.4, "o_det"), (" likes", 0.3, "o_det"), (" chases", 0.2, "o_det"), (" sleeps", 0.1, "end")],
    "o_det": [(" the", 0.5, "o_adj"), (" a", 0.5, "o_adj")],
    "o_adj": [*((w, 0.3 * p, "o_noun") for w, p in _ADJS_EN), *((w, 0.7 * p, "end") for w, p in _NOUNS_EN)],
    "o_noun": [(w, p, "end") for w, p in _NOUNS_EN],
    "end": [(".", 0.8, "start"), (" and", 0.2, "start")],
}
_NOUNS_ZH = (("小猫", 0.3), ("小狗", 0.25), ("老师", 0.2), ("学生", 0.15), ("妈妈", 0.1))
GRAMMAR_ZH: Rules = {
    "start": [*((w, 0.7 * p, "verb") for w, p in _NOUNS_ZH), ("今天", 0.3, "subj")],
    "subj": [(w, p, "verb") for w, p in _NOUNS_ZH],
    "verb": [("喜欢", 0.4, "obj"), ("看见", 0.3, "obj"), ("追", 0.2, "obj"), ("睡觉", 0.1, "end")],
    "obj": [("一只鸟", 0.3, "end"), ("一条鱼", 0.2, "end"), ("苹果", 0.2, "end"), *((w, 0.3 * p, "end") for w, p in
                                                                                   _NOUNS_ZH)],
    "end": [("。", 0.8, "start"), ("，然后", 0.2, "start")],
}
GRAMMARS = {"en": GRAMMAR_EN, "zh": GRAMMAR_ZH}


@dataclass(frozen=True)
class Grammar:
    """A probabilistic regular grammar (Rules) with its exact entropy rate."""

    rules: Rules
    start: str = "start"

    @property
    def states(self) -> list[str]:
        return list(self.rules)

    def transition_matrix(self) -> np.ndarray:
        """(S, S) probability of moving from state i to state j (summed over the words that lead there)."""
        index = {s: i for i, s in enumerate(self.states)}
        P = np.zeros((len(index), len(index)))
        for s, words in self.rules.items():
            for _, p, nxt in words:
                P[index[s], index[nxt]] += p
        return P

    def stationary(self) -> np.ndarray:
        """π with π P = π, Σ π = 1: the share of words drawn in each state on a long text."""
        P = self.transition_matrix()
        n = len(P)
        A = np.vstack([P.T - np.eye(n), np.ones((1, n))])
        b = np.zeros(n + 1)
        b[-1] = 1.0
        return np.linalg.lstsq(A, b, rcond=None)[0]

    def entropy_per_word(self) -> float:
        """h = Σ_s π(s) H(p(·|s)) in nats."""
        pi = self.stationary()
        return float(sum(pi[i] * -sum(p * math.log(p) for _, p, _ in self.rules[s] if p > 0)
                         for i, s in enumerate(self.states)))

    def chars_per_word(self) -> float:
        pi = self.stationary()
        return float(sum(pi[i] * sum(p * len(w) for w, p, _ in self.rules[s]) for i, s in enumerate(self.states)))

    def entropy_per_char(self) -> float:
        """The floor of the mean cross-entropy per character, in nats."""
        return self.entropy_per_word() / self.chars_per_word()

    def bytes_per_char(self) -> float:
        pi = self.stationary()
        nbytes = sum(pi[i] * sum(p * len(w.encode("utf-8")) for w, p, _ in self.rules[s])
                     for i, s in enumerate(self.states))
        return float(nbytes / self.chars_per_word())

    def sample_words(self, n_words: int, seed: int) -> list[tuple[str, float]]:
        """n_words words from the start state, each with its probability p(word | state)."""
        rng = np.random.default_rng(seed)
        state, out = self.start, []
        for _ in range(n_words):
            words = self.rules[state]
            k = rng.choice(len(words), p=[p for _, p, _ in words])
            word, p, state = words[k]
            out.append((word, p))
        return out

    def sample(self, n_chars: int, seed: int) -> str:
        """n_chars characters of the language from its start state (the last word may be cut)."""
        words = self.sample_words(int(n_chars / self.chars_per_word() * 1.3) + 8, seed)
        return "".join(w for w, _ in words)[:n_chars]

    def parse(self, text: str) -> list[str] | None:
        """The words of a text that starts in the start state (None: not a text of this language)."""
        state, pos, out = self.start, 0, []
        while pos < len(text):
            for w, _, nxt in self.rules[state]:
                if text.startswith(w, pos):
                    out.append(w)
                    pos += len(w)
                    state = nxt
                    break
            else:
                return None
        return out


def grammar(lang: str) -> Grammar:
    """The built-in language of `lang` ("en" or "zh")."""
    return Grammar(GRAMMARS[lang])
