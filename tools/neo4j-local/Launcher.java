// A local Neo4j Community server for basispath-graph: the DBMS embedded in this process with the
// Bolt connector on 127.0.0.1 and authentication on. Started and stopped by tools/neo4j_local.py.
//
//   java -cp '<lib>/*:<classes>' Launcher HOME PORT PAGECACHE_MB
//
// The password is read from HOME/password (never from the command line, which `ps` shows) and
// set for the user neo4j on every start, so the file is the single source of truth. Once Bolt
// answers, the line "READY" is printed; SIGTERM shuts the DBMS down cleanly (checkpoint).

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

public final class Launcher {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Launcher HOME PORT PAGECACHE_MB");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        long pageCacheMb = Long.parseLong(args[2]);
        String password = Files.readString(home.resolve("password"), StandardCharsets.UTF_8).strip();

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home.resolve("dbms"))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                // A development and test server: nobody restores from its transaction logs, and
                // the default (two days of them, each file preallocated to 256 MiB) filled the
                // CI machine's disk. Keep only what recovery needs, written as it grows.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "keep_none")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }));

        // Embedded transactions run with full rights, so the password is set here rather than
        // through neo4j-admin (which is not part of the libraries).
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", password));
        } catch (RuntimeException e) {
            // Neo4j refuses to set the password it already has; anything else is a real failure.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("READY");
        System.out.flush();
        stopped.await();
    }
}
