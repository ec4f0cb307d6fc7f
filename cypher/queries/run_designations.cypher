// The designated walks of a described basis (a skeleton run of a general network), one row per
// layer and side; no row for a run whose basis is stored path by path.
// param: run STRING
MATCH (d:Designation {run: $run})
RETURN d.side AS side, d.layer AS layer, d.connection AS connection, d.neurons AS neurons
ORDER BY side, layer
