"""The one error of the package."""

from __future__ import annotations


class KilnError(ValueError):
    """Bytes or a request Kiln refuses.

    ``code`` is the wire code (``"EOF"``, ``"FRAME"``, ``"LIMIT"``,
    ``"TYPE"``, ``"UTF8"``, ``"TRAILING"``, ``"SCHEMA"``, ``"DEPTH"``) or the
    format's own (``"safetensors"``, ``"GGUF"``, ``"conversion"``,
    ``"unsupported"``), as ``kiln check`` and ``kiln convert`` print it;
    ``None`` for a request that cannot be met (a file that cannot be
    written, an extension that names no format). ``offset`` is the byte the
    fault is at, when it has one place; ``sentence`` the core's words;
    ``str(error)`` the command line's whole line.
    """

    def __init__(self, message: str, code: str | None = None, offset: int | None = None, sentence: str | None = None):
        super().__init__(message)
        self.code = code
        self.offset = offset
        self.sentence = sentence if sentence is not None else message
