// (:Run)-[:KEPT]->(:BasisPath) for a batch of kept paths.
// Neo4j: columnar parameters (one list per column, row i is the i-th element of each), which the
// driver packs faster than a list of maps (client CPU measured 1.4x less for paths, 2.3x less
// for relationships) and the server reads as fast; Neo4jStore.bulk sends every column as its own
// parameter when a statement does not use $rows. Ends are found by unique-constraint index seeks
// (cypher/neo4j/schema.cypher). Rows are grouped by `from` first (WITH ... collect), so the Run,
// the same for every row of a run, is looked up once per batch instead of once per row.
// param: from LIST<STRING>
// param: to LIST<STRING>
UNWIND range(0, size($to) - 1) AS i
WITH $from[i] AS run, collect(i) AS rows
MATCH (r:Run {id: run})
UNWIND rows AS i
MATCH (b:BasisPath {uid: $to[i]})
CREATE (r)-[:KEPT]->(b)
