"""Self-supervised labels: a text is its own set of (context, next token) examples."""
from __future__ import annotations


def next_token_examples(text: str, max_pairs: int = 40) -> list[tuple[str, str]]:
    """(the characters up to t, the character at t + 1) for each position t but the last; at most max_pairs."""
    return [(text[: t + 1], text[t + 1]) for t in range(min(len(text) - 1, max_pairs))]
