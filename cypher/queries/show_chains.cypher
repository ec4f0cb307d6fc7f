// basispath show: the path subdivision chains of a run, each as its SubdivisionSets in LINK order
// (U_0 last), with the substructure path each set belongs to.
// param: run STRING
MATCH (c:Chain {run: $run})-[l:LINK]->(u:SubdivisionSet)
MATCH (u)-[:OF]->(p:SubstructurePath)
RETURN c.t AS t, l.pos AS pos, p.idx AS r, p.layers AS layers, u.size AS size
ORDER BY t, pos
