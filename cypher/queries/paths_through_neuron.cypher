// Every path of a run (kept and discarded) through neuron $neuron of layer $layer, by id. $layer is
// a layer index of a layered network, or a layer's position in the spec of a general one. The
// neuron's global id (what BasisPath.nodes holds) is the sizes of the layers before $layer plus
// $neuron; a layer the network does not have, or a neuron outside its size, gives no row.
// param: run STRING
// param: layer INTEGER
// param: neuron INTEGER
MATCH (:Run {id: $run})-[:`ON`]->(n:Network)
OPTIONAL MATCH (n)-[:HAS_LAYER]->(l:Layer {`index`: $layer})
OPTIONAL MATCH (n)-[:HAS_GENERAL_LAYER]->(g:GeneralLayer {position: $layer})
WITH n, coalesce(l.width, g.size) AS size
WHERE size IS NOT NULL AND 0 <= $neuron AND $neuron < size
OPTIONAL MATCH (n)-[:HAS_LAYER]->(before:Layer)
WHERE before.`index` < $layer
// grouped by n: with no such layer there is no group (a bare sum would give a row with 0)
WITH n, coalesce(sum(before.width), 0) AS layered
OPTIONAL MATCH (n)-[:HAS_GENERAL_LAYER]->(earlier:GeneralLayer)
WHERE earlier.position < $layer
WITH n, layered, coalesce(sum(earlier.size), 0) AS general
WITH layered + general + $neuron AS neuron
MATCH (b:BasisPath {run: $run})
WHERE neuron IN b.nodes
RETURN b.id AS id, b.text AS text, b.kept AS kept
ORDER BY id
