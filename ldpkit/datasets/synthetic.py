"""Synthetic datasets of the papers' experiments, with their exact generating distributions.

These generators *are* the papers' synthetic datasets (``origin="synthetic"``), not stand-ins for
missing files.  Each returns a :class:`~ldpkit.datasets.containers.SingleItemData` whose
``source`` records the generator, its parameters and the seed entropy of the random stream
(so a run started with ``rng=None`` can still be replayed), and whose ``notes`` record how an
ambiguous description in the paper was read.  Every generator has a companion function giving
the exact item probabilities, so tests and the book can compare empirical frequencies with
the truth.  Documented on the Datasets page of the book (:ref:`sec-synthetic`).

=========================  ==========================================  =====================
generator                  paper and dataset                           exact probabilities
=========================  ==========================================  =====================
:func:`power_law_items`    ID-LDP :cite:`gu2020idldp` "Power-law"      :func:`power_law_probabilities`
:func:`uniform_items`      ID-LDP :cite:`gu2020idldp` "Uniform"        ``1/m`` each
:func:`zipf_items`         IPLDP :cite:`li2023ipldp` "Zipf"            :func:`truncated_zipf_probabilities`
:func:`fldp_zipf_items`    FLDP :cite:`zhao2022fldp` "Zipf"            ``k^-a / zeta(a)`` (untruncated)
:func:`zipf_counts`        counts for the book's estimation examples   :func:`zipf_probabilities`
=========================  ==========================================  =====================

Item ``k`` of a paper (1-based) is item ``k - 1`` here; the ``vocabulary`` holds the paper's
1-based value.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal, cast

import numpy as np
from scipy import special

from .._rng import RNGLike, as_generator
from .._validation import check_domain_size, check_positive_int, check_positive_real
from .containers import SingleItemData

__all__ = [
    "fldp_zipf_items",
    "power_law_items",
    "power_law_probabilities",
    "truncated_zipf_probabilities",
    "uniform_items",
    "zipf_counts",
    "zipf_items",
    "zipf_probabilities",
]

_MODULE = "ldpkit.datasets.synthetic"


# --------------------------------------------------------------------------- helpers


def _check_exponent(value: Any, name: str, lower: float, strict: bool) -> float:
    """Return ``value`` as a float; raise unless it is finite and ``> lower`` (or ``>= lower``)."""
    relation = ">" if strict else ">="
    message = f"{name} must be a finite real number {relation} {lower:g}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    out = float(value)
    if not math.isfinite(out) or (out <= lower if strict else out < lower):
        raise ValueError(message)
    return out


def _rng_provenance(rng: RNGLike, gen: np.random.Generator) -> str:
    """Describe the random stream well enough to replay it (see the module docstring)."""
    seed_seq = getattr(gen.bit_generator, "seed_seq", None)
    entropy = getattr(seed_seq, "entropy", None)
    spawn_key = tuple(getattr(seed_seq, "spawn_key", ()) or ())
    desc = f"entropy={entropy}" + (f", spawn_key={spawn_key}" if spawn_key else "")
    if isinstance(rng, np.random.Generator):
        return f"rng=Generator({desc}; its state may have advanced before this call)"
    if rng is None:
        return f"rng=None (fresh OS entropy; replay with SeedSequence({desc}))"
    if isinstance(rng, numbers.Integral):
        return f"rng={int(rng)} (SeedSequence({desc}))"
    return f"rng=SeedSequence({desc})"


def _source(func: str, params: str, rng: RNGLike, gen: np.random.Generator) -> str:
    return f"{_MODULE}.{func}({params}); {_rng_provenance(rng, gen)}"


def _item_ids(m: int) -> np.ndarray:
    """The original ids ``1..m`` of the items of a generated law (the vocabulary)."""
    return np.arange(1, m + 1, dtype=np.int64)


def _synthetic(items: np.ndarray, vocabulary: np.ndarray, name: str, source: str, *notes: str) -> SingleItemData:
    """The single-item data a generator here returns (origin ``"synthetic"``)."""
    return SingleItemData(items=items, vocabulary=vocabulary, name=name, source=source, notes=notes,
                          origin="synthetic")


# --------------------------------------------------------------------------- ID-LDP power law


def power_law_probabilities(m: int, alpha: float = 2.0) -> np.ndarray:
    """Exact item probabilities of :func:`power_law_items`.

    A continuous power law with density proportional to ``x**(-alpha)`` on ``[1, m + 1)``
    (a Pareto law with minimum 1, truncated at ``m + 1``) is floored to an integer ``k`` in
    ``{1, ..., m}``, which becomes item ``k - 1``.  Hence, for ``alpha != 1``,

    ``P(item k-1) = (k**(1-alpha) - (k+1)**(1-alpha)) / (1 - (m+1)**(1-alpha))``,

    and for ``alpha == 1``, ``P(item k-1) = log((k+1)/k) / log(m+1)``.  Datasets page of the
    book, eq. :eq:`eq-power-law-items`.

    Parameters
    ----------
    m
        Number of items (``>= 2``).
    alpha
        Power-law exponent, finite and positive (the ID-LDP paper uses 2).

    Returns
    -------
    numpy.ndarray
        Length-``m`` probability vector (non-increasing, sums to 1).
    """
    m = check_domain_size(m, "m")
    alpha = check_positive_real(alpha, "alpha")
    k = np.arange(1, m + 1, dtype=float)
    t = 1.0 - alpha
    if t == 0.0:
        p = np.log1p(1.0 / k) / math.log(m + 1.0)
    else:
        # k^t - (k+1)^t = -k^t expm1(t log1p(1/k)); 1 - (m+1)^t = -expm1(t log(m+1)).  Written
        # with expm1/log1p so that neither difference cancels catastrophically.
        p = np.exp(t * np.log(k)) * np.expm1(t * np.log1p(1.0 / k)) / math.expm1(t * math.log(m + 1.0))
    return cast("np.ndarray", p / p.sum())


def power_law_items(n: int = 100_000, m: int = 100, alpha: float = 2.0, rng: RNGLike = None) -> SingleItemData:
    """ID-LDP "Power-law" dataset: ``n`` users, one item each from a floored power law on ``m`` items.

    The ID-LDP paper :cite:`gu2020idldp` draws values from a power law with exponent 2 and then
    scales and rounds them into ``{1, ..., m}``, without saying which power law, which scaling
    or which rounding.  This function reads it as the continuous power law with density
    proportional to ``x**(-alpha)`` on ``[1, m + 1)`` (minimum value 1, so no further scaling
    is needed, and truncated at ``m + 1`` so that every draw lands in the domain), floored to
    ``k`` in ``{1, ..., m}``.  Sampling is exact by inversion of the truncated CDF
    ``F(x) = (1 - x**(1-alpha)) / (1 - (m+1)**(1-alpha))``.  The resulting probabilities are
    :func:`power_law_probabilities`; with ``alpha = 2`` and ``m = 100`` the top item has
    probability ``0.5 / (1 - 1/101) = 0.505`` (a discrete Zipf law truncated at ``m`` would give
    ``1 / H(100, 2) = 0.609``).  Datasets page of the book, :ref:`ID-LDP power-law data <sec-synthetic-power-law>`.

    Why this reading: the paper separates "generate from a power law" from "round into the
    domain", which describes a continuous draw followed by discretisation rather than a
    discrete Zipf draw; flooring a Pareto variable with minimum 1 is the standard
    discretisation; and truncating (rather than clipping) keeps the last item from collecting
    the whole tail.

    Parameters
    ----------
    n
        Number of users (Table II of the paper: 100,000).
    m
        Number of items (Table II: 100).
    alpha
        Exponent of the power law (the paper: 2).
    rng
        Anything :func:`ldpkit.as_generator` accepts.

    Returns
    -------
    SingleItemData
        ``items`` in ``range(m)``; ``vocabulary = 1..m`` (the paper's item labels).
    """
    n = check_positive_int(n, "n")
    m = check_domain_size(m, "m")
    alpha = check_positive_real(alpha, "alpha")
    gen = as_generator(rng)
    u = gen.random(n)
    t = 1.0 - alpha
    if t == 0.0:
        x = np.exp(u * math.log(m + 1.0))
    else:
        # Inverse CDF: x**t = 1 - u (1 - (m+1)**t); again with log1p/expm1.
        one_minus_ceiling = -math.expm1(t * math.log(m + 1.0))
        x = np.exp(np.log1p(-u * one_minus_ceiling) / t)
    items = np.clip(np.floor(x).astype(np.int64) - 1, 0, m - 1)
    return _synthetic(
        items,
        _item_ids(m),
        "Power-law",
        _source("power_law_items", f"n={n}, m={m}, alpha={alpha!r}", rng, gen),
        f"reading of the ID-LDP paper: continuous power law with density proportional to x^-{alpha:g} "
        f"on [1, {m + 1}), floored to 1..{m}; exact probabilities in power_law_probabilities",
    )


# --------------------------------------------------------------------------- ID-LDP uniform


def uniform_items(n: int = 100_000, m: int = 1_000, rng: RNGLike = None) -> SingleItemData:
    """ID-LDP "Uniform" dataset: each of ``n`` users holds an independent uniform item of ``m``.

    Table II of :cite:`gu2020idldp` uses ``n = 100,000`` and ``m = 1,000``.  Each item has
    probability ``1/m``.  Datasets page of the book, :ref:`ID-LDP uniform data <sec-synthetic-uniform>`.

    Parameters
    ----------
    n
        Number of users.
    m
        Number of items (``>= 2``).
    rng
        Anything :func:`ldpkit.as_generator` accepts.
    """
    n = check_positive_int(n, "n")
    m = check_domain_size(m, "m")
    gen = as_generator(rng)
    items = gen.integers(0, m, size=n, dtype=np.int64)
    return _synthetic(items, _item_ids(m), "Uniform", _source("uniform_items", f"n={n}, m={m}", rng, gen))


# --------------------------------------------------------------------------- Zipf laws


def zipf_probabilities(d: int, s: float) -> np.ndarray:
    """Zipf law on ``d`` items: ``P(item k-1) = k**(-s) / sum_j j**(-s)`` for ``k = 1..d``.

    Any finite exponent ``s >= 0`` is allowed (``s = 0`` is uniform).  Datasets page of the
    book, eq. :eq:`eq-zipf`.
    """
    d = check_domain_size(d, "d")
    s = _check_exponent(s, "s", 0.0, strict=False)
    # Same arithmetic as the book's original helper, so multinomial draws are unchanged.
    w = 1.0 / np.arange(1, d + 1) ** s
    return cast("np.ndarray", w / w.sum())


def zipf_counts(d: int, n: int, s: float, rng: RNGLike = None) -> np.ndarray:
    """Item counts of ``n`` users drawn i.i.d. from :func:`zipf_probabilities` ``(d, s)``.

    A single multinomial draw, so the counts sum to ``n`` exactly.  Used by the Estimation
    chapter's examples.

    Parameters
    ----------
    d
        Number of items (``>= 2``).
    n
        Number of users (``>= 1``).
    s
        Zipf exponent, finite and ``>= 0``.
    rng
        Anything :func:`ldpkit.as_generator` accepts.

    Returns
    -------
    numpy.ndarray
        int64 counts of length ``d``.
    """
    d = check_domain_size(d, "d")
    n = check_positive_int(n, "n")
    s = _check_exponent(s, "s", 0.0, strict=False)
    gen = as_generator(rng)
    return gen.multinomial(n, zipf_probabilities(d, s)).astype(np.int64)


def truncated_zipf_probabilities(m: int, alpha: float = 2.0) -> np.ndarray:
    """Exact item probabilities of :func:`zipf_items`: ``Zipf(alpha)`` conditioned on values ``<= m``.

    Conditioning the untruncated law ``k**(-alpha) / zeta(alpha)`` on ``k <= m`` gives
    ``k**(-alpha) / H(m, alpha)`` with ``H(m, alpha) = sum_{j<=m} j**(-alpha)``: the same vector
    as :func:`zipf_probabilities` ``(m, alpha)``, but ``alpha > 1`` is required because
    :func:`zipf_items` draws from the untruncated law.  Datasets page, eq. :eq:`eq-zipf`.
    """
    m = check_domain_size(m, "m")
    alpha = _check_exponent(alpha, "alpha", 1.0, strict=True)
    return zipf_probabilities(m, alpha)


def zipf_items(n: int = 100_000, m: int = 20, alpha: float = 2.0, rng: RNGLike = None) -> SingleItemData:
    """IPLDP "Zipf" dataset: ``n`` draws of ``Zipf(alpha)`` (support 1, 2, ...) kept only if ``<= m``.

    The IPLDP paper :cite:`li2023ipldp` samples a Zipf law with exponent 2 and filters the
    draws with a threshold that fixes the domain size and the number of users (Table 1:
    100,000 users, 20 items).  Here the threshold is ``m`` and the filter is an exact rejection
    sampler: :meth:`numpy.random.Generator.zipf` is drawn in vectorised batches, draws above
    ``m`` are discarded, and drawing continues until ``n`` draws are kept.  Each kept draw is
    therefore ``Zipf(alpha)`` conditioned on ``<= m``, i.e. a Zipf law truncated to ``m``
    items (:func:`truncated_zipf_probabilities`), and the user count is exactly ``n``.  (The
    paper's variant, which filters a fixed number of draws and keeps whatever survives, has
    the same per-user distribution but a random ``n``.)  The domain is always ``1..m`` even if
    some item happens to be drawn by nobody.  Datasets page of the book,
    :ref:`IPLDP Zipf data <sec-synthetic-zipf>`.

    Parameters
    ----------
    n
        Number of users.
    m
        Threshold = number of items (``>= 2``).
    alpha
        Zipf exponent, finite and ``> 1`` (numpy's requirement).
    rng
        Anything :func:`ldpkit.as_generator` accepts.
    """
    n = check_positive_int(n, "n")
    m = check_domain_size(m, "m")
    alpha = _check_exponent(alpha, "alpha", 1.0, strict=True)
    gen = as_generator(rng)
    # Acceptance probability H(m, alpha) / zeta(alpha); batches are sized from it with a margin,
    # and the loop makes the sampler exact whatever the batch sizes are.
    accept = float(np.sum(np.arange(1, m + 1, dtype=float) ** -alpha) / special.zeta(alpha, 1))
    accept = min(max(accept, 1e-6), 1.0)
    kept: list[np.ndarray] = []
    have = 0
    draws = 0
    while have < n:
        need = n - have
        batch = int(min(max(math.ceil(1.05 * need / accept) + 64, 1), 1 << 24))
        x = gen.zipf(alpha, size=batch)
        draws += batch
        x = x[x <= m]
        kept.append(x)
        have += x.size
    values = np.concatenate(kept)[:n]
    return _synthetic(
        (values - 1).astype(np.int64),
        _item_ids(m),
        "Zipf",
        _source("zipf_items", f"n={n}, m={m}, alpha={alpha!r}", rng, gen),
        f"reading of the IPLDP paper: Zipf({alpha:g}) draws above the threshold m={m} rejected until "
        f"n={n} were kept (a Zipf law truncated to {m} items; exact probabilities in "
        "truncated_zipf_probabilities)",
    )


def fldp_zipf_items(
    n: int = 593_358,
    a: float = 2.0,
    max_items: int | None = None,
    tail: Literal["drop", "merge"] = "drop",
    rng: RNGLike = None,
) -> SingleItemData:
    """FLDP "Zipf" dataset: ``n`` records drawn with :meth:`numpy.random.Generator.zipf` ``(a)``.

    The FLDP paper :cite:`zhao2022fldp` generates 593,358 records with numpy's Zipf sampler
    and uses the distinct values drawn as the item domain.  Its exponent is not legible in
    the text we have, so ``a`` defaults to 2 (the exponent of the other two papers' Zipf and
    power-law data) and is recorded in ``source``.  The vocabulary is the sorted set of
    distinct values drawn, and item ``k`` is ``vocabulary[k]``; the untruncated law gives value
    ``v`` probability ``v**(-a) / zeta(a)``.  The paper used the legacy
    ``numpy.random.zipf``: same distribution, different random stream.  Datasets page of the
    book, :ref:`FLDP Zipf data <sec-synthetic-fldp-zipf>`.

    The tail is unbounded (with ``a = 2`` the largest of 593,358 draws is typically in the
    hundreds of thousands, with about a thousand distinct values).  ``max_items`` optionally
    bounds it:

    * ``tail="drop"``: records whose value exceeds ``max_items`` are removed (``n`` shrinks;
      the number removed is in ``notes``);
    * ``tail="merge"``: such records are set to ``max_items + 1``, which then stands for
      "more than ``max_items``" (the number merged is in ``notes``).

    Parameters
    ----------
    n
        Number of records drawn (the paper: 593,358).
    a
        Zipf exponent, finite and ``> 1``.
    max_items
        ``None`` (keep every value) or an integer ``>= 1``.
    tail
        ``"drop"`` or ``"merge"``; ignored when ``max_items`` is ``None``.
    rng
        Anything :func:`ldpkit.as_generator` accepts.
    """
    n = check_positive_int(n, "n")
    a = _check_exponent(a, "a", 1.0, strict=True)
    if max_items is not None:
        max_items = check_positive_int(max_items, "max_items")
    if tail not in ("drop", "merge"):
        raise ValueError(f"tail must be 'drop' or 'merge', got {tail!r}")
    gen = as_generator(rng)
    values = gen.zipf(a, size=n)
    notes = [f"vocabulary = the distinct values among {n} Zipf({a:g}) draws, sorted"]
    if max_items is not None:
        above = values > max_items
        count = int(above.sum())
        if tail == "drop":
            values = values[~above]
            notes.append(f"{count} of {n} records with a value above max_items={max_items} dropped")
        else:
            values = np.where(above, max_items + 1, values)
            notes.append(
                f"{count} of {n} records with a value above max_items={max_items} merged into the value "
                f"{max_items + 1}, which stands for 'more than {max_items}'"
            )
    if values.size == 0:
        raise ValueError(f"every one of the n={n} draws exceeds max_items={max_items}: no record is left")
    vocabulary, items = np.unique(values, return_inverse=True)
    return _synthetic(
        items.astype(np.int64).reshape(-1),
        vocabulary.astype(np.int64),
        "Zipf (FLDP)",
        _source("fldp_zipf_items", f"n={n}, a={a!r}, max_items={max_items!r}, tail={tail!r}", rng, gen),
        *notes,
    )
