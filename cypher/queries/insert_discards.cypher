// Bulk insert of discard and repair records (properties by rule: docs/graph-model.md).
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:Discard {uid: row.uid, run: row.run, step: row.step, action: row.action, chain: row.chain, pair: row.pair, shared_pairs: row.shared_pairs, ep: row.ep, ucp_star: row.ucp_star, iep: row.iep, shared: row.shared,
                 substructure: row.substructure, hop: row.hop, crossing: row.crossing, twin: row.twin,
                 differs: row.differs, twin_differs: row.twin_differs, agrees: row.agrees})
