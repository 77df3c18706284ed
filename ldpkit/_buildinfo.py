"""The commit the running ldpkit comes from: read live from a checkout, or recorded when it was built.

``setup.py``'s ``build_py`` step calls :func:`build_record` on the source tree and writes the result
as ``ldpkit/_build_info.json`` into the build tree (never into the source tree), so a wheel, and a
``pip install .``, carries the commit it was built from. At run time :func:`revision` reads, in
this order:

1. the live state of the checkout the package sits in (an editable install, or the source tree on
   ``sys.path``): ``source`` is ``"checkout"``;
2. the record written at build time: ``source`` is ``"build"``;
3. otherwise the commit is ``"unknown"``, and ``reason`` says why (built from an sdist or an
   archive without ``.git``, git missing or failing, ...).

The module uses the standard library only: ``setup.py`` loads this file by its path, before any of
ldpkit's dependencies are installed.

Examples
--------
>>> from ldpkit._buildinfo import revision
>>> rev = revision()
>>> rev["source"] in ("build", "checkout") if rev["commit"] != "unknown" else bool(rev["reason"])
True
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["FILENAME", "UNKNOWN", "build_record", "git_state", "revision"]

#: the build record's file name inside the installed package
FILENAME = "_build_info.json"
#: the commit of a record that could not name one (it then has a ``reason``)
UNKNOWN = "unknown"


def _unknown(reason: str) -> dict[str, Any]:
    return {"commit": UNKNOWN, "reason": reason}


def git_state(root: Path) -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the git checkout at ``root``, else ``{"commit": "unknown", "reason": r}``.

    ``dirty`` is true when tracked files differ from the commit (untracked files are ignored).
    Only ``root`` itself counts as a checkout: a source tree unpacked inside another repository
    has no ``.git`` of its own and is not one.
    """
    if not (root / ".git").exists():
        return _unknown("the source tree has no .git (an sdist or an archive, not a git checkout)")
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=60, check=True).stdout
    except FileNotFoundError:
        return _unknown("git is not installed")
    except subprocess.TimeoutExpired as exc:
        return _unknown(f"git timed out ({' '.join(map(str, exc.cmd[3:]))})")
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or "").strip().splitlines()
        return _unknown(f"git {exc.cmd[3]} failed: {detail[-1] if detail else f'exit status {exc.returncode}'}")
    except OSError as exc:
        return _unknown(f"git could not run: {exc.strerror or exc}")
    return {"commit": commit, "dirty": bool(status.strip())}


def build_record(root: Path) -> dict[str, Any]:
    """What a build of the source tree at ``root`` records: its commit, dirty flag and the build date.

    The date is ``SOURCE_DATE_EPOCH`` when that is set (reproducible builds), else now (UTC).
    Without a commit the record says why, prefixed with "at build time".
    """
    state = git_state(root)
    if state["commit"] == UNKNOWN:
        state["reason"] = f"at build time: {state['reason']}"
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch.isdigit()
            else _dt.datetime.now(_dt.timezone.utc))
    state["built"] = when.replace(microsecond=0).isoformat()
    return state


def revision(package_dir: Path | None = None) -> dict[str, Any]:
    """The commit the ldpkit in ``package_dir`` (default: this one) comes from (module docstring).

    Returns ``{"commit", "dirty", "source"}`` (and ``"built"``, the build date, when the source is
    ``"build"``), or ``{"commit": "unknown", "reason"}``; never raises.
    """
    pkg = Path(__file__).resolve().parent if package_dir is None else Path(package_dir)
    if (pkg.parent / ".git").exists():
        state = git_state(pkg.parent)
        if state["commit"] == UNKNOWN:
            return _unknown(f"ldpkit runs from a git checkout, but {state['reason']}")
        return {**state, "source": "checkout"}
    info = pkg / FILENAME
    if not info.is_file():
        return _unknown("ldpkit runs neither from a git checkout nor from a build that recorded its commit "
                        f"(no {FILENAME}: a source tree without .git on the path, or an installer that skipped "
                        "the build step)")
    try:
        record = json.loads(info.read_text(encoding="utf-8"))
        commit = record["commit"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return _unknown(f"the build record {FILENAME} is unreadable ({type(exc).__name__}: {exc})")
    if commit == UNKNOWN or not isinstance(commit, str) or not commit:
        return _unknown(str(record.get("reason") or f"the build recorded no commit ({FILENAME})"))
    return {"commit": commit, "dirty": bool(record.get("dirty")), "source": "build", "built": record.get("built")}
