"""The docstring examples of the algorithm modules run (Fig. 1(b) of the paper)."""

import doctest

import pytest

from basispath_graph import skeleton, subroutine
from basispath_graph.deah import step1_substructures


@pytest.mark.parametrize("module", [step1_substructures, subroutine, skeleton])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
