"""ldpkit: mechanisms, estimators, privacy accounting and experiments for input-discriminative LDP.

The companion book derives every formula implemented here; each docstring names the chapter
and label that holds the derivation.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded on first use (see __getattr__ below); type checkers see them here
    from . import accountant, aggregation, budgets, datasets, idue, lip, metrics, postprocess, reportio, streaming
    from ._rng import RNGLike, as_generator
    from ._validation import ArgumentTypeError
    from .accountant import Guarantee
    from .base import FrequencyOracle, SupportOracle, pure_estimate, pure_variance
    from .channel_oracle import ChannelOracle
    from .channels import Channel, ExplicitChannel, HadamardChannel, UnaryChannel
    from .domain import Domain
    from .grr import GRR, KRR
    from .hadamard import FHR, HR, PairReports
    from .idue import IDUE, IDUEPS, IDUESolution, IDUESolverError, idue_ps, itemset_budget, oue_ps, rappor_ps, toy_example
    from .iprr import IPRR
    from .lip import BinaryRR
    from .olh import OLH, HashedReports
    from .padding import PaddingSampling
    from .reports import ItemReports, Provenance
    from .sets import ItemSets, as_itemsets
    from .unary import OUE, RAPPOR, SUE, UnaryEncoding, UnaryReports
    from .urr import URR

#: the version, read by ``pyproject.toml`` (``[tool.setuptools.dynamic]``), ``CITATION.cff`` and
#: ``CHANGELOG.md`` must agree with it (tests/test_publishing.py)
__version__ = "0.1.0"

#: where each public class and function is defined.  ``import ldpkit`` imports none of these
#: modules (nor numpy): a name is imported from its module on first access (PEP 562), so that
#: the command line and a script that needs one family load only what that family needs
#: (``from ldpkit import GRR`` loads GRR, the oracle base and the accountant, not IDUE's solvers).
_ORIGIN = {
    "RNGLike": "_rng", "as_generator": "_rng",
    "ArgumentTypeError": "_validation",
    "Guarantee": "accountant",
    "FrequencyOracle": "base", "SupportOracle": "base", "pure_estimate": "base", "pure_variance": "base",
    "ChannelOracle": "channel_oracle",
    "Channel": "channels", "ExplicitChannel": "channels", "HadamardChannel": "channels", "UnaryChannel": "channels",
    "Domain": "domain",
    "GRR": "grr", "KRR": "grr",
    "FHR": "hadamard", "HR": "hadamard", "PairReports": "hadamard",
    "IDUE": "idue", "IDUEPS": "idue", "IDUESolution": "idue", "IDUESolverError": "idue", "idue_ps": "idue",
    "itemset_budget": "idue", "oue_ps": "idue", "rappor_ps": "idue", "toy_example": "idue",
    "IPRR": "iprr",
    "BinaryRR": "lip",
    "OLH": "olh", "HashedReports": "olh",
    "PaddingSampling": "padding",
    "ItemReports": "reports", "Provenance": "reports",
    "ItemSets": "sets", "as_itemsets": "sets",
    "OUE": "unary", "RAPPOR": "unary", "SUE": "unary", "UnaryEncoding": "unary", "UnaryReports": "unary",
    "URR": "urr",
}

#: submodules reachable as attributes of ``ldpkit`` without importing them first: the public
#: ones of ``__all__`` and those that ``import ldpkit`` used to load.  Each is imported on first
#: attribute access (``ldpkit.datasets`` pulls in pooch, scipy's special functions and the loaders).
_LAZY_SUBMODULES = frozenset({
    "accountant", "aggregation", "budgets", "datasets", "idue", "lip", "metrics", "postprocess", "reportio",
    "streaming",
    "base", "channel_oracle", "channels", "domain", "grr", "hadamard", "iprr", "olh", "padding", "reports", "sets",
    "unary", "urr", "_rng", "_sampling", "_solvers", "_validation",
})

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
        if name in _ORIGIN:
            value = getattr(_importlib.import_module(f"{__name__}.{_ORIGIN[name]}"), name)
        elif name in _LAZY_SUBMODULES:
            value = _importlib.import_module(f"{__name__}.{name}")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # later accesses find it without this function
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _LAZY_SUBMODULES)
