// Bulk insert of discard and repair records.
// LadybugDB: bulk load with COPY from a DataFrame (columns in table order: see schema.cypher).
// param: rows DATAFRAME
COPY Discard FROM $rows
