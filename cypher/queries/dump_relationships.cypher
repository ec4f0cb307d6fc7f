// Every relationship of the store with its properties and both end nodes: the other half of a
// canonical dump of the graph (see dump_nodes.cypher).
MATCH (a)-[r]->(b)
RETURN a, r, b
