// The weight families of a described basis, in basis order: connection, excluded local weight ids,
// and the basis ids first .. first + size - 1 of its paths.
// param: run STRING
MATCH (f:Family {run: $run})
RETURN f.position AS position, f.connection AS connection, f.first AS first, f.size AS size, f.excluded AS excluded
ORDER BY position
