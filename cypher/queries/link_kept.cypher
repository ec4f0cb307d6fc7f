// (:Run)-[:KEPT]->(:BasisPath) for a batch of kept paths.
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (r:Run {id: row.from})
MATCH (b:BasisPath {uid: row.to})
CREATE (r)-[:KEPT]->(b)
