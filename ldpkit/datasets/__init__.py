"""Datasets: real-file parsers and loaders, labelled stand-ins, synthetic generators.

Resolution order for a real file: the directory named by ``LDPKIT_DATA_DIR``, then the user
cache (``LDPKIT_CACHE_DIR`` or the platform cache directory), then a download from the public
source with checksum verification (never when ``LDPKIT_OFFLINE=1``).  A loader called with
``source="auto"`` (the data policy every experiment follows) falls back to a labelled stand-in,
``"Kosarak (prefix stand-in)"`` when a real prefix of the file is held and ``"<name> (stand-in)"``
otherwise, and warns with :class:`StandInWarning`; :func:`plan` says which one a load would give.
See the Datasets page of the book for provenance, licences and statistics.
"""

from __future__ import annotations

from . import containers, loaders, parsers, synthetic
from .containers import ORIGINS, DataIdentity, ItemSetData, Origin, SingleItemData, label_for
from .fetch import ChecksumMismatchError, DatasetUnavailableError, cache_dir, data_dir, is_offline
from .loaders import (
    DataPlan,
    StandInWarning,
    StatisticsMismatchError,
    available,
    describe,
    load,
    load_brown,
    load_clothing,
    load_gowalla,
    load_groceries,
    load_kosarak,
    load_kosarak_prefix,
    load_online_retail,
    load_retail,
    plan,
)
from .parsers import (
    DatasetFormatError,
    MissingReaderError,
    read_brown,
    read_clothing,
    read_fimi,
    read_gowalla_10core,
    read_gowalla_checkins,
    read_groceries,
    read_online_retail,
    sha256_of,
)
from .registry import DATASETS, DataFile, DatasetInfo
from .standins import bootstrap_itemsets, fit_zipf_exponent, standin_itemsets, standin_single

__all__ = [
    "synthetic",
    *containers.__all__,
    *loaders.__all__,
    "ChecksumMismatchError",
    "DatasetUnavailableError",
    "cache_dir",
    "data_dir",
    "is_offline",
    # every parser name but the Gowalla check-ins' container, documented with the parsers
    *(name for name in parsers.__all__ if name != "CheckIns"),
    "DATASETS",
    "DataFile",
    "DatasetInfo",
    "bootstrap_itemsets",
    "fit_zipf_exponent",
    "standin_itemsets",
    "standin_single",
]
