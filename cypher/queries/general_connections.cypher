// The connections of a stored general network in spec order: layer positions, kind, taps, the
// first weight id of a trainable connection (-1 for identity) and groups (1 where a store made
// before grouped connections has none).
// param: key STRING
MATCH (:Network {key: $key})-[:HAS_GENERAL_LAYER]->(a:GeneralLayer)-[c:CONNECTS]->(b:GeneralLayer)
RETURN c.position AS position, a.position AS source, b.position AS target, c.kind AS kind, c.taps AS taps,
       c.weight_offset AS weight_offset, coalesce(c.groups, 1) AS groups
ORDER BY position
