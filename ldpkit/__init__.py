"""ldpkit: mechanisms, estimators, privacy accounting and experiments for input-discriminative LDP.

The companion book derives every formula implemented here; each docstring names the chapter
and label that holds the derivation.
"""

from __future__ import annotations

from ._rng import RNGLike, as_generator
from .base import FrequencyOracle, SupportOracle, pure_estimate, pure_variance
from .channels import Channel, ExplicitChannel, HadamardChannel, UnaryChannel
from .channel_oracle import ChannelOracle
from .accountant import Guarantee
from .reports import ItemReports, Provenance
from ._validation import ArgumentTypeError
from .grr import GRR
from .idue import IDUE, IDUEPS, IDUESolution, IDUESolverError, idue_ps, itemset_budget, oue_ps, rappor_ps, toy_example
from .olh import OLH, HashedReports
from .hadamard import FHR, HR, PairReports
from .padding import ItemSets, PaddingSampling, as_itemsets
from .unary import OUE, RAPPOR, UnaryEncoding, UnaryReports
from .urr import URR
from .lip import BinaryRR
from .iprr import IPRR
from . import accountant, budgets, claims, datasets, idue, lip, metrics, postprocess, streaming

__version__ = "0.1.0"

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
    "OUE",
    "RAPPOR",
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
    "claims",
    "metrics",
    "postprocess",
    "lip",
    "streaming",
]
