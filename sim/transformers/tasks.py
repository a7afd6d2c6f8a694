"""Tokenizers and the small sequence tasks the tiny transformer learns live (copy, reverse, sort, repeat, text)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from sim.transformers.transformer import IGNORE

TASKS = ("copy", "reverse", "sort", "repeat", "text")
LETTERS = "abcdefgh"  # the alphabet of the generated tasks: small, so a tiny model learns them in seconds
SEP = "|"  # separates a prompt from its answer
MAX_TOKENS = 32  # longest input of the attention pipeline
# inputs of the attention pipeline: the notes' three characters, their four token ids, an English sentence
PRESETS = {
    "cat": "猫追狗",
    "four": "5 12 8 3",
    "animal": "The animal didn't cross the street because it was too tired",
}
# training texts of the "text" task (short and repetitive, so a tiny model learns them in seconds)
CORPORA = {
    "en": "the cat chases the dog. the dog chases the cat. the cat sat on the mat. the dog sat on the log. ",
    "zh": "猫追狗，狗追猫。猫坐在垫子上，狗坐在木头上。小猫追小狗，小狗追小猫。",
}
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def split_tokens(text: str) -> list[str]:
    """Chinese characters one token each, other text split into words (and punctuation) by spaces."""
    tokens: list[str] = []
    for word in text.split():
        start = 0
        for i, ch in enumerate(word):  # each Han character is its own token; runs of other characters stay words
            if _HAN.match(ch):
                if word[start:i]:
                    tokens.append(word[start:i])
                tokens.append(ch)
                start = i + 1
        if word[start:]:
            tokens.append(word[start:])
    return tokens


def utf8_bytes(tokens: list[str]) -> int:
    """How many UTF-8 bytes the tokens take (a Han character 3, an ASCII letter 1): where a byte-level BPE
    tokenizer starts before it merges frequent pairs into sub-words."""
    return sum(len(tok.encode("utf-8")) for tok in tokens)


@dataclass(frozen=True)
class Vocab:
    """A character vocabulary: token id i is chars[i]."""

    chars: str

    def encode(self, text: str) -> list[int]:
        return [self.chars.index(c) for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def __len__(self) -> int:
        return len(self.chars)


@dataclass(frozen=True)
class Task:
    """A task of character sequences: training batches, prompts with answers, and a vocabulary."""

    name: str  # one of TASKS
    length: int  # letters per prompt (generated tasks); window length (text)
    text: str = ""  # the training text of the "text" task
    vocab: Vocab = Vocab(LETTERS + SEP)
    score_prompt: bool = False  # score every next token, as language-model training does, not only the answer

    @property
    def block_size(self) -> int:
        """Tokens the model sees at once: the whole example but its last token."""
        if self.name == "text":
            return self.length
        if self.name == "repeat":
            return 3 * self.length - 1
        return 2 * self.length  # prompt, separator, answer, minus the last token

    def answer(self, prompt: str) -> str:
        """The correct continuation of a prompt (generated tasks)."""
        if self.name == "copy":
            return prompt
        if self.name == "reverse":
            return prompt[::-1]
        if self.name == "sort":
            return "".join(sorted(prompt))
        if self.name == "repeat":
            return prompt * 2
        raise ValueError(f"{self.name} has no answers")

    def prompt_text(self, prompt: str) -> str:
        """What the model is given before it must answer: the letters, then the separator (not for repeat)."""
        return prompt if self.name == "repeat" else prompt + SEP

    def example(self, prompt: str) -> str:
        """A whole example: prompt then its answer."""
        return self.prompt_text(prompt) + self.answer(prompt)

    def random_prompts(self, n: int, generator: torch.Generator) -> list[str]:
        letters = torch.randint(len(LETTERS), (n, self.length), generator=generator).tolist()
        return ["".join(LETTERS[i] for i in row) for row in letters]

    def batch(self, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs (n, block_size) and next-token targets (n, block_size); only answers are scored."""
        if self.name == "text":
            ids = torch.tensor(self.vocab.encode(self.text))
            starts = torch.randint(len(ids) - self.length, (n,), generator=generator)
            seq = torch.stack([ids[s: s + self.length + 1] for s in starts.tolist()])  # (n, T + 1)
            return seq[:, :-1], seq[:, 1:]
        seq = torch.tensor([self.vocab.encode(self.example(p)) for p in self.random_prompts(n, generator)])
        x, y = seq[:, :-1], seq[:, 1:].clone()  # (n, T)
        if not self.score_prompt:  # the random prompt letters cannot be predicted: they would hide the answer's loss
            y[:, : len(self.prompt_text("a" * self.length)) - 1] = IGNORE
        return x, y

    def default_probe(self) -> str:
        """The probe the lab shows first: the text's first window, or a fixed random prompt (seed 7)."""
        if self.name == "text":
            return self.text[: self.length]
        return self.random_prompts(1, torch.Generator().manual_seed(7))[0]

    def read_probe(self, raw: str) -> tuple[str, str, bool]:
        """(the text whose attention maps are drawn, the prompt to generate from, whether `raw` was valid) for what
        the user typed; an invalid input gives the default probe's.

        Text task: up to `length` characters of the text's vocabulary. Generated tasks: `length` letters of
        LETTERS (spaces around and capitals allowed); the maps are drawn over the whole example but its last token.
        """
        if self.name == "text":
            ok = bool(raw) and len(raw) <= self.length and all(c in self.vocab.chars for c in raw)
            probe = raw if ok else self.default_probe()
            return probe, probe, ok
        prompt = raw.strip().lower()
        ok = len(prompt) == self.length and all(c in LETTERS for c in prompt)
        prompt = prompt if ok else self.default_probe()
        return self.example(prompt)[:-1], prompt, ok

    def guess_loss(self) -> float:
        """The loss of a model that guesses every answer letter uniformly: ln |LETTERS| (generated tasks)."""
        return math.log(len(LETTERS))

    def loss_floor(self) -> float | None:
        """Lowest mean loss a model that cannot see the future can reach (None: unknown, for a text)."""
        if self.name == "text":
            return None
        if not self.score_prompt:
            return 0.0
        # prompt letters 2..L are uniform guesses; the separator and the answer are certain
        return (self.length - 1) * math.log(len(LETTERS)) / self.block_size


def make_task(name: str, length: int, text: str = "", score_prompt: bool = False) -> Task:
    """A task; the text task's vocabulary is the text's own characters. ValueError("invalid:...") on bad input."""
    if name not in TASKS:
        raise ValueError("invalid:task")
    if name == "text":
        if len(text) < length + 2:
            raise ValueError("invalid:text_short")
        return Task(name, length, text, Vocab("".join(sorted(set(text)))))
    if not 2 <= length <= 12:
        raise ValueError("invalid:length")
    return Task(name, length, score_prompt=score_prompt)


def lab_task(name: str, length: int, context: int, text: str = "", score_prompt: bool = False) -> Task:
    """The lab's task: windows of `context` characters of `text` for the text task, else prompts of `length`
    letters (make_task)."""
    return make_task(name, context if name == "text" else length, text, score_prompt=score_prompt)
