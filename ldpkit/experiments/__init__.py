"""Experiment protocols of the papers, as functions the book chapters call.

Each submodule reruns one paper's evaluation section with the aggregate-level simulators of the
mechanisms, so the chapters contain plotting and assertions only.  Results are returned as
``pandas`` data frames (one row per setting and repeat) so that the book can both plot and check
them.
"""

from __future__ import annotations

from . import idldp

__all__ = ["idldp"]
