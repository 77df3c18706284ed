"""Start-up time of ``import ldpkit`` and of the ``ldpkit`` command (a benchmark, not a test).

Times, in fresh interpreter processes and interleaved so that a slow moment of the machine hits
every command alike, the wall time of

* ``python -c "import numpy, scipy"``: the floor, what any user of ldpkit pays anyway;
* ``python -c "import ldpkit"``;
* ``ldpkit --help`` (the console script next to this interpreter, else ``python -m ldpkit --help``);

and prints the median of each (``--runs`` runs, default 11, after one unmeasured warm-up round),
the difference between ``import ldpkit`` and the floor, and whether that difference meets the
target of issue 19: at most 0.3 s.  It also lists the third-party packages and the ``scipy``
submodules that ``import ldpkit`` loads beyond the floor (taken from ``sys.modules`` of a fresh
process), which is where start-up time goes.

The child processes use a private bytecode cache (``PYTHONPYCACHEPREFIX`` in a temporary
directory, filled by the warm-up round), so they measure what a user pays once ``.pyc`` files
exist, whatever ``PYTHONDONTWRITEBYTECODE`` says, and nothing is written into the source tree.
``--inherit-env`` runs them with the environment as it is instead (with
``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` in the checkout, every ldpkit module is
compiled on every start).

Usage: ``python benchmarks/startup.py [--runs R] [--target SECONDS] [--inherit-env]``.  Exit status
0 whether or not the target holds (it is a measurement); numbers depend on the machine and its
file cache.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.3


def _commands() -> dict[str, list[str]]:
    script = shutil.which("ldpkit", path=str(Path(sys.executable).parent))
    cli = [script, "--help"] if script else [sys.executable, "-m", "ldpkit", "--help"]
    return {
        "import numpy, scipy": [sys.executable, "-c", "import numpy, scipy"],
        "import ldpkit": [sys.executable, "-c", "import ldpkit"],
        "ldpkit --help": cli,
    }


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def _loaded(what: str, env: dict[str, str]) -> set[str]:
    """Every module name a fresh interpreter holds after ``import <what>``."""
    code = "import sys\nimport " + what + "\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout
    return set(out.split())


def _measure(args: argparse.Namespace, env: dict[str, str]) -> None:
    commands = _commands()
    for cmd in commands.values():  # warm-up: fills the bytecode cache and the file cache
        _wall(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(_wall(cmd, env))
    median = {name: statistics.median(values) for name, values in times.items()}

    width = max(map(len, commands))
    print(f"median wall time of {args.runs} fresh processes each (min .. max):")
    for name, values in times.items():
        print(f"  {name:<{width}}  {median[name]:6.3f} s   ({min(values):.3f} .. {max(values):.3f})")
    extra = median["import ldpkit"] - median["import numpy, scipy"]
    verdict = "holds" if extra <= args.target else "MISSED"
    print(f"  {'ldpkit - floor':<{width}}  {extra:6.3f} s   target <= {args.target:.2f} s: {verdict}")

    floor, loaded = _loaded("numpy, scipy", env), _loaded("ldpkit", env)
    beyond = loaded - floor
    floor_top = {m.split(".")[0] for m in floor}
    new_top = sorted({m.split(".")[0] for m in beyond} - floor_top - {"ldpkit"} - set(sys.stdlib_module_names))
    new_top = [m for m in new_top if not m.startswith("_")]  # extension modules registered at top level
    print("packages import ldpkit loads that numpy and scipy do not: " + (", ".join(new_top) or "none"))
    for pkg in ("numpy", "scipy"):
        sub = sorted({".".join(m.split(".")[:2]) for m in beyond if m.startswith(pkg + ".")})
        print(f"{pkg} subpackages loaded beyond `import numpy, scipy`: " + (", ".join(sub) or "none"))
    heavy = sorted(m for m in ("ldpkit.datasets", "ldpkit.experiments") if m in loaded)
    print("heavy ldpkit subpackages loaded by import ldpkit: " + (", ".join(heavy) or "none"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11, help="measured runs per command (default 11)")
    ap.add_argument("--target", type=float, default=TARGET_SECONDS,
                    help=f"allowed extra seconds of import ldpkit over numpy + scipy (default {TARGET_SECONDS})")
    ap.add_argument("--inherit-env", action="store_true",
                    help="run the children with this environment as is (no private bytecode cache)")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    import ldpkit

    print(f"ldpkit {ldpkit.__version__}, Python {platform.python_version()}, {platform.platform()}, "
          f"{os.cpu_count()} cores")
    env = dict(os.environ)
    if args.inherit_env:
        print("environment inherited as is"
              + (" (PYTHONDONTWRITEBYTECODE is set)" if env.get("PYTHONDONTWRITEBYTECODE") else ""))
        _measure(args, env)
        return
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="ldpkit-startup-") as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        print("private bytecode cache, written by the warm-up round")
        _measure(args, env)


if __name__ == "__main__":
    main()
