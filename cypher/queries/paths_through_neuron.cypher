// Every path of a run (kept and discarded) through neuron $neuron of layer $layer, by id. The
// neuron's global id (what BasisPath.nodes holds) is the widths of the layers before $layer plus
// $neuron; a layer the network does not have, or a neuron outside its width, gives no row.
// param: run STRING
// param: layer INTEGER
// param: neuron INTEGER
MATCH (:Run {id: $run})-[:`ON`]->(n:Network)-[:HAS_LAYER]->(l:Layer {`index`: $layer})
WHERE 0 <= $neuron AND $neuron < l.width
OPTIONAL MATCH (n)-[:HAS_LAYER]->(before:Layer)
WHERE before.`index` < $layer
// grouped by l: with no such layer there is no group (a bare sum would give a row with 0)
WITH l, coalesce(sum(before.width), 0) + $neuron AS neuron
MATCH (b:BasisPath {run: $run})
WHERE neuron IN b.nodes
RETURN b.id AS id, b.text AS text, b.kept AS kept
ORDER BY id
