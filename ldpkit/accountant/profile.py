"""What one channel guarantees under every notion at once: a privacy profile.

Papers compare mechanisms that satisfy *different* notions (IPRR under IPLDP, KRR under LDP,
uRR under ULDP, IDUE under MinID-LDP).  Whether such a comparison is at equal privacy is a
question about each channel under each notion, which :func:`~ldpkit.accountant.privacy_profile` answers from
the channel alone: the tightest standard-LDP epsilon, the smallest scale ``s`` such that the
channel is ``(s E)``-MinID-LDP for a given budget vector ``E``, whether it is ``(D_S,
E)``-IPLDP, the smallest ULDP epsilon for a given sensitive set, and the tightest LIP epsilon
under a stated prior.  Each value comes from the notion's own module (closed form or exact
enumeration), so the profile adds no accounting of its own.  IPLDP experiments chapter,
:ref:`sec-ipldp-equal-privacy`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_budget_vector, check_distribution
from ._core import ChannelLike, as_channel, require_pairs
from .idldp import id_ldp_scale
from .ipldp import check_ipldp, sensitive_indices
from .ldp import ldp_epsilon
from .lip import lip_epsilon
from .uldp import check_uldp

__all__ = ["PrivacyProfile", "privacy_profile"]


@dataclass(frozen=True)
class PrivacyProfile:
    """The tightest parameter of one channel under each notion.

    Attributes
    ----------
    ldp_epsilon
        Smallest ``eps`` with ``eps``-LDP (``inf`` when some output rules an input out).
    minid_scale
        Smallest ``s`` such that the channel is ``(s E)``-MinID-LDP for the given budgets
        ``E`` (``None`` without budgets); the channel is ``E``-MinID-LDP exactly when
        ``minid_scale <= 1``.  Items with budget ``inf`` constrain only pairs with a
        budgeted item.
    ipldp_satisfied, ipldp_slack
        Whether the channel is ``(D_S, E)``-IPLDP (square channels with budgets only), and
        the slack of the tightest sensitive output (``allowed - achieved``).
    uldp_epsilon
        Smallest ``eps`` with ``(X_S, Y_P, eps)``-ULDP for the sensitive set, ``Y_P`` being the
        smallest admissible set of protected outputs (``None`` without a sensitive set).
    lip_epsilon
        Smallest ``eps`` with ``eps``-LIP under ``prior`` (``None`` without a prior).
    sensitive
        The sensitive items used (``None`` when none were given or implied).
    """

    ldp_epsilon: float
    minid_scale: Optional[float] = None
    ipldp_satisfied: Optional[bool] = None
    ipldp_slack: Optional[float] = None
    uldp_epsilon: Optional[float] = None
    lip_epsilon: Optional[float] = None
    sensitive: Optional[tuple[int, ...]] = None

    def as_dict(self) -> dict[str, Any]:
        """The profile as a plain dictionary (one row of a comparison table)."""
        return asdict(self)


def privacy_profile(
    mech: ChannelLike,
    *,
    budgets: Optional[ArrayLike] = None,
    sensitive: Optional[ArrayLike] = None,
    prior: Optional[ArrayLike] = None,
) -> PrivacyProfile:
    """Compute the :class:`PrivacyProfile` of a channel or mechanism.

    Parameters
    ----------
    mech
        Channel or mechanism with ``.channel()``.
    budgets
        Per-item budget vector ``E`` of length ``d``; ``inf`` marks a non-sensitive item
        (the convention of :class:`~ldpkit.iprr.IPRR`).  Enables ``minid_scale`` and the IPLDP
        check, and, when ``sensitive`` is not given, sets the sensitive items to those with a
        finite budget.
    sensitive
        Sensitive items (boolean mask of length ``d`` or distinct indices).  Enables
        ``uldp_epsilon``; with ``budgets`` it must be the set of items with finite budgets.
    prior
        Input distribution for LIP.

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
    """
    ch = as_channel(mech)
    d = require_pairs(ch)
    e: Optional[np.ndarray] = None
    sens: Optional[np.ndarray] = None
    if budgets is not None:
        e = check_budget_vector(budgets, d, allow_inf=True)
        implied = np.flatnonzero(np.isfinite(e))
        if sensitive is None:
            sens = implied
        else:
            sens = sensitive_indices(sensitive, d)
            if not np.array_equal(np.sort(sens), implied):
                raise ValueError(
                    "sensitive must be the items with a finite budget: "
                    f"got {sorted(int(i) for i in sens)}, budgets give {implied.tolist()}"
                )
    elif sensitive is not None:
        sens = sensitive_indices(sensitive, d)
    pri = None if prior is None else check_distribution(prior, d, "prior")

    minid = ipl_ok = ipl_slack = uldp = lip = None
    if e is not None:
        minid = float(id_ldp_scale(ch, e, "min"))
        if ch.n_outputs == d and sens is not None and sens.size:
            res = check_ipldp(ch, e[sens], sens)
            ipl_ok, ipl_slack = bool(res.satisfied), float(res.slack)
    if sens is not None and sens.size:
        uldp = float(check_uldp(ch, 1.0, sens).uldp_epsilon)
    if pri is not None:
        lip = float(lip_epsilon(ch, pri))
    eps = float(ldp_epsilon(ch))
    return PrivacyProfile(
        ldp_epsilon=eps if math.isfinite(eps) else math.inf,
        minid_scale=minid,
        ipldp_satisfied=ipl_ok,
        ipldp_slack=ipl_slack,
        uldp_epsilon=uldp,
        lip_epsilon=lip,
        sensitive=None if sens is None else tuple(int(i) for i in np.sort(sens)),
    )
