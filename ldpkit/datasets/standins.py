"""Synthetic stand-ins for real datasets that are not available, calibrated to their statistics.

A stand-in has exactly the published number of users ``n`` and items ``m`` of the dataset it
replaces, set sizes with the published mean (and maximum), and Zipf-distributed item popularity:

* set sizes follow a shifted geometric law (or ``min_size`` + Poisson) truncated to
  ``min_size..max_size``, whose parameter is solved numerically so that the *truncated* law has
  exactly the target mean;
* item ``perm[r-1]`` (a uniformly random permutation of the ``m`` items) has popularity weight
  ``r^(-s)``; each user draws its items from these weights *without replacement* (successive
  sampling: duplicates of an i.i.d. draw are redrawn until the set is distinct, which gives the
  same law as drawing one item at a time from the remaining ones).

The exponent ``s`` of each dataset is fitted by :func:`~ldpkit.datasets.fit_zipf_exponent` (least squares of log
count on log rank over ranks 1..1000) on the real data where we hold it, and pinned below.
Every result has ``origin="stand-in"`` (``is_standin=True``), the real dataset's ``name`` (so its
``label`` ends in ``"(stand-in)"``), a ``source`` naming the generator and its parameters, and notes
saying which statistics it matches; :func:`~ldpkit.datasets.bootstrap_itemsets`, which resamples real users, gives
``origin="prefix"`` instead.  Documented on the Datasets page of the book.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Union, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from .._rng import RNGLike, as_generator
from .._validation import check_counts, check_positive_int, check_positive_real
from ..sets import ItemSets
from .containers import ItemSetData, SingleItemData
from .registry import DATASETS, DatasetInfo

__all__ = [
    "KOSARAK_ZIPF_EXPONENT",
    "bootstrap_itemsets",
    "ZIPF_EXPONENTS",
    "StandInSource",
    "StandInSpec",
    "fit_zipf_exponent",
    "size_distribution",
    "spec_for",
    "standin_itemsets",
    "standin_single",
]

# ---------------------------------------------------------------------------------------------
# pinned Zipf exponents: fit_zipf_exponent(counts, ranks=(1, 1000)) on our pinned copies, where
# counts[i] = number of users holding item i (for Brown: occurrences of each word).  Recomputed by
# tests/test_datasets_loaders.py when LDPKIT_DATA_DIR is set.

#: Kosarak's exponent, fitted on the 36,682 complete sessions of kosarak-prefix.dat (the full file is not
#: held); used for stand-ins of both the full file and the prefix.
KOSARAK_ZIPF_EXPONENT = 0.7565481214780405

#: exponent per stand-in variant (dataset key, or key plus variant suffix)
ZIPF_EXPONENTS: Mapping[str, float] = {
    "retail": 0.639144126116399,  # retail.dat, 16,470 items
    "kosarak": KOSARAK_ZIPF_EXPONENT,
    "kosarak-prefix": KOSARAK_ZIPF_EXPONENT,
    "clothing": 1.0,  # NOT fitted: no data held and no published value; an assumption
    "gowalla-10core": 0.5136379478194513,  # union of train/valid/test, 40,981 locations
    "brown": 1.030321002962631,  # word frequencies, 56,057 words
    "brown-lowercase": 1.0339510811111428,  # lowercased words, 49,815 words
    "online-retail-invoice-clean": 0.5066814614989372,  # invoices holding each stock code
    "online-retail-invoice-raw": 0.5071258825387538,
    "online-retail-row-clean": 0.5067914766049072,  # invoice lines per stock code
    "online-retail-row-raw": 0.5073081364785913,
    "groceries": 1.3930806597308831,  # only 169 items, so ranks 1..169
}

_SIZE_LAWS = ("geometric", "poisson")

_HEAD_CAVEAT = (
    "Not calibrated: the head of the popularity curve. A single power law fitted to the slope of ranks "
    "1-1000 can give the most popular items a share several times larger or smaller than in the real data."
)


def fit_zipf_exponent(counts: ArrayLike, ranks: tuple[int, int] = (1, 1000)) -> float:
    """Zipf exponent ``s`` of a rank-frequency curve by log-log least squares.

    Sorts the positive ``counts`` in decreasing order, keeps ranks ``ranks[0]..ranks[1]``
    (clipped to the number of positive counts) and fits ``log count = c - s log rank``.
    Datasets chapter, :ref:`sec-datasets-standins`.

    Parameters
    ----------
    counts
        Non-negative integer counts, one per item (zeros are ignored).
    ranks
        Inclusive range of ranks used, 1-based.

    Returns
    -------
    float
        The fitted ``s`` (minus the slope).
    """
    arr = check_counts(counts)
    if not (isinstance(ranks, tuple) and len(ranks) == 2):
        raise ValueError(f"ranks must be a pair (first, last), got {ranks!r}")
    lo = check_positive_int(ranks[0], "ranks[0]")
    hi = check_positive_int(ranks[1], "ranks[1]", minimum=lo + 1)
    c = np.sort(arr[arr > 0])[::-1]
    hi = min(hi, c.size)
    if hi - lo + 1 < 2:
        raise ValueError(f"counts has {c.size} positive entries: at least {lo + 1} are needed for ranks {ranks!r}")
    r = np.arange(lo, hi + 1, dtype=float)
    slope = np.polyfit(np.log(r), np.log(c[lo - 1:hi].astype(float)), 1)[0]
    return float(-slope)


@dataclass(frozen=True)
class StandInSpec:
    """Parameters of a stand-in.

    Attributes
    ----------
    name
        Name of the real dataset it replaces.
    n, m
        Users and items (both matched exactly).
    mean_size
        Target mean set size (ignored for single-item stand-ins).
    max_size, min_size
        Support of the set sizes (``max_size=None`` means ``m``).
    zipf_s
        Zipf exponent of item popularity.
    size_law
        ``"geometric"`` (shifted geometric) or ``"poisson"`` (``min_size`` + Poisson).
    kind
        ``"itemsets"`` or ``"single"``.
    basis
        Where the numbers come from (for the notes).
    zipf_basis
        Where ``zipf_s`` comes from (fitted on what, or assumed).

    Examples
    --------
    >>> from ldpkit.datasets import standin_itemsets
    >>> from ldpkit.datasets.standins import StandInSpec
    >>> data = standin_itemsets(StandInSpec("Toy", n=200, m=30, mean_size=3.0, zipf_s=1.0), rng=0)
    >>> data.n, data.m, data.is_standin, data.label
    (200, 30, True, 'Toy (stand-in)')
    """

    name: str
    n: int
    m: int
    mean_size: float = 1.0
    max_size: int | None = None
    min_size: int = 1
    zipf_s: float = 1.0
    size_law: Literal["geometric", "poisson"] = "geometric"
    kind: Literal["itemsets", "single"] = "itemsets"
    basis: str = ""
    zipf_basis: str = ""

    def __post_init__(self) -> None:
        check_positive_int(self.n, "n")
        check_positive_int(self.m, "m")
        check_positive_int(self.min_size, "min_size")
        if self.kind not in ("itemsets", "single"):
            raise ValueError(f"kind must be 'itemsets' or 'single', got {self.kind!r}")
        if self.size_law not in _SIZE_LAWS:
            raise ValueError(f"size_law must be one of {_SIZE_LAWS}, got {self.size_law!r}")
        if not (isinstance(self.zipf_s, (int, float)) and math.isfinite(self.zipf_s) and self.zipf_s >= 0):
            raise ValueError(f"zipf_s must be a finite non-negative number, got {self.zipf_s!r}")
        if self.kind == "itemsets":
            hi = self.m if self.max_size is None else check_positive_int(self.max_size, "max_size")
            if hi > self.m:
                raise ValueError(f"max_size={hi} exceeds the number of items m={self.m}")
            if hi < self.min_size:
                raise ValueError(f"max_size={hi} is below min_size={self.min_size}")
            mean = check_positive_real(self.mean_size, "mean_size")
            if not (self.min_size < mean < (self.min_size + hi) / 2 or (hi == self.min_size and mean == hi)):
                raise ValueError(
                    f"mean_size={mean} must lie strictly between min_size={self.min_size} and "
                    f"(min_size + max_size)/2={(self.min_size + hi) / 2}"
                )

    @property
    def upper(self) -> int:
        """Largest allowed set size."""
        return self.m if self.max_size is None else int(self.max_size)


#: what the stand-in generators accept (a registry key, its :class:`~ldpkit.datasets.registry.DatasetInfo`,
#: a :class:`StandInSpec`, or a mapping of :class:`StandInSpec` fields)
StandInSource = Union[str, DatasetInfo, StandInSpec, Mapping[str, Any]]


# ---------------------------------------------------------------------------------------------
# set sizes


def _law_pmf(spec: StandInSpec, theta: float) -> np.ndarray:
    j = np.arange(spec.upper - spec.min_size + 1, dtype=float)
    if spec.size_law == "geometric":
        logw = j * math.log(theta)  # theta = ratio q
    else:
        logw = j * math.log(theta) - special.gammaln(j + 1)  # theta = Poisson rate
    w = np.exp(logw - logw.max())
    return cast("np.ndarray", w / w.sum())


def size_distribution(spec: StandInSpec) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the stand-in's set sizes: ``(support, pmf)``.

    The law's parameter is solved so that its mean equals ``spec.mean_size`` (after truncation).
    Tests use the returned pmf to derive tolerances (``sd = sqrt(sum pmf (k - mean)^2)``).
    Datasets chapter, :ref:`sec-datasets-standins`.
    """
    support = np.arange(spec.min_size, spec.upper + 1)
    if spec.upper == spec.min_size:
        return support, np.ones(1)
    target = float(spec.mean_size)

    def gap(theta: float) -> float:
        return float(_law_pmf(spec, theta) @ support) - target

    if spec.size_law == "geometric":
        lo, hi = 1e-12, 1.0 - 1e-12
    else:
        lo, hi = 1e-12, 2.0 * (target - spec.min_size) + 50.0
    theta = optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=1e-14, maxiter=500)
    return support, _law_pmf(spec, theta)


