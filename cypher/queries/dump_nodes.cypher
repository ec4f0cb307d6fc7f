// Every node of the store with all its properties: one half of a canonical dump of the graph
// (tests/reliability compare two stores, or LadybugDB with Neo4j). Run ids and timestamps
// differ between runs by design; the caller normalises them.
MATCH (n)
RETURN n
