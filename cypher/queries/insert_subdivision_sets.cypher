// One SubdivisionSet U_r per selected substructure path, linked to its path by OF.
// param: rows LIST<MAP>
UNWIND $rows AS row
MATCH (p:SubstructurePath {uid: row.path})
CREATE (u:SubdivisionSet {uid: row.uid, run: row.run, r: row.r, size: row.size})
CREATE (u)-[:OF]->(p)
