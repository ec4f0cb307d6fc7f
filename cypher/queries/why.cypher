// Why was a path of a run kept or discarded? Finds the path by its text ("0:1,2:0,4:2", or on a
// general run "x:0 -[3]-> h:1 -[id]-> y:1") or id, with its substructure, every discard/repair
// record and its certificate (CERTIFIED_BY); layers, nodes and taps to rebuild the paths.
// Use from Neo4j Browser: :param run => 'RUN_ID'  :param text => '0:1,2:0,4:2'  :param id => -1
// param: run STRING
// param: text STRING
// param: id INTEGER
MATCH (b:BasisPath {run: $run})
WHERE b.text = $text OR b.id = $id
OPTIONAL MATCH (b)-[:FROM_SUBSTRUCTURE]->(s:SubstructurePath)
OPTIONAL MATCH (b)-[:REASON]->(d:Discard)
WITH b, s, collect(d) AS reasons
OPTIONAL MATCH (b)-[c:CERTIFIED_BY]->(k:BasisPath)
RETURN b.id AS id, b.text AS text, b.kept AS kept, b.layers AS layers, b.nodes AS nodes, b.taps AS taps,
       s.idx AS substructure_idx, s.layers AS substructure, reasons,
       collect({coef: c.coef, id: k.id, text: k.text, layers: k.layers, nodes: k.nodes, taps: k.taps}) AS certificate
