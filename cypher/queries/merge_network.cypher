// Store a network and its layers once; later runs and ingests of the same network reuse it.
// param: key STRING
// param: name STRING
// param: widths LIST<INTEGER>
// param: skips LIST<INTEGER>
// param: m INTEGER
// param: H INTEGER
// param: layers LIST<MAP>
MERGE (n:Network {key: $key})
ON CREATE SET n.kind = 'layered', n.name = $name, n.widths = $widths, n.skips = $skips, n.m = $m, n.H = $H
WITH n
UNWIND $layers AS layer
MERGE (l:Layer {uid: layer.uid})
ON CREATE SET l.network = $key, l.`index` = layer.`index`, l.width = layer.width
MERGE (n)-[:HAS_LAYER]->(l)
