"""One named registry, shared by the kit's registries of mechanism families and of report codecs.

Entries keep their registration order; a name can be registered once; an unknown name is refused
with the close matches (or the registered names) in the message.
"""

from __future__ import annotations

import difflib
from typing import Generic, TypeVar

__all__ = ["Registry"]

_T = TypeVar("_T")


class Registry(Generic[_T]):
    """Named entries in registration order.

    Examples
    --------
    >>> from ldpkit._registry import Registry
    >>> reg = Registry("colour")
    >>> reg.add("red", 1)
    1
    >>> reg.get("rde")
    Traceback (most recent call last):
    ...
    ValueError: unknown colour 'rde'; did you mean red?
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, _T] = {}

    def add(self, name: str, entry: _T) -> _T:
        """Register ``entry`` under ``name`` (an existing name is an error); returns ``entry``."""
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Remove the entry called ``name`` (an unknown name is an error)."""
        self.get(name)
        del self._entries[name]

    def get(self, name: str) -> _T:
        """The entry called ``name``; an unknown name lists the close matches."""
        if isinstance(name, str) and name in self._entries:
            return self._entries[name]
        close = difflib.get_close_matches(str(name), list(self._entries), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; registered: {', '.join(self._entries)}"
        raise ValueError(f"unknown {self.what} {name!r}{hint}")

    def values(self) -> tuple[_T, ...]:
        """Every entry, in registration order."""
        return tuple(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries
