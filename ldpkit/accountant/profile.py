"""What one channel guarantees under every notion at once: a privacy profile.

Papers compare mechanisms that satisfy *different* notions (IPRR under IPLDP, KRR under LDP,
uRR under ULDP, IDUE under MinID-LDP).  Whether such a comparison is at equal privacy is a
question about each channel under each notion, which :func:`~ldpkit.accountant.privacy_profile`
answers from the channel alone.  It iterates the registered notions
(:func:`~ldpkit.accountant.registered_notions`, in their :attr:`~ldpkit.accountant.Notion.order`):
every notion reported in profiles (:attr:`~ldpkit.accountant.Notion.profile`) whose parameters
are known from the arguments reports its tightest value under its
:attr:`~ldpkit.accountant.Notion.profile_key` (the tightest standard-LDP epsilon; the smallest
scale of a budget vector ``E`` under MinID-LDP and IPLDP; the smallest ULDP epsilon for a
sensitive set; the tightest LIP epsilon and the mutual information under a prior; the tightest
FLDP epsilon for a shared fraction ``alpha``).  Each value comes from the notion's own module,
so the profile adds no accounting of its own, and a new notion module appears in it with no
other edit.

Facts about the data and the promise (per-item budgets, the sensitive items, a prior, a matrix
of pairwise budgets: :data:`~ldpkit.accountant.SHARED_PARAMETERS`) go to every notion that
states them; a notion's own parameters (FLDP's ``alpha``, MIP's ``base``, ...) are passed under
its id, ``params={"fldp": {"alpha": 0.5}}``, so two notions may each have a parameter of the
same name.  IPLDP experiments chapter, :ref:`sec-ipldp-equal-privacy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .._validation import ArgumentTypeError, check_budget_vector, check_distribution, describe
from ._core import SHARED_PARAMETERS, AccountingError, ChannelLike, as_channel, get_notion, registered_notions
from ._core import require_pairs, within
from .context_aware import check_budget_matrix
from .ipldp import sensitive_indices

__all__ = ["PrivacyProfile", "privacy_profile"]


@dataclass(frozen=True)
class PrivacyProfile:
    """The tightest parameter of one channel under each registered notion it could be computed for.

    ``values`` maps the :attr:`~ldpkit.accountant.Notion.profile_key` of every registered notion
    reported in profiles to its tightest value (its :attr:`~ldpkit.accountant.Notion.quantity`:
    a budget, a scale of the given budgets, or MIP's mutual information), and to ``None`` when the
    arguments did not give what the notion needs, when the notion is not defined for the channel
    (IPLDP needs a square channel), or when no closed form covers the channel's kind and it is
    too large to enumerate (mutual information of a large unary channel, for one).  The keys
    follow :attr:`~ldpkit.accountant.Notion.order` and are attributes too; for the builtin notions:

    * ``ldp_epsilon``: smallest ``eps`` with ``eps``-LDP (``inf`` when some output rules an
      input out);
    * ``context_aware_scale``: smallest ``s`` such that the channel is ``(s M)``-context-aware
      private for the given matrix ``M``;
    * ``minid_scale``: smallest ``s`` such that the channel is ``(s E)``-MinID-LDP for the given
      budgets ``E``; the channel is ``E``-MinID-LDP exactly when ``minid_scale <= 1``.  Items with
      budget ``inf`` constrain only pairs with a budgeted item;
    * ``ipldp_scale``: the same for ``(D_S, E)``-IPLDP (square channels only; ``inf`` when a
      non-sensitive output does not reveal its input);
    * ``uldp_epsilon``: smallest ``eps`` with ``(X_S, Y_P, eps)``-ULDP, ``Y_P`` being the smallest
      admissible set of protected outputs;
    * ``fldp_epsilon``: for the given shared fraction ``alpha``;
    * ``lip_epsilon`` and ``mip_information`` (the mutual information, nats): under the given prior;

    and the key of every notion registered later.  For a scale notion, ``<key>`` with
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
    matrix: Optional[ArrayLike] = None,
    params: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> PrivacyProfile:
    """Compute the :class:`PrivacyProfile` of a channel or mechanism under every registered notion.

    Parameters
    ----------
    mech
        Channel or mechanism with ``.channel()``.  When none of ``budgets``, ``sensitive``,
        ``prior`` and ``matrix`` is given, a mechanism's own declared guarantees give them (and
        the notions' own parameters, such as FHR's ``alpha``): ``privacy_profile(IPRR(e))`` uses
        ``e``, ``privacy_profile(urr)`` its sensitive set, a mechanism declaring a LIP budget its
        prior.  Parameters that no declared guarantee states (a prior given to a mechanism
        without a LIP budget) are not guessed: pass them.
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
    matrix
        A ``d x d`` matrix of pairwise budgets (context-aware LDP).
    params
        Each notion's own parameters under its id: ``{"fldp": {"alpha": 0.5}}`` (and those of
        a notion registered later).  Given ones take precedence over a mechanism's declared ones.

    Raises
    ------
    ValueError
        A bad value, an unknown notion id in ``params`` or a parameter that is not the notion's
        own (a shared one, such as ``prior``, is passed by its keyword).

    Examples
    --------
    >>> import math
    >>> from ldpkit import FHR, GRR, IPRR, accountant
    >>> e = [0.5, 1.0, math.inf]
    >>> prof = accountant.privacy_profile(IPRR(e), budgets=e)
    >>> prof.ipldp_satisfied, prof.ldp_epsilon, round(prof.uldp_epsilon, 6)
    (True, inf, 1.0)
    >>> round(accountant.privacy_profile(GRR(3, 0.5), budgets=e).minid_scale, 6)
    1.0
    >>> accountant.privacy_profile(IPRR(e)).ipldp_satisfied   # its own budgets
    True
    >>> round(accountant.privacy_profile(GRR(3, 1.0), params={"fldp": {"alpha": 0.5}}).fldp_epsilon, 6)
    1.0
    >>> accountant.privacy_profile(FHR(5, fldp_epsilon=1.0)).fldp_epsilon   # FHR states alpha = 1/2
    1.0
    """
    ch = as_channel(mech)
    d = require_pairs(ch)
    own = _notion_parameters(params)
    if budgets is None and sensitive is None and prior is None and matrix is None:
        shared, declared = _declared_parameters(mech, d)
        budgets, sensitive = shared.get("budgets"), shared.get("sensitive")
        prior, matrix = shared.get("prior"), shared.get("matrix")
        own = {n: {**declared.get(n, {}), **own.get(n, {})} for n in {*declared, *own}}
    known, sens = _context(d, budgets, sensitive, prior, matrix)
    values: dict[str, Optional[float]] = {}
    scales = []
    for notion in registered_notions():
        if not notion.profile:
            continue
        key = notion.profile_key
        if notion.scale:
            scales.append(key)
        given = {**known, **own.get(notion.name, {})}
        values[key] = None
        if all(p in given for p in notion.tightest_needs) and notion.applies_to(ch):
            args = {p: given[p] for p in notion.tightest_needs + notion.optional if p in given}
            try:
                values[key] = notion.tightest(ch, **args)
            except AccountingError:  # no closed form for this kind, and too large to enumerate
                values[key] = None
    return PrivacyProfile(
        values=values,
        scales=tuple(scales),
        sensitive=None if sens is None else tuple(int(i) for i in np.sort(sens)),
    )


def _notion_parameters(params: Optional[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """``params`` checked: registered notion ids, each with a mapping of its own parameters."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ArgumentTypeError(f"params must map notion ids to their own parameters, got {describe(params)}")
    out: dict[str, dict[str, Any]] = {}
    for name, values in params.items():
        notion = get_notion(name)
        if not isinstance(values, Mapping):
            raise ArgumentTypeError(f"params[{name!r}] must map parameter names to values, got {describe(values)}")
        for p in values:
            if p in SHARED_PARAMETERS:
                raise ValueError(f"params[{name!r}] names {p!r}, a fact about the data shared by every notion: pass {p}=")
            if p not in notion.own:
                takes = ", ".join(notion.own) or "no parameter of its own"
                raise ValueError(f"params[{name!r}] names {describe(p)}; {name} takes {takes}")
        out[name] = dict(values)
    return out


def _declared_parameters(mech: Any, d: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The parameters a mechanism's declared guarantees state: the shared ones, and each notion's own under its id.

    A budget vector stated for the sensitive items only (IPLDP's form) is widened to all ``d``
    items with ``inf`` for the others.  The first guarantee stating a shared parameter gives it.
    """
    guarantees = getattr(mech, "guarantees", None)
    if not callable(guarantees):
        return {}, {}
    shared: dict[str, Any] = {}
    own: dict[str, dict[str, Any]] = {}
    for g in guarantees():
        params = dict(g.params)
        if "budgets" in params and "sensitive" in params:
            b = np.asarray(params["budgets"], dtype=float)
            s = np.asarray(params["sensitive"])
            if b.size == s.size and b.size < d and s.dtype.kind in "iu":
                full = np.full(d, np.inf)
                full[s] = b
                params["budgets"] = full
        notion = get_notion(g.notion)
        for key, value in params.items():
            if key in SHARED_PARAMETERS:
                shared.setdefault(key, value)
            elif key in notion.own:
                own.setdefault(g.notion, {}).setdefault(key, value)
    if "budgets" in shared and "sensitive" in shared:
        del shared["sensitive"]  # implied by the finite budgets
    return shared, own


def _context(
    d: int,
    budgets: Optional[ArrayLike],
    sensitive: Optional[ArrayLike],
    prior: Optional[ArrayLike],
    matrix: Optional[ArrayLike],
) -> tuple[dict[str, Any], Optional[np.ndarray]]:
    """The validated shared parameters, and the sensitive items (implied by finite budgets)."""
    known: dict[str, Any] = {}
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
    if matrix is not None:
        known["matrix"] = check_budget_matrix(matrix, d)
    return known, sens
