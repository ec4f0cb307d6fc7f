// Every path of a run in id order, for loading a run back into Python (GraphStore.load): the
// kept ones (ids 0..|B|-1, in basis index order, which certificates refer to) and the discarded.
// param: run STRING
MATCH (b:BasisPath {run: $run})
RETURN b.id AS id, b.text AS text, b.kept AS kept
ORDER BY b.id
