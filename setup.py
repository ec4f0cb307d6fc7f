"""Build hook: the wheel carries the top-level cypher/ query library as basispath_graph/cypher.

The repo keeps exactly one copy of the queries, the top-level ``cypher/`` (linted, reviewed and
read there by editable installs and tests). Packaging copies it at build time instead of committing
a second copy or a symlink inside the package:

- sdist: MANIFEST.in grafts ``cypher/`` at the top level, so an sdist builds like the checkout;
- wheel: ``build_py`` below copies ``cypher/`` to ``<build_lib>/basispath_graph/cypher``, so the
  installed package holds it and ``basispath_graph.store.library.cypher_dir()`` finds it with
  ``importlib.resources`` (no checkout, no BASISPATH_CYPHER_DIR needed);
- editable installs (``pip install -e .``) import the source tree, whose package has no cypher/;
  ``cypher_dir()`` then falls back to the checkout's top-level folder, so edits to a query take
  effect without reinstalling. The copy is skipped in editable mode for that reason.

It also builds the one C extension, ``basispath_graph.linalg.greedy_mod_p_ext`` (the loop of the
greedy elimination mod p, ``linalg/greedy_mod_p.py``): plain C against Python's headers, no
numpy headers. It is optional: without a compiler the install goes on without it, and
``greedy_mod_p`` uses Python's elimination for every input (correct, about 20x slower on big
cores; ``greedy_mod_p.COMPILED`` says which).

Everything else stays in pyproject.toml; this file adds the copy and the extension.
"""

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class build_py_with_cypher(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the source tree is imported; cypher_dir() reads the checkout's cypher/
        src = ROOT / "cypher"
        if not (src / "queries").is_dir():
            raise SystemExit(f"cannot package the query library: {src}/queries not found")
        dst = Path(self.build_lib) / "basispath_graph" / "cypher"
        if dst.exists():
            shutil.rmtree(dst)  # a stale build/ must not keep deleted queries
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*~", ".*"))


setup(
    cmdclass={"build_py": build_py_with_cypher},
    ext_modules=[Extension("basispath_graph.linalg.greedy_mod_p_ext", ["basispath_graph/linalg/greedy_mod_p_ext.c"], optional=True)],
)
