"""Exact privacy accounting for the notions of the four companion papers.

Every function takes a channel (any :class:`~ldpkit.channels.Channel`) or a mechanism
exposing ``.channel()``.  Each notion is its own module:

* :mod:`~ldpkit.accountant.ldp` -- standard LDP (Foundations chapter, :prf:ref:`def-ldp`);
* :mod:`~ldpkit.accountant.idldp` -- ID-LDP with any pair rule, and MinID-LDP (Gu et al.,
  Definitions 2-3, Lemma 1; ID-LDP chapter, :prf:ref:`def-idldp`, :prf:ref:`def-minidldp`);
* :mod:`~ldpkit.accountant.ipldp` -- IPLDP (Li et al., Definition 3; IPLDP chapter,
  :prf:ref:`def-ipldp`);
* :mod:`~ldpkit.accountant.uldp` -- ULDP (Murakami and Kawamoto, Definition 2; IPLDP
  chapter, :prf:ref:`def-uldp`);
* :mod:`~ldpkit.accountant.lip` and :mod:`~ldpkit.accountant.mip` -- LIP and MIP (Jiang,
  Li, Tandon, Definitions 2-3; LIP chapter, :prf:ref:`def-lip` and :prf:ref:`def-mip`);
* :mod:`~ldpkit.accountant.fldp` -- FLDP (Zhao et al.), reconstructed from the prose
  (FLDP chapter, :prf:ref:`def-fldp`).

:func:`privacy_profile` (:mod:`~ldpkit.accountant.profile`) reports what one channel
guarantees under each of these notions at once, to tell whether two mechanisms are compared at
equal privacy.

How a channel is accounted for (:mod:`~ldpkit.accountant._core`): explicit channels exactly,
by enumeration of every output; structured kinds (unary encodings here) by closed forms that
each notion registers per channel kind with :func:`register_closed_form`, checked against
enumeration in the tests; any other kind by enumerating ``to_explicit()`` when
``n_inputs * n_outputs <= MAX_ENUM_CELLS``, and otherwise an :class:`AccountingError` naming
the channel kind and its size.

Mechanisms state their guarantees as data (:class:`Guarantee` records returned by
``mech.guarantees()``), and :func:`verify` checks each against the channel.  Every check
returns a :class:`CheckResult` subclass with ``satisfied``, ``slack`` and the worst witness.

Tolerance
---------
Every ``check_*`` compares a computed log-ratio ``L`` with an allowed value ``A`` as
``L <= A + REL_TOL * max(1, |A|)`` with ``REL_TOL = 1e-9``.  Mechanisms calibrated to hit
their budget exactly (GRR, RAPPOR, OUE, IPRR, ...) produce ``L = A`` up to a few ulps of
rounding, and must be reported as satisfying it; a genuine violation of relative size
``1e-9`` or more is reported as a violation.  The reported ``slack`` is the raw
``A - L`` (no tolerance applied), so it can be ``-1e-16`` for a satisfied check.
"""

from __future__ import annotations

from ._core import (
    MAX_ENUM_CELLS,
    REL_TOL,
    AccountingError,
    ChannelLike,
    CheckResult,
    DeclaresGuarantees,
    Guarantee,
    Notion,
    SupportsChannel,
    Verification,
    as_channel,
    closed_form_for,
    dispatch,
    enumerate_channel,
    get_notion,
    notions,
    register_closed_form,
    register_notion,
    verify,
)
from .fldp import FLDPParameters, FLDPResult, check_fldp, fldp_parameters
from .idldp import (
    PAIR_RULES,
    BuiltinPairRule,
    IDLDPResult,
    PairRule,
    apply_pair_rule,
    check_id_ldp,
    check_minid_ldp,
    fit_to_budgets,
    id_ldp_scale,
    resolve_pair_rule,
)
from .ipldp import IPLDPResult, check_ipldp
from .ldp import LDPResult, check_ldp, ldp_epsilon
from .lip import LIPResult, check_lip, lip_epsilon
from .mip import MIPResult, check_mip, mutual_information
from .profile import PrivacyProfile, privacy_profile
from .uldp import ULDPResult, check_uldp

__all__ = [
    "REL_TOL",
    "MAX_ENUM_CELLS",
    "AccountingError",
    "ChannelLike",
    "CheckResult",
    "DeclaresGuarantees",
    "Guarantee",
    "Notion",
    "SupportsChannel",
    "Verification",
    "as_channel",
    "closed_form_for",
    "dispatch",
    "enumerate_channel",
    "get_notion",
    "notions",
    "register_closed_form",
    "register_notion",
    "verify",
    "LDPResult",
    "check_ldp",
    "ldp_epsilon",
    "PAIR_RULES",
    "BuiltinPairRule",
    "PairRule",
    "IDLDPResult",
    "apply_pair_rule",
    "check_id_ldp",
    "check_minid_ldp",
    "fit_to_budgets",
    "id_ldp_scale",
    "resolve_pair_rule",
    "IPLDPResult",
    "check_ipldp",
    "ULDPResult",
    "check_uldp",
    "LIPResult",
    "check_lip",
    "lip_epsilon",
    "PrivacyProfile",
    "privacy_profile",
    "MIPResult",
    "check_mip",
    "mutual_information",
    "FLDPParameters",
    "FLDPResult",
    "check_fldp",
    "fldp_parameters",
]
