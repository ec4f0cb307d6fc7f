// (:Run)-[:DISCARDED]->(:BasisPath) for a batch of discarded paths.
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (r:Run {id: row.from})
MATCH (b:BasisPath {uid: row.to})
CREATE (r)-[:DISCARDED]->(b)
