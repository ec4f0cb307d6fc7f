// The connections of a stored general network in spec order: layer positions, kind, taps and
// the first weight id of a trainable connection (-1 for identity).
// param: key STRING
MATCH (:Network {key: $key})-[:HAS_GENERAL_LAYER]->(a:GeneralLayer)-[c:CONNECTS]->(b:GeneralLayer)
RETURN c.position AS position, a.position AS source, b.position AS target, c.kind AS kind, c.taps AS taps,
       c.weight_offset AS weight_offset
ORDER BY position
