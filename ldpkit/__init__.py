"""ldpkit: mechanisms, estimators, privacy accounting and experiments for input-discriminative LDP.

The companion book derives every formula implemented here; each docstring names the chapter
and label that holds the derivation.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

from ._rng import RNGLike, as_generator
from .base import FrequencyOracle, SupportOracle, pure_estimate, pure_variance
from .channels import Channel, ExplicitChannel, HadamardChannel, UnaryChannel
from .channel_oracle import ChannelOracle
from .accountant import Guarantee
from .reports import ItemReports, Provenance
from ._validation import ArgumentTypeError
from .grr import GRR, KRR
from .domain import Domain
from .idue import IDUE, IDUEPS, IDUESolution, IDUESolverError, idue_ps, itemset_budget, oue_ps, rappor_ps, toy_example
from .olh import OLH, HashedReports
from .hadamard import FHR, HR, PairReports
from .sets import ItemSets, as_itemsets
from .padding import PaddingSampling
from .unary import OUE, RAPPOR, SUE, UnaryEncoding, UnaryReports
from .urr import URR
from .lip import BinaryRR
from .iprr import IPRR
from . import accountant, idue, lip, postprocess

if TYPE_CHECKING:  # loaded on first use (see __getattr__ below); type checkers see them here
    from . import aggregation, budgets, datasets, metrics, reportio, streaming

#: the version, read by ``pyproject.toml`` (``[tool.setuptools.dynamic]``), ``CITATION.cff`` and
#: ``CHANGELOG.md`` must agree with it (tests/test_publishing.py)
__version__ = "0.1.0"

#: submodules that ``import ldpkit`` does not load: ``ldpkit.datasets`` pulls in pooch, scipy's
#: special functions and the loaders; the other three are small, but nothing above needs them.
#: Each is imported on first attribute access (PEP 562).
_LAZY_SUBMODULES = frozenset({"aggregation", "budgets", "datasets", "metrics", "reportio", "streaming"})

__all__ = [
    "RNGLike",
    "as_generator",
    "ChannelOracle",
    "Guarantee",
    "ItemReports",
    "Provenance",
    "ArgumentTypeError",
    "FrequencyOracle",
    "SupportOracle",
    "pure_estimate",
    "pure_variance",
    "Channel",
    "ExplicitChannel",
    "UnaryChannel",
    "HadamardChannel",
    "GRR",
    "KRR",
    "OUE",
    "RAPPOR",
    "SUE",
    "Domain",
    "UnaryEncoding",
    "UnaryReports",
    "OLH",
    "HashedReports",
    "HR",
    "FHR",
    "PairReports",
    "URR",
    "BinaryRR",
    "IPRR",
    "IDUE",
    "IDUEPS",
    "IDUESolution",
    "IDUESolverError",
    "idue_ps",
    "itemset_budget",
    "oue_ps",
    "rappor_ps",
    "toy_example",
    "PaddingSampling",
    "ItemSets",
    "as_itemsets",
    "accountant",
    "budgets",
    "datasets",
    "idue",
    "metrics",
    "postprocess",
    "lip",
    "streaming",
    "reportio",
    "aggregation",
]


if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt ``ldpkit.X`` stays an error

    def __getattr__(name: str) -> object:
        if name in _LAZY_SUBMODULES:
            return _importlib.import_module(f"{__name__}.{name}")  # also binds it in this namespace
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
