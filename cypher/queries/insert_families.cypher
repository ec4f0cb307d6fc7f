// A described basis: one Family per trainable connection, the paths in(u) + e + out(v) of its
// weights e except `excluded` (local weight ids, sorted), basis ids first .. first + size - 1.
// param: rows LIST<MAP>
UNWIND $rows AS row
CREATE (:Family {uid: row.uid, run: row.run, position: row.position, connection: row.connection, first: row.first, size: row.size, excluded: row.excluded})
