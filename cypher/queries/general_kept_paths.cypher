// The basis of a general run, in basis order: each kept path's layers (positions), neurons
// (global neuron ids) and taps (-1 on an identity hop), to rebuild it (basispath why).
// param: run STRING
MATCH (b:BasisPath {run: $run})
WHERE b.kept
RETURN b.id AS id, b.layers AS layers, b.nodes AS nodes, b.taps AS taps
ORDER BY id
