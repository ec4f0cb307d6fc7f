// basispath show --path TEXT: one path of a run by its layer:index text, whether it was kept, and
// the DEAH steps that discarded or re-admitted it.
// param: run STRING
// param: text STRING
MATCH (b:BasisPath {run: $run, text: $text})
OPTIONAL MATCH (b)-[:REASON]->(d:Discard)
RETURN b.id AS id, b.text AS text, b.nodes AS nodes, b.layers AS layers, b.kept AS kept,
       collect(d.step) AS steps, collect(d.action) AS actions
