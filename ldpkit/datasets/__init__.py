"""Datasets: real-file parsers and loaders, labelled stand-ins, synthetic generators.

See the Datasets page of the book for provenance, licences and statistics.
"""

from __future__ import annotations

from .containers import ItemSetData, SingleItemData

__all__ = ["ItemSetData", "SingleItemData"]
