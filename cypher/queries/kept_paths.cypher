// The basis of a run: its kept paths in basis order (ids 0..|B|-1), to express any path of the
// network over it (basispath why on a path that was never a candidate).
// param: run STRING
MATCH (b:BasisPath {run: $run})
WHERE b.kept
RETURN b.id AS id, b.text AS text
ORDER BY id
