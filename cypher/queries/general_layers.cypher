// The layers of a stored general network in spec order (to rebuild it: store/general_networks.py).
// param: key STRING
MATCH (:Network {key: $key})-[:HAS_GENERAL_LAYER]->(l:GeneralLayer)
RETURN l.position AS position, l.name AS name, l.size AS size
ORDER BY position
