// Certificates: (discarded)-[:CERTIFIED_BY {coef}]->(kept), one per nonzero coefficient.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY CERTIFIED_BY FROM $rows
