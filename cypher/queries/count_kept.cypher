// Number of kept basis paths of a run (m - H for a certified run).
// param: run STRING
MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath)
RETURN count(b) AS n
