// The discards of a described deah-complete run by the hop rule's step, from its blocks (its
// discards have no Discard node): 'prefix', then 'suffix'; blocks = 0 for a run stored path by path.
// param: run STRING
MATCH (b:DescribedBlock {run: $run})
RETURN count(b) AS blocks, sum(b.prefix_count) AS prefix, sum(b.discard_count) - sum(b.prefix_count) AS suffix
