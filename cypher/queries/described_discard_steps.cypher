// The discards of a described deah-complete run by the hop rule's step, from its blocks (its
// discards have no Discard node): 'prefix', then 'suffix'; blocks = 0 for a run stored path by path
// (coalesce: LadybugDB sums no rows to null, Neo4j to 0).
// param: run STRING
MATCH (b:DescribedBlock {run: $run})
RETURN count(b) AS blocks, coalesce(sum(b.prefix_count), 0) AS prefix,
       coalesce(sum(b.discard_count), 0) - coalesce(sum(b.prefix_count), 0) AS suffix
