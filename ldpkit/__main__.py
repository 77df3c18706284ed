"""``python -m ldpkit``: the ``ldpkit`` command line (:mod:`ldpkit.cli`)."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
