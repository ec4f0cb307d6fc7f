// (:BasisPath)-[:REASON]->(:Discard): why a path was discarded (or repaired).
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (b:BasisPath {uid: row.from})
MATCH (d:Discard {uid: row.to})
CREATE (b)-[:REASON]->(d)
