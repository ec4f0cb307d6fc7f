// A described basis (docs/graph-model.md, "Described bases"): a skeleton run's designated walks, one
// Designation per layer and side. side 'in': the layer's designated connection in (its position in
// the spec) and, for each of the layer's neurons, the neuron of that connection's source it comes
// from; side 'out': the connection out and the neuron of its target each neuron goes to.
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:Designation {uid: row.uid, run: row.run, side: row.side, layer: row.layer, connection: row.connection, neurons: row.neurons})
