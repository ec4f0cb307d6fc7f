// basispath show --path ID: one path of a run by its id, whether it was kept, and the DEAH steps
// that discarded or re-admitted it.
// param: run STRING
// param: id INTEGER
MATCH (b:BasisPath {run: $run, id: $id})
OPTIONAL MATCH (b)-[:REASON]->(d:Discard)
RETURN b.id AS id, b.text AS text, b.nodes AS nodes, b.layers AS layers, b.kept AS kept,
       collect(d.step) AS steps, collect(d.action) AS actions
