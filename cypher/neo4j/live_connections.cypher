// The user agent of every client connected to the server (basispath's say "basispath pid/N"):
// which processes that wrote a run are still alive (Neo4jStore.live_pids). A DBMS procedure:
// it runs in READ access mode too.
CALL dbms.listConnections() YIELD userAgent
RETURN userAgent
