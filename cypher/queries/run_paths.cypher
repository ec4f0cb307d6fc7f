// Every path of a run in id order, for loading a run back into Python (GraphStore.load): the
// kept ones (ids 0..|B|-1, in basis index order, which certificates refer to) and the discarded;
// a general run's paths also by layers (positions), neurons (global ids) and taps.
// param: run STRING
MATCH (b:BasisPath {run: $run})
RETURN b.id AS id, b.text AS text, b.kept AS kept, b.layers AS layers, b.nodes AS nodes, b.taps AS taps
ORDER BY b.id
