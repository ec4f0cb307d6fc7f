// The layers a run's substructure paths run through, in order: the network a DEAH engine solved
// (every layer of a layered run; the positions of a general network's core layers). No row: the
// run has no substructure paths (skeleton).
// param: run STRING
MATCH (s:SubstructurePath {run: $run})
UNWIND s.layers AS layer
RETURN DISTINCT layer
ORDER BY layer
