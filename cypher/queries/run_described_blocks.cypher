// The blocks of a described deah-complete run in the ear order (p_0 first); no row for a run
// stored path by path.
// param: run STRING
MATCH (b:DescribedBlock {run: $run})
RETURN b.position AS position, b.substructure AS substructure, b.rule AS rule, b.hop AS hop, b.kept_first AS kept_first,
       b.kept_count AS kept_count, b.discard_first AS discard_first, b.discard_count AS discard_count, b.prefix_count AS prefix_count
ORDER BY position
