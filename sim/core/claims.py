"""What every lab's chosen sentences share: how two measured numbers compare, with a margin for "level"."""


def compared(a: float, b: float, level: float) -> str:
    """"more" (a above b by more than the factor `level`), "less" (below it by more) or "level"."""
    if a > level * b:
        return "more"
    return "less" if b > level * a else "level"
