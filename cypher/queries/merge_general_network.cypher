// Store a general network (layers and typed connections, docs/general-networks.md) once: a
// Network of kind 'general', a GeneralLayer per layer and a CONNECTS relationship per connection
// in spec order (position). Later runs and ingests of the same network (same key) reuse it.
// Identity connections have taps 0 and weight_offset -1 (no trainable weight); groups is a
// grouped connection's number of groups, 1 for every other kind.
// param: key STRING
// param: name STRING
// param: m INTEGER
// param: H INTEGER
// param: layers LIST<MAP>
// param: connections LIST<MAP>
MERGE (n:Network {key: $key})
ON CREATE SET n.kind = 'general', n.name = $name, n.m = $m, n.H = $H
WITH n
UNWIND $layers AS layer
MERGE (l:GeneralLayer {uid: layer.uid})
ON CREATE SET l.network = $key, l.position = layer.position, l.name = layer.name, l.size = layer.size
MERGE (n)-[:HAS_GENERAL_LAYER]->(l);
UNWIND $connections AS c
MATCH (a:GeneralLayer {uid: c.source})
MATCH (b:GeneralLayer {uid: c.target})
MERGE (a)-[r:CONNECTS {position: c.position}]->(b)
ON CREATE SET r.kind = c.kind, r.taps = c.taps, r.weight_offset = c.weight_offset, r.groups = c.groups
