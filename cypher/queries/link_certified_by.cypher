// Certificates: (discarded)-[:CERTIFIED_BY {coef}]->(kept), one per nonzero coefficient.
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (q:BasisPath {uid: row.from})
MATCH (b:BasisPath {uid: row.to})
CREATE (q)-[:CERTIFIED_BY {coef: row.coef}]->(b)
