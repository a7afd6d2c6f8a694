"""Errors the pages translate: a code names the reason, params fill the message. No English here."""


class CodedError(ValueError):
    """Base of the engine's user-facing errors; each subclass lists its CODES (each has a message)."""

    CODES: tuple[str, ...] = ()

    def __init__(self, code: str, params: dict | None = None) -> None:
        if code not in self.CODES:
            raise ValueError(f"{type(self).__name__} has no code {code!r}")
        self.code = code
        self.params = params or {}
        super().__init__(code, self.params)
