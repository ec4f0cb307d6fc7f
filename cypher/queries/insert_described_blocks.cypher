// A described deah-complete run: one DescribedBlock per selected substructure, in the ear order
// (position 0 is p_0): its rule ('p0' keeps B_0 whole, 'ear' keeps one path per weight of its new
// hop `hop`), and where its paths sit among the run's path ids: kept ids kept_first ..
// kept_first + kept_count - 1, discarded ids discard_first .. discard_first + discard_count - 1 (the
// first prefix_count of them by the hop rule's "prefix" step, the rest "suffix").
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:DescribedBlock {uid: row.uid, run: row.run, position: row.position, substructure: row.substructure, rule: row.rule,
                         hop: row.hop, kept_first: row.kept_first, kept_count: row.kept_count, discard_first: row.discard_first,
                         discard_count: row.discard_count, prefix_count: row.prefix_count})
