// Path subdivision chains: Chain t LINKs its U_r sets at positions 1..s_t (U_0 last).
// param: rows LIST<MAP>
UNWIND $rows AS row
MERGE (c:Chain {uid: row.chain_uid})
ON CREATE SET c.run = row.run, c.t = row.t
WITH c, row
MATCH (u:SubdivisionSet {uid: row.set_uid})
CREATE (c)-[:LINK {pos: row.pos}]->(u)
