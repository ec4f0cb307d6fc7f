"""Algorithm DEAH (paper, Section 4): Step 1 substructures, Step 2 Subroutine, Step 3 SDVChain."""
