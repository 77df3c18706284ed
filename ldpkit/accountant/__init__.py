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
  (FLDP chapter, :prf:ref:`def-fldp`);
* :mod:`~ldpkit.accountant.context_aware` -- context-aware LDP, one budget per ordered pair
  (Acharya et al., ICML 2020), which contains LDP, ID-LDP and MinID-LDP (Synthesis chapter,
  :prf:ref:`def-context-aware`).

Each notion module builds one typed :class:`Notion` (:data:`LDP`, :data:`IDLDP`,
:data:`MINIDLDP`, :data:`IPLDP`, :data:`ULDP`, :data:`LIP`, :data:`MIP`, :data:`FLDP`,
:data:`CONTEXT_AWARE`) and registers it with :func:`register_notion`: its one id
(``"minid-ldp"``) and display name (``"MinID-LDP"``), its budget parameter (``epsilon``, or
``budgets`` for the per-item notions, ``matrix`` for the per-pair one) and context parameters,
its tightest value ``notion.tightest(channel, **context)``, and its check
``notion.check(channel, guarantee)`` returning a typed :class:`CheckResult`.  The functions
follow one naming scheme: ``check_<notion>(channel, <budget>, *, <context>)`` returns the
typed result, and ``<notion>_epsilon(channel, <context>)`` (``<notion>_scale(channel,
budgets, ...)`` for per-item budgets; :func:`mutual_information` for MIP) the tightest value.

The package imports every public module of ``ldpkit/accountant/`` when it is imported (in
alphabetical order, which never matters: tables of notions follow :attr:`Notion.order`) and
re-exports each module's ``__all__``, so a notion added as a new module of the package is
registered, and its names are available here, with no other edit.  Type checkers see the names
of the builtin modules listed in this file; a module added later is imported from itself
(``from ldpkit.accountant.renyi import ...``) for static typing.

:func:`privacy_profile` (:mod:`~ldpkit.accountant.profile`) iterates the registered notions to
report what one channel guarantees under each of them at once, to tell whether two mechanisms
are compared at equal privacy.

How a channel is accounted for (:mod:`~ldpkit.accountant._core`): channels hold only the law
of a mechanism, and privacy is computed here, through one :class:`ClosedForms` table per
notion: explicit channels exactly, by enumeration of every output; structured kinds (unary
encodings, the Hadamard channels) by closed forms registered per channel kind with
:func:`register_closed_form`, each compared with enumeration on every registry mechanism by
one test; any other kind by enumerating ``to_explicit()`` when
``n_inputs * n_outputs <= MAX_ENUM_CELLS``, and otherwise an :class:`AccountingError` naming
the channel kind and its size.

Mechanisms state their guarantees as data (:class:`Guarantee` records returned by
``mech.guarantees()``), and :func:`verify` checks each against the channel.  Every check
returns a :class:`CheckResult` subclass with ``satisfied``, ``slack`` and the worst witness.

Construction does not verify a declared guarantee; :func:`verify` does, and the mechanism
contract runs it on every registered family.  A guarantee is a claim kept as data, set from the
constructor's budget and never computed from the channel, so that it can be checked and found
false: the book builds mechanisms that state a paper's published claim in order to show the
violation with its slack and witness.  Verifying at construction would also make building a
mechanism slow (enumeration of up to ``MAX_ENUM_CELLS`` cells) or fail for reasons unrelated to
its arguments (channels whose probabilities underflow at large budgets cannot be enumerated).
Construction checks only the form of a guarantee (a known notion with its parameters); code that
must not proceed on a false claim calls ``verify(mech, raise_on_failure=True)``.

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

import importlib
import pkgutil
from typing import TYPE_CHECKING

from ._core import __all__ as _core_names
from ._core import *  # noqa: F403 - the package re-exports each module's public names

if TYPE_CHECKING:  # the builtin modules' names, for type checkers; at run time every module is found below
    from .context_aware import *  # noqa: F403
    from .fldp import *  # noqa: F403
    from .idldp import *  # noqa: F403
    from .ipldp import *  # noqa: F403
    from .ldp import *  # noqa: F403
    from .lip import *  # noqa: F403
    from .mip import *  # noqa: F403
    from .profile import *  # noqa: F403
    from .uldp import *  # noqa: F403


def _import_every_module() -> list[str]:
    """Import every public module of the package (each notion module registers its notion) and re-export its ``__all__``."""
    exported = list(_core_names)
    namespace = globals()
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if name in exported and namespace[name] is not value:
                raise ImportError(f"{module.__name__} exports {name!r}, which another module of {__name__} exports too")
            namespace[name] = value
            exported.append(name)
    return exported


__all__ = _import_every_module()
