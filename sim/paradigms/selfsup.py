"""Self-supervised labels: a text is its own set of (context, next token) examples."""
from __future__ import annotations

SHOWN = 40  # examples the paradigms section's table shows


def next_token_examples(text: str, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """(the characters up to t, the character at t + 1) for each position t but the last; at most max_pairs."""
    n = len(text) - 1 if max_pairs is None else min(len(text) - 1, max_pairs)
    return [(text[: t + 1], text[t + 1]) for t in range(n)]


def count(text: str, shown: int = SHOWN) -> tuple[str, dict]:
    """What the table of a text's examples says under it: how many examples the text gives (one per character but
    the first), and whether the table shows them all or only the first `shown` (an i18n key and its params)."""
    n = max(len(text) - 1, 0)
    return ("asst.sig.count_all" if n <= shown else "asst.sig.count_some", {"chars": len(text), "n": n, "shown": shown})
