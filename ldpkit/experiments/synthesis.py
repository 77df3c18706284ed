"""The synthesis chapter's comparison: every mechanism family under every notion, and calibrated to one promise.

The papers compare their mechanism with baselines under their own notion.  Here every family is
put in one stated scenario (:class:`SynthesisScenario`: ``d`` items, a sensitive set, two budgets,
FLDP's shared fraction, a prior) and

* described under every notion at once (``synthesis-guarantees``, :func:`guarantee_table`): the
  tightest parameter of one representative member of each registered family, from the accountant;
* calibrated to each promise a practitioner would write (:func:`scenario_contracts`, the rows of
  ``synthesis-comparison``, :func:`compute_comparison`): the most accurate member that keeps it
  (:func:`ldpkit.calibration.calibrate`), its exact total variance of the count estimates, its
  simulated MSE and top-``k`` precision on one real dataset and one synthetic Zipf dataset;
* swept over the domain size, the budget scale and the share of sensitive items
  (``synthesis-wins``, :func:`compute_wins`): where each family is the most accurate, by exact
  variance;
* used to restate each paper's headline comparison at one matched promise (``synthesis-papers``,
  :func:`compute_papers`), decided by :func:`~ldpkit.experiments.verdicts.exact_verdict`.

Utility is the total variance ``sum_x Var[c_hat_x]`` of the unbiased count estimates (counts
scale), exact from each mechanism's ``variance``; a simulation checks it
(:meth:`~ldpkit.base.FrequencyOracle.simulate`, aggregate level).  Calibrations are cached per
(family, promise) within a process (:func:`calibrated`).  The families are read from the family
registry at each run (:func:`comparison_families`, :func:`representatives`), and every simulation
draws from a stream named by its dataset, promise and family (``ldpkit._rng.keyed_seed``), so
that registering another family moves no existing row.

Data.  The scenario's items are ranked by frequency (item 0 the most frequent) and its prior is
the Zipf law of :data:`ZIPF_EXPONENT` on ``d`` items, the item distribution of the synthetic data
(:func:`ldpkit.datasets.synthetic.zipf_items`, ``n =`` :attr:`SynthesisScenario.n`, generator
``default_rng(DATA_SEED)``).  The real dataset is Retail, one item per user (each basket's first
item) restricted to the ``d`` most frequent such items, in frequency order; without the file it is
the labelled stand-in (:func:`ldpkit.experiments.inputs.load_auto`) and every output says so.
``scale < 1`` keeps a seeded subsample of each dataset's users (generators
``default_rng([DATA_SEED, 1])`` for Zipf and ``[DATA_SEED, 2]`` for Retail).

Synthesis chapter, :ref:`sec-synthesis-calibration` to :ref:`sec-synthesis-guide`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from .. import accountant
from .. import contracts as _contracts
from .. import datasets as _datasets
from .._rng import as_generator, as_seed_sequence, keyed_seed
from ..budgets import apportion
from ..calibration import Calibration, calibrate
from ..contracts import Contract
from ..datasets.containers import SingleItemData
from ..family import Family, families, get_family
from ..grr import GRR
from ..hadamard import FHR, HR
from ..idue import IDUE
from ..iprr import IPRR
from ..olh import OLH
from ..unary import OUE, RAPPOR
from ..urr import URR
from . import style
from .comparison import Comparison
from .config import RunConfig, subsample
from .inputs import identity, load_auto
from .registry import Experiment, ExperimentData, register
from .verdicts import UNDECIDED, Verdict, exact_verdict

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.figure
    import pandas as pd

__all__ = [
    "CONTRACT_ORDER",
    "DATA_SEED",
    "GUARANTEE_COLUMNS",
    "PAPER",
    "REAL",
    "SEED",
    "SynthesisScenario",
    "TRIALS",
    "ZIPF",
    "ZIPF_EXPONENT",
    "calibrated",
    "comparison_families",
    "compute_comparison",
    "compute_guarantees",
    "compute_papers",
    "compute_wins",
    "contract_descriptions",
    "draw_wins",
    "guarantee_table",
    "papers_table",
    "practitioners_guide",
    "representatives",
    "coinciding",
    "regimes",
    "report_bits",
    "scenario",
    "scenario_contracts",
    "wins_frame",
    "winners",
]

#: bibtex key the synthesis experiments are registered under, context-aware LDP (Acharya et al.),
#: the notion with one budget per pair of items that contains LDP, ID-LDP and MinID-LDP
PAPER = "acharya2020context"
#: seed of the data (the Zipf draw, the subsamples)
DATA_SEED = 20240523
#: run seed of the simulations (``synthesis-comparison``)
SEED = DATA_SEED + 1
#: simulated populations per (dataset, promise, family) in the book's run
TRIALS = 200
#: exponent of the scenario's Zipf law (2, as in the other papers' Zipf data)
ZIPF_EXPONENT = 2.0
#: name of the synthetic data in ``Experiment.datasets``
ZIPF = "synthetic.zipf_items"
#: the real dataset
REAL = "retail"
#: the promises of the comparison, in the order of the chapter's rows
CONTRACT_ORDER = ("LDP", "MinID-LDP", "ID-LDP (average)", "IPLDP", "ULDP", "FLDP", "LIP")
#: relative tolerance under which two exact variances are the same (one member reached two ways)
TIE_RTOL = 1e-9
#: a margin below ``1 + NEAR_TIE`` is reported as a tie in words: a 1% difference in variance is a
#: 0.5% difference in standard error, below what a deployment would notice or a modest change of
#: the counts would preserve
NEAR_TIE = 0.01
#: the guarantee table's notions, as column -> (header, what a value means)
GUARANTEE_COLUMNS: Mapping[str, str] = MappingProxyType({
    "ldp_epsilon": "LDP epsilon",
    "minid_scale": "MinID-LDP scale of E",
    "idldp_average_scale": "ID-LDP (average) scale of E",
    "context_aware_scale": "CA-LDP scale of the MinID-LDP matrix",
    "ipldp_scale": "IPLDP scale of E_S",
    "uldp_epsilon": "ULDP epsilon for S",
    "fldp_epsilon": "FLDP epsilon at alpha",
    "lip_epsilon": "LIP epsilon under the prior",
    "mip_information": "MIP: mutual information under the prior (nats)",
})


# --------------------------------------------------------------------------- the scenario
@dataclass(frozen=True)
class SynthesisScenario:
    """The chapter's common scenario: a domain, a sensitive set, two budgets, FLDP's alpha and a prior.

    Items are ranked by frequency (item 0 the most frequent).  The sensitive items are the
    ``round(sensitive_share * d)`` (at least one) *least* frequent ones: sensitive categories (a
    rare diagnosis, a rare purchase) are usually the rare ones, and a rare item is the one whose
    report singles a user out.

    Attributes
    ----------
    d
        Number of items (10: the k-ary LIP optimum, solved for at most 12 items, takes part).
    sensitive_share
        Share of the items that are sensitive.
    eps_s, eps_n
        Budget of a sensitive and of a non-sensitive item (nats).
    alpha
        FLDP's shared fraction.
    zipf_exponent
        Exponent of the Zipf law that is the prior and the synthetic data's item distribution.
    n
        Users of the synthetic data.
    k
        Top-``k`` precision's ``k``.

    Examples
    --------
    >>> sc = SynthesisScenario()
    >>> sc.sensitive.tolist(), sc.budgets.tolist()[6:], round(float(sc.prior.sum()), 12)
    ([7, 8, 9], [2.0, 1.0, 1.0, 1.0], 1.0)
    """

    d: int = 10
    sensitive_share: float = 0.3
    eps_s: float = 1.0
    eps_n: float = 2.0
    alpha: float = 0.5
    zipf_exponent: float = ZIPF_EXPONENT
    n: int = 100_000
    k: int = 3

    def __post_init__(self) -> None:
        if not (isinstance(self.d, int) and self.d >= 2):
            raise ValueError(f"d must be an integer >= 2, got {self.d!r}")
        if not 0.0 < self.sensitive_share <= 1.0:
            raise ValueError(f"sensitive_share must be in (0, 1], got {self.sensitive_share!r}")
        if not 0.0 < self.eps_s <= self.eps_n:
            raise ValueError(f"need 0 < eps_s <= eps_n, got {self.eps_s!r}, {self.eps_n!r}")
        if not 0.0 < self.alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {self.alpha!r}")
        if not 1 <= self.k < self.d:
            raise ValueError(f"k must be in [1, d), got {self.k!r}")

    @property
    def n_sensitive(self) -> int:
        """Number of sensitive items."""
        return max(1, int(round(self.sensitive_share * self.d)))

    @property
    def sensitive(self) -> np.ndarray:
        """The sensitive items, the least frequent ones."""
        return np.arange(self.d - self.n_sensitive, self.d)

    @property
    def budgets(self) -> np.ndarray:
        """``E``: ``eps_s`` on the sensitive items, ``eps_n`` on the others."""
        e = np.full(self.d, float(self.eps_n))
        e[self.sensitive] = self.eps_s
        return e

    @property
    def ipldp_budgets(self) -> np.ndarray:
        """``E_S``: ``eps_s`` on the sensitive items, ``inf`` (not protected) on the others."""
        e = np.full(self.d, math.inf)
        e[self.sensitive] = self.eps_s
        return e

    @property
    def prior(self) -> np.ndarray:
        """The Zipf law on the ``d`` items (the synthetic data's item distribution)."""
        return _datasets.synthetic.truncated_zipf_probabilities(self.d, self.zipf_exponent)

    def counts(self, n: Optional[int] = None) -> np.ndarray:
        """``n`` (default :attr:`n`) users spread over the items by the prior, rounded by largest remainder."""
        return apportion(self.n if n is None else int(n), self.prior)


def scenario(**changes: Any) -> SynthesisScenario:
    """The chapter's scenario (:class:`SynthesisScenario` defaults), with ``changes`` applied."""
    return SynthesisScenario(**changes)


def scenario_contracts(sc: Optional[SynthesisScenario] = None) -> dict[str, Contract]:
    """The promises a practitioner would write for the scenario, in :data:`CONTRACT_ORDER`.

    Examples
    --------
    >>> list(scenario_contracts())
    ['LDP', 'MinID-LDP', 'ID-LDP (average)', 'IPLDP', 'ULDP', 'FLDP', 'LIP']
    """
    sc = scenario() if sc is None else sc
    out = {
        "LDP": _contracts.ldp(sc.d, sc.eps_s),
        "MinID-LDP": _contracts.minidldp(sc.budgets),
        "ID-LDP (average)": _contracts.idldp(sc.budgets, "average"),
        "IPLDP": _contracts.ipldp(sc.ipldp_budgets),
        "ULDP": _contracts.uldp(sc.d, sc.eps_s, sc.sensitive),
        "FLDP": _contracts.fldp(sc.d, sc.eps_s, sc.alpha),
        "LIP": _contracts.lip(sc.eps_s, sc.prior),
    }
    assert tuple(c.name for c in out.values()) == CONTRACT_ORDER
    return out


def contract_descriptions(sc: Optional[SynthesisScenario] = None) -> dict[str, str]:
    """One plain line per promise of :func:`scenario_contracts`, its numbers from the scenario."""
    sc = scenario() if sc is None else sc
    es, en, k = f"{sc.eps_s:g}", f"{sc.eps_n:g}", sc.n_sensitive
    return {
        "LDP": f"every pair of items protected at {es}: the standard promise",
        "MinID-LDP": f"budget {es} for the {k} sensitive items and {en} for the others; a pair of items "
                     "is protected by the smaller of its two budgets",
        "ID-LDP (average)": "the same budgets; a pair of items is protected by the mean of its two budgets",
        "IPLDP": f"the {k} sensitive items protected at {es} against every item; the others may be "
                 "revealed",
        "ULDP": f"a report that may come from a sensitive item hides it among all items at {es}; other "
                "reports may reveal a non-sensitive item",
        "FLDP": f"budget {es} on the outputs two items share, which must be at least a fraction "
                f"{sc.alpha:g} of each item's outputs",
        "LIP": f"the posterior of every item within a factor $e^{{{es}}}$ of its prior, the prior being the "
               "item distribution",
    }


# --------------------------------------------------------------------------- calibration, cached
_CALIBRATIONS: dict[tuple[Any, ...], Calibration] = {}


def _contract_key(contract: Contract) -> tuple[Any, ...]:
    params = tuple(sorted((k, tuple(np.ravel(np.asarray(v, dtype=float)).tolist()) if not isinstance(v, str) else v)
                          for k, v in contract.params.items()))
    return (contract.name, contract.guarantee.notion, contract.d, params)


def comparison_families() -> tuple[str, ...]:
    """The families of the comparison: every registered family indexed by a budget, in display order.

    Read from the family registry (:func:`ldpkit.family.families` with ``budget=True``) at each
    call, so a family registered later takes part; item-set families have rows with the reason
    they keep no member.

    Examples
    --------
    >>> from ldpkit.experiments.synthesis import comparison_families
    >>> comparison_families()[:4]
    ('GRR', 'RAPPOR', 'OUE', 'SHE')
    """
    return tuple(f.name for f in families(budget=True))


def calibrated(family: str | Family, contract: Contract) -> Calibration:
    """:func:`~ldpkit.calibration.calibrate`, cached per (family, promise) within the process.

    ``family`` is a registered family's name (or alias) or a :class:`~ldpkit.family.Family`; the
    cache is keyed by the family's declaration, so a family registered again under the same name
    (``register_family(..., replace=True)``) is calibrated anew.  A promise the accountant cannot
    decide for the family's channel (no closed form and too large to enumerate, FHR's Hadamard
    channel at hundreds of items under MinID-LDP) is reported as a calibration without a member,
    with the accountant's message as the reason.
    """
    fam = family if isinstance(family, Family) else get_family(family)
    key = (fam, _contract_key(contract))
    if key not in _CALIBRATIONS:
        _CALIBRATIONS[key] = calibrate(fam, contract)
    return _CALIBRATIONS[key]


def _variance(mech: Any, counts: np.ndarray) -> float:
    return float(np.sum(_item_variances(mech, counts)))


def _item_variances(mech: Any, counts: np.ndarray) -> np.ndarray:
    """The exact variance of each item's count estimate (a frequency oracle's ``variance``)."""
    return np.asarray(mech.variance(np.asarray(counts)))


# --------------------------------------------------------------------------- the guarantee table
def representatives(sc: Optional[SynthesisScenario] = None) -> list[tuple[str, str, Any]]:
    """One representative member per family for the guarantee table: ``(row, registry family, member or reason)``.

    Every registered family (:func:`ldpkit.family.families`, in display order) has a row: its
    member at ``eps_s`` on the scenario's ``d`` items, :meth:`~ldpkit.family.Family.member` with
    the scenario's context (the sensitive set, the prior, and the budgets ``E`` relative to
    ``eps_s``, so that IPRR and IDUE are built at ``E``, uRR at ``eps_s`` for the sensitive set
    and the k-ary LIP optimum at ``eps_s`` under the prior).  A family without a member at the
    scenario has the reason as a string instead: one that does not apply to the scenario's
    MinID-LDP promise (item sets, two items; :attr:`~ldpkit.family.Family.applies`), or a
    general container that is not indexed by a budget (generic unary encoding, an explicit
    channel).

    Examples
    --------
    >>> rows = {row: member for row, _, member in representatives()}
    >>> rows["GRR"], rows["uRR"]
    (GRR(d=10, epsilon=1), URR(d=10, uldp_epsilon=1, d_s=3))
    """
    sc = scenario() if sc is None else sc
    promise = scenario_contracts(sc)["MinID-LDP"]
    context = {"budgets": sc.budgets / sc.eps_s, "sensitive": sc.sensitive, "prior": sc.prior}
    rows: list[tuple[str, str, Any]] = []
    for fam in families():
        if not fam.budget:
            rows.append((fam.name, fam.name, f"not indexed by a budget: {fam.description}, a general "
                                             "container whose members here are the other families' members"))
            continue
        reason = fam.applies(promise) if fam.applies is not None else None
        if reason:
            rows.append((fam.name, fam.name, f"not applicable: {reason}"))
            continue
        rows.append((fam.name, fam.name, fam.member(sc.d, sc.eps_s, **context)))
    return rows


#: the notion of each guarantee column, for the notes
_NOTION_NAMES = MappingProxyType({
    "ldp_epsilon": "LDP", "minid_scale": "MinID-LDP", "idldp_average_scale": "ID-LDP", "context_aware_scale": "CA-LDP",
    "ipldp_scale": "IPLDP", "uldp_epsilon": "ULDP", "fldp_epsilon": "FLDP", "lip_epsilon": "LIP",
    "mip_information": "MIP",
})


def _why_inf(column: str, mech: Any, sc: SynthesisScenario) -> str:
    """Why a notion's tightest value is unbounded, from the accountant's own check."""
    if column == "ipldp_scale":
        res = accountant.check_ipldp(mech, sc.ipldp_budgets, sensitive=sc.sensitive)
        if getattr(res, "n_structural_violations", 0):
            return "a non-sensitive item's report is produced by other items too"
        if getattr(res, "n_invertibility_violations", 0):
            return "a report produced by a single input reveals a sensitive item"
    if column == "uldp_epsilon":
        return "a report that can come from a sensitive item rules some item out"
    return "a report of one item is impossible under another"


def guarantee_table(sc: Optional[SynthesisScenario] = None) -> pd.DataFrame:
    """Every family's representative member (:func:`representatives`) under every notion, exactly.

    Columns: ``mechanism``, ``registry`` (the registered family), ``member`` (the member's repr),
    one column per :data:`GUARANTEE_COLUMNS` (the tightest value; ``inf`` unbounded, NaN not
    applicable) and ``note`` (why a value is unbounded or not applicable).  Values come from
    :func:`ldpkit.accountant.privacy_profile` (LDP, MinID-LDP, LIP, MIP, FLDP, context-aware with
    the MinID-LDP matrix; IPLDP and ULDP with the sensitive set) and the ID-LDP notion with the
    average rule.
    """
    import pandas as pd

    sc = scenario() if sc is None else sc
    matrix = accountant.pairwise_budgets(sc.d, budgets=sc.budgets, r="min")
    rows = []
    for name, registry_name, member in representatives(sc):
        row: dict[str, Any] = {"mechanism": name, "registry": registry_name}
        if isinstance(member, str):
            row.update({"member": None, **{c: math.nan for c in GUARANTEE_COLUMNS}, "note": member})
            rows.append(row)
            continue
        row["member"] = repr(member)
        prof = accountant.privacy_profile(member, budgets=sc.budgets, prior=sc.prior, matrix=matrix,
                                           params={"fldp": {"alpha": sc.alpha}})
        split = accountant.privacy_profile(member, budgets=sc.ipldp_budgets)
        values = {
            "ldp_epsilon": prof.ldp_epsilon,
            "minid_scale": prof.minid_scale,
            "idldp_average_scale": accountant.idldp_scale(member, sc.budgets, r="average"),
            "context_aware_scale": prof.context_aware_scale,
            "ipldp_scale": split.ipldp_scale,
            "uldp_epsilon": split.uldp_epsilon,
            "fldp_epsilon": prof.fldp_epsilon,
            "lip_epsilon": prof.lip_epsilon,
            "mip_information": prof.mip_information,
        }
        reasons: dict[str, list[str]] = {}  # reason -> the notions it applies to
        for col, value in values.items():
            if value is None:
                why = ("not defined (its reports are not the items)" if col == "ipldp_scale"
                       else "not computed (too large to enumerate, no closed form)")
                values[col] = math.nan
            elif math.isinf(float(value)):
                why = f"unbounded ({_why_inf(col, member, sc)})"
            else:
                continue
            reasons.setdefault(why, []).append(_NOTION_NAMES[col])
        row.update({c: float(v) for c, v in values.items()})
        row["note"] = "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items()) or None
        rows.append(row)
    return pd.DataFrame(rows, columns=["mechanism", "registry", "member", *GUARANTEE_COLUMNS, "note"])


def compute_guarantees(config: RunConfig) -> ExperimentData:
    """``synthesis-guarantees``: :func:`guarantee_table` of the scenario (exact, no randomness)."""
    sc = scenario()
    return ExperimentData(guarantee_table(sc), labels={},
                          meta={"scenario": sc, "columns": dict(GUARANTEE_COLUMNS)})


# --------------------------------------------------------------------------- the data of the comparison
@functools.lru_cache(maxsize=1)
def _zipf_base() -> SingleItemData:
    sc = scenario()
    data = _datasets.synthetic.zipf_items(n=sc.n, m=sc.d, alpha=sc.zipf_exponent,
                                          rng=np.random.default_rng(DATA_SEED))
    data.items.flags.writeable = False
    return data


def _real_base() -> Any:
    return load_auto(REAL, rng=DATA_SEED)


def _top_counts(single: SingleItemData, order: np.ndarray) -> np.ndarray:
    return single.counts()[order].astype(np.int64)


def comparison_data(scale: float = 1.0) -> dict[str, tuple[str, np.ndarray, Any]]:
    """Dataset name -> ``(label, counts of the d items in frequency order, data as loaded)`` at ``scale``.

    Zipf: the synthetic data, items already in frequency order of the law.  Retail: each basket's
    first item, the ``d`` most frequent such items (ranked on all users), users whose first item is
    one of them.
    """
    d = scenario().d
    zipf = _zipf_base()
    z = subsample(zipf, scale, rng=np.random.default_rng([DATA_SEED, 1]))
    real = _real_base()
    first = real.first_items()
    order = np.argsort(-first.counts(), kind="stable")[:d]
    kept = subsample(first, scale, rng=np.random.default_rng([DATA_SEED, 2]))
    return {
        ZIPF: (zipf.label, _top_counts(z, np.arange(d)), zipf),
        REAL: (real.label, _top_counts(kept, order), real),
    }


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values per row (ties by item index)."""
    order = np.argsort(-values, axis=-1, kind="stable")
    return order[..., :k]


def _simulate(mech: Any, counts: np.ndarray, k: int, trials: int, gen: np.random.Generator) -> dict[str, float]:
    """Simulated total squared error and top-``k`` precision: means over ``trials`` populations, standard errors."""
    est = mech.simulate(counts, gen, trials=trials)
    sse = np.sum((est - counts) ** 2, axis=1)
    true_top = set(_top_k(counts.astype(float), k).tolist())
    prec = np.array([len(true_top & set(row.tolist())) / k for row in _top_k(est, k)])
    sd = (lambda x: float(np.std(x, ddof=1)) / math.sqrt(trials) if trials > 1 else math.nan)
    return {"mse_sim": float(sse.mean()), "mse_se": sd(sse), "precision": float(prec.mean()),
            "precision_se": sd(prec)}


def compute_comparison(config: RunConfig) -> ExperimentData:
    """``synthesis-comparison``: every family calibrated to every promise of the scenario.

    One row per (dataset, promise, family): ``satisfiable``, ``method`` and ``parameter`` of the
    calibrated member, ``total_variance`` (exact, counts scale), ``ratio`` (to the best family of
    the row), ``best``, ``mse_sim`` and ``mse_se`` (simulated total squared error over
    ``config.repeats`` populations and its standard error), ``z`` (the simulation's distance from
    the exact value in standard errors), ``precision`` and ``precision_se`` (top-``k``), and
    ``reason`` when no member keeps the promise.  The families are :func:`comparison_families`.
    Identical members (one calibrated parameter under several promises) share one simulation.
    Seeds: the simulation of a distinct (dataset, member) draws from the child of ``config.seed``
    named ``("synthesis-comparison", dataset, promise, family)`` (``ldpkit._rng.keyed_seed``)
    of its first row in promise order, then by family name: it depends on no other family, so
    registering a family moves no existing row.
    """
    import pandas as pd

    sc = scenario()
    promises = scenario_contracts(sc)
    data = comparison_data(config.scale)
    names = comparison_families()
    cals = {(c, f): calibrated(f, promises[c]) for c in promises for f in names}
    # one simulation per distinct (dataset, member): mechanisms compare by their configuration; its stream is named
    # by the first (promise, family) holding it, in promise order and by family name (never by registration order)
    root = as_seed_sequence(config.seed)
    seeds: dict[tuple[str, Any], np.random.SeedSequence] = {}
    for name in data:
        for c in promises:
            for f in sorted(names):
                key = (name, cals[(c, f)].mechanism)
                if cals[(c, f)].satisfiable and key not in seeds:
                    seeds[key] = keyed_seed(root, "synthesis-comparison", name, c, f)
    sims: dict[tuple[str, Any], dict[str, float]] = {}
    jobs = [(name, c, f) for name in data for c in promises for f in names]
    rows = []
    for name, c, f in config.track(jobs, len(jobs), "synthesis-comparison"):
        label, counts, _ = data[name]
        cal = cals[(c, f)]
        row: dict[str, Any] = {"dataset": label, "n": int(counts.sum()), "contract": c, "family": f,
                               "satisfiable": cal.satisfiable, "method": cal.method, "parameter": cal.parameter,
                               "total_variance": math.nan, "mse_sim": math.nan, "mse_se": math.nan,
                               "precision": math.nan, "precision_se": math.nan, "reason": cal.reason}
        if cal.satisfiable:
            key = (name, cal.mechanism)
            if key not in sims:
                sims[key] = _simulate(cal.mechanism, counts, sc.k, config.repeats, as_generator(seeds[key]))
            row["total_variance"] = cal.total_variance(counts)
            row.update(sims[key])
        rows.append(row)
    frame = pd.DataFrame(rows)
    best = frame.groupby(["dataset", "contract"], sort=False)["total_variance"].transform("min")
    frame["ratio"] = frame["total_variance"] / best
    frame["best"] = frame["ratio"] <= 1.0 + TIE_RTOL
    frame["z"] = (frame["mse_sim"] - frame["total_variance"]) / frame["mse_se"]
    frame = frame[["dataset", "n", "contract", "family", "satisfiable", "method", "parameter", "total_variance",
                   "ratio", "best", "mse_sim", "mse_se", "z", "precision", "precision_se", "reason"]]
    labels = {name: data[name][0] for name in data}
    standins = tuple(name for name in data if getattr(data[name][2], "is_standin", False))
    return ExperimentData(frame, labels=labels, standins=standins,
                          meta={"scenario": sc, "n": {data[k][0]: int(data[k][1].sum()) for k in data},
                                "descriptions": contract_descriptions(sc), "k": sc.k},
                          inputs={name: identity(data[name][2]) for name in data})


def winners(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, promise) of a :func:`compute_comparison` frame: the best family, the runner-up and the margin.

    ``margin`` is the runner-up's exact total variance over the best's (``inf`` when only one
    family keeps the promise, 1 for a tie).  Families with an identical member (the same
    variance to ``TIE_RTOL``) are listed together as the best, in the frame's order (their
    variances' last bits, which depend on the machine, do not order them); so is a tie for the
    runner-up resolved.
    """
    import pandas as pd

    rows = []
    for (label, contract), grp in frame.groupby(["dataset", "contract"], sort=False):
        ok = grp[grp["satisfiable"]]
        v = ok["total_variance"].to_numpy()
        best = v <= v.min() * (1.0 + TIE_RTOL)
        tied = ok["family"][best].tolist()
        rest = ok[~best]
        w = rest["total_variance"].to_numpy()
        runner = rest[w <= w.min() * (1.0 + TIE_RTOL)].iloc[0] if len(rest) else None
        rows.append({"dataset": label, "contract": contract, "best": " = ".join(tied),
                     "best_variance": float(v.min()), "runner_up": None if runner is None else runner["family"],
                     "runner_up_variance": math.nan if runner is None else float(runner["total_variance"]),
                     "margin": math.inf if runner is None else float(runner["total_variance"]) / float(v.min()),
                     "n_satisfiable": int(len(ok))})
    return pd.DataFrame(rows)


def practitioners_guide(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The decision table from a :func:`compute_comparison` frame, for one dataset label.

    One row per promise: the best family and its calibrated parameter, ``vs_ldp`` (its exact total
    variance over the best under LDP at ``eps_s``: below 1 the promise buys accuracy, above 1 it
    costs), and the ratio to the best of the two most common baselines, GRR and OUE (NaN when
    they keep no member, ``grr_reason``/``oue_reason`` then say why).
    """
    import pandas as pd

    sub = frame[frame["dataset"] == dataset]
    if sub.empty:
        raise ValueError(f"no rows for dataset {dataset!r}; datasets: {sorted(frame['dataset'].unique())}")
    win = winners(sub).set_index("contract")
    ldp_best = float(win.loc["LDP", "best_variance"])
    rows = []
    for contract in CONTRACT_ORDER:
        grp = sub[sub["contract"] == contract].set_index("family")
        first = win.loc[contract, "best"].split(" = ")[0]
        row = {"contract": contract, "best": win.loc[contract, "best"],
               "parameter": float(grp.loc[first, "parameter"]),
               "vs_ldp": float(win.loc[contract, "best_variance"]) / ldp_best,
               "margin": float(win.loc[contract, "margin"]), "runner_up": win.loc[contract, "runner_up"]}
        for base in ("GRR", "OUE"):
            row[base.lower()] = float(grp.loc[base, "ratio"]) if bool(grp.loc[base, "satisfiable"]) else math.nan
            row[f"{base.lower()}_reason"] = grp.loc[base, "reason"]
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- where each family wins
#: domain sizes of the first panel column
D_GRID = (4, 8, 10, 12, 16, 32, 64, 128, 256)
#: sensitive budgets of the second column (``eps_n = 2 eps_s``)
EPS_GRID = tuple(float(2.0 ** (k / 2)) for k in range(-4, 5))
#: shares of sensitive items of the third column
SHARE_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: the two promises of the figure
WINS_PROMISES = ("MinID-LDP", "ULDP")
#: the families the figure draws (six, one colour each, as the book's figures require): the winners of some point
#: (ID-SS, uRR, uRAP), two common baselines (GRR, OLH) and the ID-LDP paper's mechanism (IDUE-opt0).  OUE shares
#: uRR's colour and IPRR uRAP's; OUE's line is uRAP's under MinID-LDP and IPRR's member is uRR's under ULDP.
#: :func:`left_out` says why the others are not drawn, :func:`coinciding` which drawn lines coincide (each is
#: drawn once)
WINS_DRAWN = ("GRR", "OLH", "IDUE-opt0", "ID-SS", "uRR", "uRAP")



def _thin(grid: Sequence[Any], scale: float) -> tuple[Any, ...]:
    """The grid at ``scale`` 1, else its two ends and its middle (a quick look, e.g. for the figure audit)."""
    if scale >= 1.0 or len(grid) <= 3:
        return tuple(grid)
    return (grid[0], grid[len(grid) // 2], grid[-1])


def _wins_points(scale: float = 1.0) -> list[tuple[str, float, SynthesisScenario]]:
    base = scenario()
    pts = [("d", float(d), dataclasses.replace(base, d=d)) for d in _thin(D_GRID, scale)]
    pts += [("eps_s", e, dataclasses.replace(base, eps_s=e, eps_n=2 * e)) for e in _thin(EPS_GRID, scale)]
    pts += [("share", s, dataclasses.replace(base, sensitive_share=s)) for s in _thin(SHARE_GRID, scale)]
    return pts


def wins_frame(points: Sequence[tuple[str, float, SynthesisScenario]], promises: Sequence[str] = WINS_PROMISES,
               names: Optional[Sequence[str]] = None,
               track: Callable[..., Any] = lambda it, total, desc: it) -> pd.DataFrame:
    """Exact total variance of every family calibrated to each promise at each point, and its ratio to the best.

    ``names`` defaults to :func:`comparison_families`.  ``points`` are ``(axis, x, scenario)``; the
    counts are the scenario's Zipf counts (:meth:`SynthesisScenario.counts`).  Columns: ``promise``,
    ``axis``, ``x``, ``family``, ``parameter``, ``total_variance``, ``ratio`` (NaN where no member
    keeps the promise), ``best`` (within ``TIE_RTOL`` of the smallest) and ``reason``.
    """
    import pandas as pd

    names = comparison_families() if names is None else tuple(names)
    rows = []
    jobs = [(p, a, x, sc) for p in promises for a, x, sc in points]
    for promise, axis, x, sc in track(jobs, len(jobs), "synthesis-wins"):
        contract = scenario_contracts(sc)[promise]
        counts = sc.counts()
        for f in names:
            cal = calibrated(f, contract)
            rows.append({"promise": promise, "axis": axis, "x": x, "family": f, "parameter": cal.parameter,
                         "total_variance": cal.total_variance(counts) if cal.satisfiable else math.nan,
                         "reason": cal.reason})
    frame = pd.DataFrame(rows)
    best = frame.groupby(["promise", "axis", "x"], sort=False)["total_variance"].transform("min")
    frame["ratio"] = frame["total_variance"] / best
    frame["best"] = frame["ratio"] <= 1.0 + TIE_RTOL
    return frame[["promise", "axis", "x", "family", "parameter", "total_variance", "ratio", "best", "reason"]]


def left_out(frame: pd.DataFrame) -> dict[str, str]:
    """Why each family the figure does not draw (:data:`WINS_DRAWN`) can be left out, from a :func:`wins_frame`.

    Every sentence is computed from the frame: a family whose member is a drawn family's under
    each promise (the largest relative difference of their variances), one that is never the
    best (its smallest ratio to the best family), one that keeps neither promise, one that does
    not apply.
    """
    out: dict[str, str] = {}
    for fam in dict.fromkeys(frame["family"]):
        if fam in WINS_DRAWN:
            continue
        own = frame[frame["family"] == fam]
        if own["total_variance"].isna().all():
            reasons = own["reason"].dropna().unique()
            applies = not any(str(r).startswith(("Padding", "binary")) for r in reasons)
            out[fam] = ("keeps neither promise at any point" if applies
                        else "not applicable: " + (str(reasons[0]).split(", the promise has")[0] if len(reasons)
                                                   else "no member"))
            continue
        same = []
        for promise in own["promise"].unique():
            mine = own[own["promise"] == promise].set_index(["axis", "x"])["total_variance"]
            for other in WINS_DRAWN:
                theirs = frame[(frame["family"] == other) & (frame["promise"] == promise)].set_index(
                    ["axis", "x"])["total_variance"]
                gap = float(((mine - theirs).abs() / theirs).max())
                if gap <= TIE_RTOL:
                    same.append(f"{other} under {promise} (largest relative difference {gap:.1g})")
                    break
        if len(same) == own["promise"].nunique():
            out[fam] = "the same member as " + " and as ".join(same)
            continue
        ratio = own["ratio"].dropna()
        where = " where it is solved" if len(ratio) < len(own) else ""
        if ratio.min() > 1.0 + TIE_RTOL:
            out[fam] = f"never the best family: at least {ratio.min():.6g} times the best variance{where}"
            continue
        # best somewhere: left out only if a drawn family is best at every such point (the same variance)
        won = own[own["best"]][["promise", "axis", "x"]]
        drawn_best = frame[frame["best"] & frame["family"].isin(WINS_DRAWN)]
        keys = set(map(tuple, drawn_best[["promise", "axis", "x"]].itertuples(index=False)))
        if all(tuple(k) in keys for k in won.itertuples(index=False)):
            mates = sorted(set(drawn_best.merge(won, on=["promise", "axis", "x"])["family"]))
            out[fam] = (f"the best family at {len(won)} points, at each of them together with "
                        f"{' or '.join(mates)} (the same variance)")
        else:  # pragma: no cover - the figure would then hide a winner
            out[fam] = f"the best family at {len(won)} points"
    return out


def compute_wins(config: RunConfig) -> ExperimentData:
    """``synthesis-wins``: where each family wins under MinID-LDP and ULDP as ``d``, ``eps_s`` and the share vary.

    Exact (no simulation): the total variance at the Zipf counts of ``n`` users of each point's
    scenario; the other parameters stay at the scenario's.  Below ``config.scale`` 1 each axis keeps
    its two ends and its middle point.
    """
    frame = wins_frame(_wins_points(config.scale), track=config.track)
    return ExperimentData(frame, labels={}, meta={"scenario": scenario(), "drawn": WINS_DRAWN,
                                                  "left_out": left_out(frame),
                                                  "grids": {"d": D_GRID, "eps_s": EPS_GRID, "share": SHARE_GRID}})


_AXIS_LABELS = MappingProxyType({
    "d": "domain size d (items)",
    "eps_s": r"sensitive budget $\varepsilon_s$ (nats)",
    "share": "share of sensitive items",
})


def _coinciding_panel(sel: pd.DataFrame) -> list[tuple[str, str]]:
    """``(family, drawn as)`` for each drawn family whose line in one panel is an earlier drawn family's line."""
    series = {fam: sel[sel["family"] == fam].set_index("x")["ratio"] for fam in WINS_DRAWN}
    out: list[tuple[str, str]] = []
    for i, fam in enumerate(WINS_DRAWN):
        mine = series[fam]
        if mine.empty or mine.isna().all():
            continue
        for other in WINS_DRAWN[:i]:
            theirs = series[other]
            if other in {f for f, _ in out}:  # drawn as another family already: compare with that one
                continue
            if len(theirs) == len(mine) and theirs.notna().equals(mine.notna()) and bool(
                    ((mine - theirs).abs() <= TIE_RTOL * theirs.abs()).where(mine.notna(), True).all()):
                out.append((fam, other))
                break
    return out


def coinciding(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """``(promise, family, drawn as)``: drawn families whose line coincides with an earlier drawn one in every panel of a promise.

    The figure draws such a line once (the earlier family's); a family that coincides in some panels only is
    listed with those panels' axes in the promise field (``"ULDP: d, share"``).
    """
    out = []
    for promise in WINS_PROMISES:
        found: dict[tuple[str, str], list[str]] = {}
        present = [a for a in ("d", "eps_s", "share") if (frame[frame["promise"] == promise]["axis"] == a).any()]
        for axis in present:
            sel = frame[(frame["promise"] == promise) & (frame["axis"] == axis)]
            for fam, other in _coinciding_panel(sel):
                found.setdefault((fam, other), []).append(axis)
        for (fam, other), axes in found.items():
            where = promise if len(axes) == len(present) else f"{promise}: {', '.join(axes)}"
            out.append((where, fam, other))
    return out


def report_bits(mech: Any) -> int:
    """Bits that name one report of ``mech``: ``ceil(log2)`` of the number of outputs of its channel.

    The fewest bits any encoding of the reports can use (a subset of ``k`` of ``d`` items: ``log2 C(d, k)``,
    a unary vector: ``d``); a hashed family's channel counts its seed pool, so its value is the seed index
    and the bucket.

    >>> from ldpkit import GRR, OUE
    >>> report_bits(GRR(10, 1.0)), report_bits(OUE(10, 1.0))
    (4, 10)
    """
    n = int(mech.channel().n_outputs)
    return max(1, math.ceil(math.log2(n))) if n > 1 else 0


def regimes(frame: pd.DataFrame) -> pd.DataFrame:
    """A :func:`wins_frame` read as a guide: per promise and axis, the runs of points with the same best family.

    Columns: ``promise``, ``axis``, ``lo`` and ``hi`` (the run's first and last point), ``best`` (the families
    best at every point of the run, joined by ``" = "``), ``margin_min`` and ``margin_max`` (the next family's
    variance over the best's along the run), ``runner_up`` (the next family at the run's smallest margin) and
    ``bits_min``/``bits_max`` (:func:`report_bits` of the first best family's member along the run).
    """
    import pandas as pd

    scenarios = {(axis, x): sc for axis, x, sc in _wins_points(1.0)}
    rows: list[dict[str, Any]] = []
    for (promise, axis), grp in frame.groupby(["promise", "axis"], sort=False):
        run: Optional[dict[str, Any]] = None
        for x, pt in grp.groupby("x", sort=True):
            ok = pt[pt["total_variance"].notna()]
            best = " = ".join(ok[ok["best"]]["family"])  # in the frame's (registry) order: exact ties do not order
            rest = ok[~ok["best"]].sort_values("total_variance", kind="stable")
            margin = float(rest["ratio"].iloc[0]) if len(rest) else math.inf
            runner = str(rest["family"].iloc[0]) if len(rest) else None
            sc = scenarios.get((axis, float(x)))
            first = ok[ok["best"]]["family"].iloc[0]
            bits = report_bits(calibrated(first, scenario_contracts(sc)[promise]).mechanism) if sc else -1
            if run is not None and run["best"] == best:
                run.update(hi=float(x), margin_max=max(run["margin_max"], margin),
                           bits_min=min(run["bits_min"], bits), bits_max=max(run["bits_max"], bits))
                if margin < run["margin_min"]:
                    run.update(margin_min=margin, runner_up=runner)
            else:
                run = {"promise": promise, "axis": axis, "lo": float(x), "hi": float(x), "best": best,
                       "margin_min": margin, "margin_max": margin, "runner_up": runner, "bits_min": bits,
                       "bits_max": bits}
                rows.append(run)
    return pd.DataFrame(rows)


def draw_wins(data: ExperimentData) -> matplotlib.figure.Figure:
    """One row per promise, three panels (``d``, budget, share): each drawn family's variance over the best family's."""
    from matplotlib import ticker

    frame = data.frame
    titles = {"MinID-LDP": r"MinID-LDP($E$)", "ULDP": r"ULDP($\varepsilon_s$, $S$)"}
    with style.book_rc():
        fig, rows = style.row_figure([titles[p] for p in WINS_PROMISES], 3, 2.5, legend_height=0.7, sharey=True)
        for r, promise in enumerate(WINS_PROMISES):
            for c, axis in enumerate(("d", "eps_s", "share")):
                ax = rows[r][c]
                sel = frame[(frame["promise"] == promise) & (frame["axis"] == axis)]
                hidden = {fam for fam, _ in _coinciding_panel(sel)}
                for fam in WINS_DRAWN:
                    cur = sel[(sel["family"] == fam) & sel["ratio"].notna()]
                    if not cur.empty and fam not in hidden:
                        ax.plot(cur["x"], cur["ratio"], lw=style.LW_EXACT, ms=style.MS_SMALL, label=fam,
                                **style.mechanism_style(fam))
                if axis != "share":
                    ax.set_xscale("log", base=2)
                    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
                ax.set_xlabel(_AXIS_LABELS[axis])
                style.ratio_axis(ax)
            rows[r][0].set_ylabel("variance / best")
        handles = [style.mechanism_handle(f, filled=True) for f in WINS_DRAWN]  # markers as drawn: filled
        style.legend_below(fig, handles, ncol=6)
    return fig


# --------------------------------------------------------------------------- the papers' comparisons, restated
#: prior of the binary LIP comparison (the LIP paper's Fig. 6(b))
LIP_PRIOR_1 = 0.01


@dataclass(frozen=True)
class _Restated:
    key: str
    paper: str
    comparison: str
    setting: str
    a: str
    baselines: tuple[str, ...]
    as_printed: Callable[[SynthesisScenario], dict[str, Any]]
    promise: Callable[[SynthesisScenario], Contract]
    promise_text: Callable[[SynthesisScenario], str]
    counts: Callable[[SynthesisScenario], np.ndarray]
    #: the matched promise is the paper's own (the notion its mechanism is stated under), not a restatement
    own: bool = True


def _ipldp_split_budgets(sc: SynthesisScenario) -> np.ndarray:
    """Several budgets on the sensitive items (``eps_s`` to ``eps_n``), ``inf`` on the others, as in the IPLDP paper."""
    e = np.full(sc.d, math.inf)
    e[sc.sensitive] = np.linspace(sc.eps_s, sc.eps_n, sc.n_sensitive)
    return e


#: the IPLDP paper's setting of its comparison with KRR and uRR
_IPLDP_SETTING = (r"IPRR at sensitive budgets from $\varepsilon_s$ to $\varepsilon_n$ (IPLDP); KRR (LDP) and uRR "
                  r"(ULDP) at $\varepsilon_s$")


def _at_promises(row: _Restated, *others: tuple[Callable[[SynthesisScenario], Contract],
                                                  Callable[[SynthesisScenario], str]]) -> list[_Restated]:
    """The row at its own promise, then the same comparison at each further ``(promise, text)``."""
    return [row, *(dataclasses.replace(row, promise=p, promise_text=t, own=False) for p, t in others)]


def _restated_rows() -> list[_Restated]:
    from ..lip import optimal_lip

    def binary_counts(sc: SynthesisScenario) -> np.ndarray:
        return apportion(sc.n, np.array([1 - LIP_PRIOR_1, LIP_PRIOR_1]))

    E = (lambda sc: sc.budgets)
    return [
        _Restated("idldp-fig-3", "ID-LDP", "IDUE (opt0) more accurate than RAPPOR and OUE",
                  r"RAPPOR, OUE at $\min E$ (LDP); IDUE at $E$ (MinID-LDP)", "IDUE-opt0", ("RAPPOR", "OUE"),
                  lambda sc: {"IDUE-opt0": IDUE(E(sc), model="opt0"), "RAPPOR": RAPPOR(sc.d, sc.eps_s),
                              "OUE": OUE(sc.d, sc.eps_s)},
                  lambda sc: _contracts.minidldp(E(sc)), lambda sc: r"MinID-LDP($E$)", lambda sc: sc.counts()),
        _Restated("ipldp-fig-4", "IPLDP", "IPRR more accurate than IDUE opt0, opt1 and opt2",
                  r"both at the same budgets $E$: IPRR under IPLDP, IDUE under MinID-LDP", "IPRR",
                  ("IDUE-opt0", "IDUE-opt1", "IDUE-opt2"),
                  lambda sc: {"IPRR": IPRR(E(sc)),
                              **{f"IDUE-{m}": IDUE(E(sc), model=m) for m in ("opt0", "opt1", "opt2")}},
                  lambda sc: _contracts.minidldp(E(sc)), lambda sc: r"MinID-LDP($E$)", lambda sc: sc.counts()),
        *_at_promises(
            _Restated("ipldp-fig-2", "IPLDP", "IPRR more accurate than KRR and uRR", _IPLDP_SETTING, "IPRR",
                      ("GRR", "uRR"),
                      lambda sc: {"IPRR": IPRR(_ipldp_split_budgets(sc)), "GRR": GRR(sc.d, sc.eps_s),
                                  "uRR": URR(sc.d, sc.eps_s, sc.sensitive)},
                      lambda sc: _contracts.ipldp(_ipldp_split_budgets(sc)), lambda sc: r"IPLDP with IPRR's budgets",
                      lambda sc: sc.counts()),
            (lambda sc: _contracts.uldp(sc.d, sc.eps_s, sc.sensitive), lambda sc: r"ULDP($\varepsilon_s$, $S$)")),
        *_at_promises(
            _Restated("fldp-fig-3", "FLDP", "FHR more accurate than HR, OLH and OUE",
                      r"all at the same $\varepsilon$: FHR under FLDP, the others under LDP", "FHR", ("HR", "OLH", "OUE"),
                      lambda sc: {"FHR": FHR(sc.d, sc.eps_s), "HR": HR(sc.d, sc.eps_s), "OLH": OLH(sc.d, sc.eps_s),
                                  "OUE": OUE(sc.d, sc.eps_s)},
                      lambda sc: _contracts.fldp(sc.d, sc.eps_s, sc.alpha), lambda sc: r"FLDP($\varepsilon_s$, $\alpha$)",
                      lambda sc: sc.counts()),
            (lambda sc: _contracts.ldp(sc.d, sc.eps_s), lambda sc: r"LDP($\varepsilon_s$)")),
        _Restated("lip-fig-6", "LIP", r"$\varepsilon/2$-Opt-LIP more accurate than $\varepsilon$-LDP",
                  r"two items; Opt-LIP at $\varepsilon/2$ (LIP) against randomised response at $\varepsilon$ (LDP)",
                  "LIP-binary",
                  ("GRR",),
                  lambda sc: {"LIP-binary": optimal_lip(LIP_PRIOR_1, sc.eps_s / 2).mechanism(),
                              "GRR": GRR(2, sc.eps_s)},
                  lambda sc: _contracts.lip(sc.eps_s, [1 - LIP_PRIOR_1, LIP_PRIOR_1]),
                  lambda sc: r"LIP($\varepsilon_s$, prior) on two items", binary_counts),
    ]


def _verdict_text(verdict: Verdict) -> str:
    """The verdict in words; an exact tie's difference prints as 0, not as its rounding noise.

    Two exact values equal to the verdict's relative tolerance are a tie: their difference is
    zero in exact arithmetic (the same variance reached by two formulas) and its computed value
    is rounding noise whose last digits depend on the machine.

    >>> from ldpkit.experiments.verdicts import exact_verdict
    >>> _verdict_text(exact_verdict("IPRR", 549552.4706610158, "uRR", 549552.4706610157))
    'undecided: difference 0 (exact)'
    >>> _verdict_text(exact_verdict("IPRR", 1.0, "uRR", 2.0))
    'IPRR better: difference -1 (exact)'
    """
    if verdict.method == "exact" and verdict.winner is None:
        return str(dataclasses.replace(verdict, difference=0.0))
    return str(verdict)


def papers_table(sc: Optional[SynthesisScenario] = None) -> pd.DataFrame:
    """Each paper's headline comparison at its own setting and at one matched promise, decided exactly.

    One row per (claim, matched promise, baseline): ``key`` (the claims register's id of the
    comparison), ``paper``, ``comparison``, ``setting`` (the paper's), ``promise`` (the matched
    one), ``a`` (the paper's mechanism) and ``b`` (a baseline), their exact total variances at the
    paper's setting (``printed_a``, ``printed_b``) with the verdict (``printed_winner``,
    ``printed_verdict``; ``"undecided"`` for a tie, whose difference prints as 0), the calibrated
    parameters and variances under the matched promise (``param_a``, ``param_b``, ``matched_a``,
    ``matched_b``), its verdict (``matched_winner``, ``matched_verdict``; a mechanism with no
    member loses by default, ``reason_a``/``reason_b`` say why), ``already_matched`` (the paper's
    members are the calibrated ones, to a relative 1e-9), ``changes`` (the winner differs) and
    ``own_promise`` (the matched promise is the one the paper's mechanism is stated under; False
    for a restatement under a promise the paper never made).  Counts: the scenario's Zipf counts (two items for
    the LIP row, prior ``LIP_PRIOR_1``).
    """
    import pandas as pd

    sc = scenario() if sc is None else sc
    rows = []
    for spec in _restated_rows():
        counts = spec.counts(sc)
        printed = spec.as_printed(sc)
        promise = spec.promise(sc)
        cal_a = calibrated(spec.a, promise)
        for b in spec.baselines:
            cal_b = calibrated(b, promise)
            va, vb = _variance(printed[spec.a], counts), _variance(printed[b], counts)
            pv = exact_verdict(spec.a, va, b, vb)
            ma = cal_a.total_variance(counts) if cal_a.satisfiable else math.nan
            mb = cal_b.total_variance(counts) if cal_b.satisfiable else math.nan
            if cal_a.satisfiable and cal_b.satisfiable:
                mv = exact_verdict(spec.a, ma, b, mb)
                m_winner, m_text = mv.winner or UNDECIDED, _verdict_text(mv)
            elif cal_a.satisfiable or cal_b.satisfiable:
                m_winner = spec.a if cal_a.satisfiable else b
                loser = b if cal_a.satisfiable else spec.a
                m_text = f"{m_winner} better: {loser} keeps no member of the promise"
            else:
                m_winner, m_text = UNDECIDED, "neither keeps the promise"
            same = all(
                cal.satisfiable and type(cal.mechanism) is type(printed[name])
                and np.allclose(_item_variances(cal.mechanism, counts), _item_variances(printed[name], counts),
                                rtol=1e-9, atol=0.0)
                for name, cal in ((spec.a, cal_a), (b, cal_b)))
            rows.append({
                "key": spec.key, "paper": spec.paper, "comparison": spec.comparison, "setting": spec.setting,
                "promise": spec.promise_text(sc), "a": spec.a, "b": b,
                "printed_a": va, "printed_b": vb, "printed_winner": pv.winner or UNDECIDED,
                "printed_verdict": _verdict_text(pv),
                "param_a": cal_a.parameter, "param_b": cal_b.parameter, "matched_a": ma, "matched_b": mb,
                "matched_winner": m_winner, "matched_verdict": m_text,
                "reason_a": cal_a.reason, "reason_b": cal_b.reason,
                "already_matched": bool(same), "changes": m_winner != (pv.winner or UNDECIDED),
                "own_promise": spec.own,
                "claim_holds_printed": pv.winner == spec.a, "claim_holds_matched": m_winner == spec.a,
            })
    return pd.DataFrame(rows)


def compute_papers(config: RunConfig) -> ExperimentData:
    """``synthesis-papers``: :func:`papers_table` of the scenario (exact, no randomness)."""
    sc = scenario()
    return ExperimentData(papers_table(sc), labels={}, meta={"scenario": sc, "lip_prior": LIP_PRIOR_1})


# --------------------------------------------------------------------------- registration
_EXACT = Comparison(keys=(), rtol=1e-6)

register(Experiment("synthesis-guarantees", "Every mechanism family under every notion, one scenario", PAPER,
                    "Synthesis: guarantee table", "table", (), compute_guarantees, None,
                    RunConfig(repeats=1, seed=SEED, scale=1.0), "sec-synthesis-guarantees", _EXACT))
register(Experiment("synthesis-comparison",
                    "Every family calibrated to each promise of the scenario: exact and simulated error",
                    PAPER, "Synthesis: calibrated comparison", "table", (ZIPF, REAL), compute_comparison, None,
                    RunConfig(repeats=TRIALS, seed=SEED, scale=1.0), "sec-synthesis-comparison",
                    Comparison(keys=("dataset", "contract", "family"),
                               se={"mse_sim": "mse_se", "precision": "precision_se"},
                               simulated_se=("mse_se", "precision_se"),
                               ignore={"z": "a function of the simulated values, compared through mse_sim"})))
register(Experiment("synthesis-wins", "Where each family wins as the domain, the budget and the sensitive share vary",
                    PAPER, "Synthesis: where each family wins", "figure", (), compute_wins, draw_wins,
                    RunConfig(repeats=1, seed=SEED, scale=1.0), "sec-synthesis-comparison", _EXACT))
register(Experiment("synthesis-papers", "Each paper's headline comparison restated at one matched promise", PAPER,
                    "Synthesis: the papers' comparisons restated", "table", (), compute_papers, None,
                    RunConfig(repeats=1, seed=SEED, scale=1.0), "sec-synthesis-papers", _EXACT))
