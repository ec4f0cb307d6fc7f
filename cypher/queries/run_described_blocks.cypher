// The blocks of a described deah-complete run in the ear order (p_0 first); no row for a run
// stored path by path.
// param: run STRING
MATCH (b:DescribedBlock {run: $run})
RETURN b.position AS position, b.substructure AS substructure, b.rule AS rule, b.hop AS hop, b.kept_first AS kept_first,
       b.kept AS kept, b.discard_first AS discard_first, b.discards AS discards, b.prefix AS prefix
ORDER BY position
