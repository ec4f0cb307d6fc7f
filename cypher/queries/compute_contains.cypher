// U_r membership: a SubdivisionSet CONTAINS every substructure path of the run (all of P^S)
// that strictly subdivides its own path.
// param: run STRING
MATCH (u:SubdivisionSet {run: $run})-[:OF]->(q:SubstructurePath)
MATCH (p:SubstructurePath {run: $run})
WHERE size(p.layers) > size(q.layers) AND all(l IN q.layers WHERE l IN p.layers)
CREATE (u)-[:CONTAINS]->(p)
