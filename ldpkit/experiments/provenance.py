"""Provenance of a run: what ran, on what data, with which code and libraries, on which machine.

``ldpkit reproduce ID`` writes :func:`sidecar` as ``ID.json`` beside ``ID.csv`` (and the figure),
and the book links the same record under every figure.  It holds the ldpkit version and the
commit it comes from (:func:`git_revision`: read live from the checkout of an editable install,
or recorded when the package was built, with whether tracked files had uncommitted changes; or
``"unknown"`` with the reason), the command line, the :class:`~ldpkit.experiments.RunConfig`,
each dataset's :class:`~ldpkit.datasets.DataIdentity` (real / prefix stand-in / stand-in / synthetic, with the
sha256 of the files read or the generator and seed of a stand-in), the versions of Python,
numpy, scipy, cvxpy and pandas, the platform, and the wall time.  ``ldpkit check`` compares a
rerun's record with the reference record stored in the package.

Examples
--------
>>> from ldpkit.experiments.provenance import environment
>>> env = environment()
>>> sorted(env["versions"])[:3], env["ldpkit"] == __import__("ldpkit").__version__
(['cvxpy', 'matplotlib', 'numpy'], True)
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
from importlib import metadata
from typing import Any

from .._buildinfo import revision
from .registry import ExperimentResult

__all__ = ["SCHEMA", "environment", "git_revision", "sidecar"]

#: version of the sidecar's layout (a new field keeps it; a renamed or removed one bumps it)
SCHEMA = 1
_LIBRARIES = ("numpy", "scipy", "cvxpy", "pandas", "matplotlib")


@functools.lru_cache(maxsize=1)
def git_revision() -> dict[str, Any]:
    """The commit this ldpkit comes from: the provenance record's ``environment["git"]``.

    ``{"commit": sha, "dirty": bool, "source": "checkout"}`` when ldpkit runs from a git checkout
    (an editable install: the live state, read once per process), ``{"commit": sha, "dirty": bool,
    "source": "build", "built": date}`` when it was installed from a build of a checkout
    (``pip install .``, a wheel: recorded by ``setup.py`` at build time), else
    ``{"commit": "unknown", "reason": why}`` (e.g. built from an sdist or an archive without
    ``.git``).  ``dirty`` is true when tracked files differed from the commit (untracked files are
    ignored).  Never ``None``.

    Examples
    --------
    >>> rev = git_revision()
    >>> rev["source"] in ("build", "checkout") if rev["commit"] != "unknown" else bool(rev["reason"])
    True
    """
    return revision()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    """The software and machine a run used: ldpkit and git, library versions, Python and platform."""
    from .. import __version__

    return {
        "ldpkit": __version__,
        "git": git_revision(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "versions": {name: _version(name) for name in _LIBRARIES},
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def sidecar(result: ExperimentResult, *, command: str | None = None,
            files: list[str] | None = None) -> dict[str, Any]:
    """The provenance record of ``result`` (module docstring), JSON-ready.

    Parameters
    ----------
    result
        A run of :func:`ldpkit.experiments.run`.
    command
        The command line that made it (default: ``result.command``, the ``ldpkit reproduce``
        command that remakes it).
    files
        Names of the files written beside the record.
    """
    exp, config = result.experiment, result.config
    finished = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    return {
        "schema": SCHEMA,
        "id": exp.id,
        "title": exp.title,
        "paper": exp.paper,
        "item": exp.item,
        "kind": exp.kind,
        "command": command if command is not None else result.command,
        "reproduce": result.command,
        "config": {"repeats": config.repeats, "seed": config.seed, "scale": config.scale, "jobs": config.jobs,
                   "backend": config.backend},
        "labels": dict(result.labels),
        "standins": list(result.standins),
        "datasets": {name: ident.as_dict() for name, ident in result.data.inputs.items()},
        "environment": environment(),
        "finished": finished.isoformat(),
        "seconds": None if result.seconds is None else round(float(result.seconds), 3),
        "files": list(files or []),
    }
