// Every stored network with the number of runs on it.
MATCH (n:Network)
OPTIONAL MATCH (r:Run)-[:`ON`]->(n)
RETURN n.key AS key, n.name AS name, n.widths AS widths, n.skips AS skips, n.m AS m, n.H AS H, count(r) AS runs
ORDER BY n.name, n.key
