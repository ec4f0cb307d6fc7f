// (:BasisPath)-[:FROM_SUBSTRUCTURE]->(:SubstructurePath) for a batch of paths.
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (b:BasisPath {uid: row.from})
MATCH (p:SubstructurePath {uid: row.to})
CREATE (b)-[:FROM_SUBSTRUCTURE]->(p)
