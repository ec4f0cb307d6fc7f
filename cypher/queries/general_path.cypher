// One stored path of a general run, by its text (format_general_path: "x:0 -[3]-> h:1 -[id]-> y:1")
// or its id: layers (positions), nodes (global neuron ids), taps (-1 on identity hops), kept.
// param: run STRING
// param: text STRING
// param: id INTEGER
MATCH (b:BasisPath {run: $run})
WHERE b.text = $text OR b.id = $id
RETURN b.id AS id, b.layers AS layers, b.nodes AS nodes, b.taps AS taps, b.kept AS kept
