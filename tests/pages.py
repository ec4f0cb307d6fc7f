"""Documentation pages written as notebook sessions (```pycon blocks), run by the tests."""

from __future__ import annotations

import doctest
import re
from pathlib import Path


def run_page(path: Path) -> int:
    """Run the ```pycon blocks of ``path`` in order as one doctest session; fail with the
    doctest report on any mismatch. Returns the number of examples run."""
    page = path.read_text(encoding="utf-8")
    # the ```pycon blocks in order, one session (the fences are not expected output)
    text = "\n\n".join(re.findall(r"^```pycon\n(.*?)^```", page, flags=re.M | re.S))
    test = doctest.DocTestParser().get_doctest(text, {}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
    return runner.tries
