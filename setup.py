"""Build steps pyproject.toml cannot state: everything else about the package is declared there.

1. ``build_py`` also writes ``ldpkit/_build_info.json`` into the build tree: the commit the
   package was built from, whether tracked files had uncommitted changes, and the build date
   (``ldpkit/_buildinfo.py``, loaded here by its path because ldpkit's dependencies are not
   installed at build time). So ``pip install .`` and a wheel carry their commit, and every
   provenance record ``ldpkit reproduce`` writes names it. A build from a tree without ``.git``
   (an sdist, an archive) records the commit as "unknown" with the reason. An editable install
   writes nothing: it reads the checkout's live state at run time.
2. The build tree is a fresh temporary directory, removed when the build ends, instead of
   ``build/`` in the checkout: the checkout stays clean, and a file deleted from the sources can
   never reach a wheel from a stale ``build/lib``. ``--build-base`` on the command line still
   overrides it.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import shutil
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ldpkit_buildinfo", ROOT / "ldpkit" / "_buildinfo.py")
assert _spec is not None and _spec.loader is not None
buildinfo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(buildinfo)


class BuildPyWithCommit(build_py):
    """``build_py``, then the build record ``ldpkit/_build_info.json`` beside the copied modules."""

    def _record_path(self) -> Path:
        return Path(self.build_lib) / "ldpkit" / buildinfo.FILENAME

    def _editable(self) -> bool:
        return bool(getattr(self, "editable_mode", False))

    def run(self) -> None:
        super().run()
        if self._editable() or self.dry_run:
            return
        target = self._record_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(buildinfo.build_record(ROOT), indent=2) + "\n", encoding="utf-8")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        return outputs if self._editable() else [*outputs, str(self._record_path())]


_build_base = tempfile.mkdtemp(prefix="ldpkit-build-")
atexit.register(shutil.rmtree, _build_base, ignore_errors=True)

setup(cmdclass={"build_py": BuildPyWithCommit}, options={"build": {"build_base": _build_base}})
