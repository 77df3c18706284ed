"""What one channel guarantees under every notion at once: a privacy profile.

Papers compare mechanisms that satisfy *different* notions (IPRR under IPLDP, KRR under LDP,
uRR under ULDP, IDUE under MinID-LDP).  Whether such a comparison is at equal privacy is a
question about each channel under each notion, which :func:`~ldpkit.accountant.privacy_profile`
answers from the channel alone.  It iterates the registered notions
(:func:`~ldpkit.accountant.registered_notions`): every notion with a ``profile_key`` whose
parameters are known from the arguments reports its tightest value (the tightest standard-LDP
epsilon; the smallest scale of a budget vector ``E`` under MinID-LDP and IPLDP; the smallest
ULDP epsilon for a sensitive set; the tightest LIP epsilon and the mutual information under a
prior; the tightest FLDP epsilon for a shared fraction ``alpha``).  Each value comes from the
notion's own module, so the profile adds no accounting of its own, and a new notion module
appears in it with no other edit.  IPLDP experiments chapter, :ref:`sec-ipldp-equal-privacy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_budget_vector, check_distribution
from ._core import AccountingError, ChannelLike, as_channel, registered_notions, require_pairs, within
from .ipldp import sensitive_indices

__all__ = ["PrivacyProfile", "privacy_profile"]


@dataclass(frozen=True)
class PrivacyProfile:
    """The tightest parameter of one channel under each registered notion it could be computed for.

    ``values`` maps each notion's ``profile_key`` to its tightest value (see
    :attr:`~ldpkit.accountant.Notion.scale` for what a value means), and to ``None`` when the
    arguments did not give what the notion needs, when the notion is not defined for the channel
    (IPLDP needs a square channel), or when no closed form covers the channel's kind and it is
    too large to enumerate (mutual information of a large unary channel, for one).  The keys are
    attributes too:

    * ``ldp_epsilon``: smallest ``eps`` with ``eps``-LDP (``inf`` when some output rules an
      input out);
    * ``minid_scale``: smallest ``s`` such that the channel is ``(s E)``-MinID-LDP for the given
      budgets ``E``; the channel is ``E``-MinID-LDP exactly when ``minid_scale <= 1``.  Items with
      budget ``inf`` constrain only pairs with a budgeted item;
    * ``ipldp_scale``: the same for ``(D_S, E)``-IPLDP (square channels only; ``inf`` when a
      non-sensitive output does not reveal its input);
    * ``uldp_epsilon``: smallest ``eps`` with ``(X_S, Y_P, eps)``-ULDP, ``Y_P`` being the smallest
      admissible set of protected outputs;
    * ``lip_epsilon`` and ``mutual_information`` (nats): under the given prior;
    * ``fldp_epsilon``: for the given shared fraction ``alpha``;

    and every key of a notion registered later.  For a scale notion, ``<key>`` with
    ``_scale`` replaced by ``_satisfied`` says whether the channel satisfies the budgets
    themselves (scale at most 1, up to :data:`~ldpkit.accountant.REL_TOL`).

    Attributes
    ----------
    values
        Profile key to tightest value (``None``: not computed).
    scales
        The profile keys of the scale notions among them.
    sensitive
        The sensitive items used (``None`` when none were given or implied).
    """

    values: Mapping[str, Optional[float]]
    scales: tuple[str, ...] = ()
    sensitive: Optional[tuple[int, ...]] = None

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        for key in self.__dict__.get("scales", ()):
            if name == _satisfied_key(key):
                return None if values[key] is None else bool(within(values[key], 1.0))
        raise AttributeError(f"PrivacyProfile has no value {name!r}; it has {', '.join(self.as_dict())}")

    def as_dict(self) -> dict[str, Any]:
        """The profile as a plain dictionary (one row of a comparison table)."""
        out: dict[str, Any] = {}
        for key, value in self.values.items():
            out[key] = value
            if key in self.scales:
                out[_satisfied_key(key)] = getattr(self, _satisfied_key(key))
        out["sensitive"] = self.sensitive
        return out


def _satisfied_key(key: str) -> str:
    return key[: -len("_scale")] + "_satisfied" if key.endswith("_scale") else key + "_satisfied"


def privacy_profile(
    mech: ChannelLike,
    *,
    budgets: Optional[ArrayLike] = None,
    sensitive: Optional[ArrayLike] = None,
    prior: Optional[ArrayLike] = None,
    **context: Any,
) -> PrivacyProfile:
    """Compute the :class:`PrivacyProfile` of a channel or mechanism under every registered notion.

    Parameters
    ----------
    mech
        Channel or mechanism with ``.channel()``.  When none of ``budgets``, ``sensitive`` and
        ``prior`` is given, a mechanism's own declared guarantees give them (and ``alpha`` and
        other notion parameters): ``privacy_profile(IPRR(e))`` uses ``e``, ``privacy_profile(urr)``
        its sensitive set, a mechanism declaring a LIP budget its prior.  Parameters that no
        declared guarantee states (a prior given to a mechanism without a LIP budget) are not
        guessed: pass them.
    budgets
        Per-item budget vector ``E`` of length ``d``; ``inf`` marks a non-sensitive item
        (the convention of :class:`~ldpkit.iprr.IPRR`).  Enables the scale notions
        (MinID-LDP, IPLDP), and, when ``sensitive`` is not given, sets the sensitive items to
        those with a finite budget.
    sensitive
        Sensitive items (boolean mask of length ``d`` or distinct indices).  Enables ULDP;
        with ``budgets`` it must be the set of items with finite budgets.
    prior
        Input distribution (LIP, MIP).
    **context
        Parameters of other notions (``alpha`` for FLDP, or those of a notion registered
        later).

    Examples
    --------
    >>> import math
    >>> from ldpkit import GRR, IPRR, accountant
    >>> e = [0.5, 1.0, math.inf]
    >>> prof = accountant.privacy_profile(IPRR(e), budgets=e)
    >>> prof.ipldp_satisfied, prof.ldp_epsilon, round(prof.uldp_epsilon, 6)
    (True, inf, 1.0)
    >>> round(accountant.privacy_profile(GRR(3, 0.5), budgets=e).minid_scale, 6)
    1.0
    >>> accountant.privacy_profile(IPRR(e)).ipldp_satisfied   # its own budgets
    True
    """
    ch = as_channel(mech)
    d = require_pairs(ch)
    if budgets is None and sensitive is None and prior is None:
        own = _own_parameters(mech, d)
        budgets, sensitive, prior = own.pop("budgets", None), own.pop("sensitive", None), own.pop("prior", None)
        context = {**own, **context}
    known, sens = _context(d, budgets, sensitive, prior, context)
    values: dict[str, Optional[float]] = {}
    scales = []
    for notion in registered_notions():
        key = notion.profile_key
        if key is None:
            continue
        if notion.scale:
            scales.append(key)
        needs = notion.tightest_needs
        values[key] = None
        if all(p in known for p in needs) and notion.applies_to(ch):
            try:
                values[key] = notion.tightest(ch, **{p: known[p] for p in needs})
            except AccountingError:  # no closed form for this kind, and too large to enumerate
                values[key] = None
    return PrivacyProfile(
        values=values,
        scales=tuple(scales),
        sensitive=None if sens is None else tuple(int(i) for i in np.sort(sens)),
    )


def _own_parameters(mech: Any, d: int) -> dict[str, Any]:
    """The parameters a mechanism's declared guarantees state (budgets, sensitive items, prior, ...).

    A budget vector stated for the sensitive items only (IPLDP's form) is widened to all ``d``
    items with ``inf`` for the others.  The first guarantee stating a parameter gives it.
    """
    guarantees = getattr(mech, "guarantees", None)
    if not callable(guarantees):
        return {}
    found: dict[str, Any] = {}
    for g in guarantees():
        params = dict(g.params)
        if "budgets" in params and "sensitive" in params:
            b = np.asarray(params["budgets"], dtype=float)
            s = np.asarray(params["sensitive"])
            if b.size == s.size and b.size < d and s.dtype.kind in "iu":
                full = np.full(d, np.inf)
                full[s] = b
                params["budgets"] = full
        for key, value in params.items():
            if key != "epsilon":
                found.setdefault(key, value)
    if "budgets" in found and "sensitive" in found:
        del found["sensitive"]  # implied by the finite budgets
    return found


def _context(
    d: int,
    budgets: Optional[ArrayLike],
    sensitive: Optional[ArrayLike],
    prior: Optional[ArrayLike],
    context: Mapping[str, Any],
) -> tuple[dict[str, Any], Optional[np.ndarray]]:
    """The validated parameters the notions may need, and the sensitive items (implied by finite budgets)."""
    known: dict[str, Any] = dict(context)
    sens: Optional[np.ndarray] = None
    if budgets is not None:
        e = check_budget_vector(budgets, d, allow_inf=True)
        implied = np.flatnonzero(np.isfinite(e))
        sens = implied if sensitive is None else sensitive_indices(sensitive, d)
        if not np.array_equal(np.sort(sens), implied):
            raise ValueError(
                "sensitive must be the items with a finite budget: "
                f"got {sorted(int(i) for i in sens)}, budgets give {implied.tolist()}"
            )
        known["budgets"] = e
    elif sensitive is not None:
        sens = sensitive_indices(sensitive, d)
    if sens is not None and sens.size:
        known["sensitive"] = np.sort(sens)
    if prior is not None:
        known["prior"] = check_distribution(prior, d, "prior")
    return known, sens