def _sample_sizes(spec: StandInSpec, gen: np.random.Generator) -> np.ndarray:
    support, pmf = size_distribution(spec)
    cdf = np.cumsum(pmf)
    idx = np.searchsorted(cdf, gen.random(spec.n) * cdf[-1], side="right")
    return cast("np.ndarray", support[np.minimum(idx, support.size - 1)].astype(np.int64))


# ---------------------------------------------------------------------------------------------
# items


def _zipf_cdf(m: int, s: float) -> np.ndarray:
    w = np.arange(1, m + 1, dtype=float) ** (-s)
    cdf = np.cumsum(w)
    return cast("np.ndarray", cdf / cdf[-1])


def _draw(cdf: np.ndarray, perm: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
    ranks = np.searchsorted(cdf, gen.random(size), side="right")
    return perm[np.minimum(ranks, cdf.size - 1)]


def _slots_of(users: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """All entry positions of the given users, concatenated."""
    starts = offsets[users]
    lens = offsets[users + 1] - starts
    total = int(lens.sum())
    shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return shift + np.arange(total, dtype=np.int64)


def _duplicate_slots(slots: np.ndarray, items: np.ndarray, owner: np.ndarray, m: int) -> np.ndarray:
    key = owner[slots] * np.int64(m) + items[slots]
    order = np.argsort(key, kind="stable")
    sk = key[order]
    return cast("np.ndarray", slots[order[1:][sk[1:] == sk[:-1]]])


def _distinct_sets(
    sizes: np.ndarray, m: int, s: float, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    perm = gen.permutation(m).astype(np.int64)
    cdf = _zipf_cdf(m, s)
    items = _draw(cdf, perm, int(offsets[-1]), gen)
    owner = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    dup = _duplicate_slots(np.arange(items.size, dtype=np.int64), items, owner, m)
    rounds = 0
    while dup.size and rounds < 50:
        items[dup] = _draw(cdf, perm, dup.size, gen)
        affected = np.unique(owner[dup])
        dup = _duplicate_slots(_slots_of(affected, offsets), items, owner, m)
        rounds += 1
    if dup.size:  # very large sets relative to m: draw those users afresh, one item at a time
        p = np.diff(np.concatenate(([0.0], cdf)))
        for u in np.unique(owner[dup]):
            a, b = offsets[u], offsets[u + 1]
            items[a:b] = perm[gen.choice(m, size=int(b - a), replace=False, p=p)]
    return items, offsets, perm


# ---------------------------------------------------------------------------------------------
# specs from the registry


def _variant(
    key: str, *, lowercase: bool = False, clean: bool = True, unit: Literal["invoice", "row"] = "invoice"
) -> str:
    if key == "brown":
        return "brown-lowercase" if lowercase else "brown"
    if key == "online-retail":
        return f"online-retail-{unit}-{'clean' if clean else 'raw'}"
    return key


def spec_for(
    key: str | DatasetInfo, *, lowercase: bool = False, clean: bool = True, unit: Literal["invoice", "row"] = "invoice"
) -> StandInSpec:
    """The stand-in parameters of a registry dataset (and loader options).

    Parameters
    ----------
    key
        Registry key or :class:`~ldpkit.datasets.registry.DatasetInfo`.
    lowercase
        Brown only: lowercased vocabulary (49,815 words instead of 56,057).
    clean, unit
        Online Retail only: as for :func:`~ldpkit.datasets.load_online_retail`.
    """
    info = key if isinstance(key, DatasetInfo) else DATASETS.get(key)
    if info is None:
        raise ValueError(f"unknown dataset key {key!r}; known: {sorted(DATASETS)}")
    if unit not in ("invoice", "row"):
        raise ValueError(f"unit must be 'invoice' or 'row', got {unit!r}")
    pub, cnt = info.published, info.counted
    variant = _variant(info.key, lowercase=lowercase, clean=clean, unit=unit)
    s = ZIPF_EXPONENTS[variant]
    if info.key == "clothing":
        zipf_basis = "assumed s = 1.0 (not published, no data held to fit it)"
    elif info.key.startswith("kosarak"):
        zipf_basis = f"s = {s:.4f} fitted on the Kosarak prefix (ranks 1-1000, log-log least squares)"
    else:
        zipf_basis = f"s = {s:.4f} fitted on the real data (ranks 1-1000, log-log least squares)"
    if info.key == "brown":
        m = pub["m_lowercase"] if lowercase else pub["m"]
        return StandInSpec(info.name, n=pub["n"], m=m, kind="single", zipf_s=s,
                           basis=f"n = {pub['n']:,} tokens, m = {m:,} {'lowercased ' if lowercase else ''}words",
                           zipf_basis=zipf_basis)
    if info.key == "online-retail":
        m = pub["clean_items"] if clean else pub["stock_codes"]
        tag = "clean" if clean else "uncleaned"
        if unit == "row":
            n = cnt["clean_rows"] if clean else pub["rows"]
            return StandInSpec(info.name, n=n, m=m, kind="single", zipf_s=s,
                               basis=f"n = {n:,} {tag} invoice lines, m = {m:,} stock codes", zipf_basis=zipf_basis)
        n = pub["clean_invoices"] if clean else pub["invoices"]
        records = cnt["clean_records"] if clean else cnt["records"]
        max_size = cnt["clean_max_size"] if clean else cnt["max_size"]
        return StandInSpec(info.name, n=n, m=m, mean_size=records / n, max_size=max_size, zipf_s=s,
                           basis=f"n = {n:,} {tag} invoices, m = {m:,} stock codes, mean size {records / n:.3f} "
                                 f"({records:,} records), max size {max_size:,}",
                           zipf_basis=zipf_basis)
    n, m, records = pub["n"], pub["m"], pub["records"]
    max_size = cnt.get("max_size", pub.get("max_size"))
    min_size = int(cnt.get("min_size", 1))
    mean = records / n
    basis = f"n = {n:,}, m = {m:,}, mean size {mean:.3f} ({records:,} records)"
    if max_size is not None:
        basis += f", max size {max_size:,}"
    if min_size > 1:
        basis += f", min size {min_size}"
    return StandInSpec(info.name, n=n, m=m, mean_size=mean, max_size=max_size, min_size=min_size, zipf_s=s,
                       basis=basis + f" ({pub.get('source', 'published')})", zipf_basis=zipf_basis)


def _as_spec(info_or_params: StandInSource, kind: Literal["itemsets", "single"]) -> StandInSpec:
    if isinstance(info_or_params, StandInSpec):
        spec = info_or_params
    elif isinstance(info_or_params, (str, DatasetInfo)):
        spec = spec_for(info_or_params)
    elif isinstance(info_or_params, Mapping):
        spec = StandInSpec(**{"kind": kind, **info_or_params})
    else:
        raise ValueError(
            f"info_or_params must be a dataset key, DatasetInfo, StandInSpec or mapping, got {info_or_params!r}"
        )
    return spec if spec.kind == kind else replace(spec, kind=kind)


def _generator(rng: RNGLike) -> tuple[np.random.Generator, str]:
    """The generator for ``rng`` and a description that lets a reader replay it when possible."""
    if rng is None:
        seq = np.random.SeedSequence()
        return as_generator(seq), f"SeedSequence entropy {seq.entropy}"
    gen = as_generator(rng)
    if isinstance(rng, np.random.SeedSequence):
        return gen, f"SeedSequence entropy {rng.entropy}"
    if isinstance(rng, np.random.Generator):
        return gen, "caller-supplied generator"
    return gen, f"seed {int(rng)}"


def standin_itemsets(info_or_params: StandInSource, rng: RNGLike = 0) -> ItemSetData:
    """Synthetic item-set data with a real dataset's ``n``, ``m``, mean set size and Zipf popularity.

    Datasets chapter, :ref:`sec-datasets-standins`.

    Parameters
    ----------
    info_or_params
        A registry key, a :class:`~ldpkit.datasets.DatasetInfo`, a
        :class:`~ldpkit.datasets.standins.StandInSpec`, or a mapping of its fields.
    rng
        Seed or generator (see :func:`ldpkit.as_generator`); the default ``0`` makes the stand-in
        the same dataset on every call.

    Returns
    -------
    ItemSetData
        ``is_standin=True``; ``n`` and ``m`` exactly as specified; the sizes' mean equals
        ``mean_size`` in expectation.
    """
    spec = _as_spec(info_or_params, "itemsets")
    gen, seed_text = _generator(rng)
    sizes = _sample_sizes(spec, gen)
    items, offsets, _ = _distinct_sets(sizes, spec.m, spec.zipf_s, gen)
    source = (
        f"synthetic stand-in (ldpkit.datasets.standins.standin_itemsets): n={spec.n}, m={spec.m}, set sizes "
        f"{spec.min_size} + {'geometric' if spec.size_law == 'geometric' else 'Poisson'} truncated to "
        f"{spec.min_size}..{spec.upper} with mean {spec.mean_size:.4f}, item weights rank^-{spec.zipf_s:.4f} over a "
        f"random permutation, drawn without replacement; {seed_text}"
    )
    notes = (
        f"STAND-IN: synthetic data generated to resemble {spec.name}; it is not the real dataset.",
        f"Matches exactly: n = {spec.n:,} users and m = {spec.m:,} items (the domain; an item the generator "
        f"never draws has count 0). Matches in expectation: mean set size {spec.mean_size:.4f}"
        + (f", sizes capped at {spec.upper:,}" if spec.max_size is not None else "") + ".",
        f"Calibrated to: {spec.basis}." if spec.basis else "Calibrated to the given parameters.",
        f"Item popularity: {spec.zipf_basis or f's = {spec.zipf_s}'}.",
        _HEAD_CAVEAT,
    )
    sets = ItemSets(items, offsets, spec.m)
    return ItemSetData(sets=sets, vocabulary=np.arange(spec.m, dtype=np.int64), name=spec.name, source=source,
                       is_standin=True, notes=notes)


def standin_single(info_or_params: StandInSource, rng: RNGLike = 0) -> SingleItemData:
    """Synthetic single-item data: ``n`` users each holding one Zipf-distributed item of ``m``.

    Datasets chapter, :ref:`sec-datasets-standins`.  Parameters as in :func:`standin_itemsets` (set-size
    fields are ignored).
    """
    spec = _as_spec(info_or_params, "single")
    gen, seed_text = _generator(rng)
    perm = gen.permutation(spec.m).astype(np.int64)
    items = _draw(_zipf_cdf(spec.m, spec.zipf_s), perm, spec.n, gen)
    source = (
        f"synthetic stand-in (ldpkit.datasets.standins.standin_single): n={spec.n}, m={spec.m}, item weights "
        f"rank^-{spec.zipf_s:.4f} over a random permutation; {seed_text}"
    )
    notes = (
        f"STAND-IN: synthetic data generated to resemble {spec.name}; it is not the real dataset.",
        (f"Matches exactly: n = {spec.n:,} users and m = {spec.m:,} items (the domain; an item never drawn has "
         "count 0)."),
        f"Calibrated to: {spec.basis}." if spec.basis else "Calibrated to the given parameters.",
        f"Item popularity: {spec.zipf_basis or f's = {spec.zipf_s}'}.",
        _HEAD_CAVEAT,
    )
    return SingleItemData(items=items, vocabulary=np.arange(spec.m, dtype=np.int64), name=spec.name, source=source,
                          is_standin=True, notes=notes)


def bootstrap_itemsets(sample: ItemSetData, n: int, m: int, rng: RNGLike = 0, name: str | None = None) -> ItemSetData:
    """Stand-in made of ``n`` users resampled with replacement from a real sample of users.

    Used for full Kosarak, of which only a prefix (the first 36,682 sessions) is held: the
    stand-in keeps the real sessions (their sizes, co-occurrences and the head of the popularity
    curve, which a fitted power law gets wrong) and the published ``n`` and ``m``; the
    ``m - sample.m`` items that the sample never shows get count 0.  What it cannot reproduce is
    the tail of items absent from the sample, and the fact that distinct real users are distinct
    (each sampled session appears about ``n / len(sample)`` times).  The result has
    ``origin="prefix"`` (label ``"<name> (prefix stand-in)"``) and the sample's ``files``.
    Datasets chapter, :ref:`sec-datasets-standins`.
    """
    if not isinstance(sample, ItemSetData):
        raise ValueError(f"sample must be an ItemSetData, got {type(sample).__name__}")
    n = check_positive_int(n, "n")
    m = check_positive_int(m, "m")
    if m < sample.m:
        raise ValueError(f"m={m} is smaller than the sample's {sample.m} items")
    gen, seed_text = _generator(rng)
    pick = gen.integers(0, sample.n, size=n)
    sizes = sample.sizes[pick]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    starts = sample.sets.offsets[:-1][pick]
    pos = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - starts, sizes)
    indices = sample.sets.indices[pos].astype(np.int64)
    vocab = np.asarray(sample.vocabulary)
    if np.issubdtype(vocab.dtype, np.integer):
        # unseen items get the smallest positive ids the sample does not use
        free = np.setdiff1d(np.arange(1, m + sample.m + 1, dtype=np.int64), vocab)[: m - sample.m]
        vocabulary = np.concatenate([vocab.astype(np.int64), free])
    else:
        vocabulary = np.concatenate([vocab.astype(object), np.array([f"unseen-{j}" for j in range(m - sample.m)], dtype=object)])
    label = name or sample.name
    source = (
        f"synthetic stand-in (ldpkit.datasets.standins.bootstrap_itemsets): {n:,} users resampled with replacement "
        f"from {sample.n:,} real users of {sample.source}; domain padded to m={m:,}; {seed_text}"
    )
    notes = (
        f"STAND-IN: {label} rebuilt from the real sample {sample.name} by resampling users; it is not the real dataset.",
        f"Matches exactly: n = {n:,} users and m = {m:,} items ({m - sample.m:,} of them never held). "
        f"Mean set size in expectation: {sample.sizes.mean():.4f} (the sample's).",
        "Item popularity and set sizes are the sample's (real), not a fitted law.",
        *sample.notes,
    )
    return ItemSetData(sets=ItemSets(indices, offsets, m), vocabulary=vocabulary, name=label, source=source,
                       notes=notes, origin="prefix", files=sample.files)
