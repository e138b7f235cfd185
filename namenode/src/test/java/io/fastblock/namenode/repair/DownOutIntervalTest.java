package io.fastblock.namenode.repair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.meta.DownStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ZkSchema;
import io.fastblock.protocol.meta.DownRecord;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The down/out interval ({@code --replace-after-ms}) on real ZooKeeper: six storage "servers" in
 * three racks, each with its own session for its live znode (closing it is the session expiry), and
 * the leader's {@link ChainRepair} stepped round by round on a clock the test moves, so the rules are
 * checked without waiting for wall time.
 */
class DownOutIntervalTest {
    private static final Duration INTERVAL = Duration.ofSeconds(60);
    private static final long T0 = 1_800_000_000_000L;

    @TempDir
    Path dir;
    private TestingServer server;
    private CuratorFramework zk;
    private final Map<String, CuratorFramework> sessions = new HashMap<>();
    private final AtomicLong clock = new AtomicLong(T0);
    private GroupStore groups;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        zk = client();
        ZkSchema.ensure(zk);
        for (int i = 0; i < 6; i++) {
            String id = "s" + i;
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.node(id), MetaJson.write(new NodeRecord(id,
                    "127.0.0.1", 9400 + i, 1L << 40, 1L << 40,
                    Map.of(NodeRecord.LABEL_RACK, "rack" + (i % 3), NodeRecord.LABEL_HOST, "host" + i))));
            goLive(id);
        }
        groups = new GroupStore(zk);
        // Each group spans the three racks (s0,s3: rack0; s1,s4: rack1; s2,s5: rack2).
        assertTrue(groups.createAll(List.of(new GroupRecord(1, 1, List.of("s0", "s1", "s2")),
                new GroupRecord(2, 1, List.of("s4", "s5", "s0")), new GroupRecord(3, 1, List.of("s3", "s4", "s5")))));
    }

    @AfterEach
    void stop() throws Exception {
        for (CuratorFramework c : sessions.values()) {
            c.close();
        }
        zk.close();
        server.close();
    }

    private CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(server.getConnectString(), 10_000, 5_000,
                new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        return c;
    }

    private void goLive(String id) throws Exception {
        CuratorFramework c = client();
        c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
        sessions.put(id, c);
    }

    /** The server's session ends: its ephemeral live znode goes, as on expiry after a kill -9. */
    private void die(String id) {
        sessions.remove(id).close();
    }

    private ChainRepair repair(CuratorFramework client) {
        return new ChainRepair(client, new GroupStore(client), new NodeStore(client), new DownStore(client), 2,
                INTERVAL, clock::get);
    }

    private GroupRecord group(int id) {
        return groups.get(id).orElseThrow().group();
    }

    private DownRecord record(String node) {
        return new DownStore(zk).all().get(node);
    }

    /** Plays the joining storage server: it announces it caught up. */
    private void caughtUp(int groupId, String node) throws Exception {
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.caughtUp(groupId, node));
    }

    @Test
    void aServerBackInsideTheIntervalRejoinsItsOwnGroupsAndNobodyReplacesIt() throws Exception {
        ChainRepair repair = repair(zk);
        die("s0");
        repair.round();
        assertEquals(List.of("s1", "s2"), group(1).members(), "taken out of its chain at once");
        assertEquals(2, group(1).chainVersion(), "chain version bumped");
        assertEquals(List.of("s4", "s5"), group(2).members());
        DownRecord r = record("s0");
        assertEquals(T0, r.downSinceMillis());
        assertEquals(List.of(1, 2), r.groups());
        assertFalse(r.back());

        clock.addAndGet(INTERVAL.toMillis() - 1); // the last millisecond of the interval
        repair.round();
        assertNull(group(1).joining(), "s0's groups wait for it");
        assertNull(group(2).joining());

        goLive("s0");
        clock.addAndGet(1_000);
        repair.round();
        assertEquals("s0", group(1).joining(), "back: it rejoins its own group (catches up by delta)");
        assertEquals("s0", group(2).joining());
        assertTrue(record("s0").back());
        assertNull(group(3).joining(), "an untouched group stays untouched");

        caughtUp(1, "s0");
        caughtUp(2, "s0");
        repair.round();
        assertEquals(List.of("s1", "s2", "s0"), group(1).members(), "rejoined at the tail");
        assertEquals(List.of("s4", "s5", "s0"), group(2).members());
        repair.round();
        assertNull(record("s0"), "nothing waits any more: the record is gone");
    }

    @Test
    void aServerDownPastTheIntervalIsReplacedAndLaterComesBackAsAFreshServer() throws Exception {
        ChainRepair repair = repair(zk);
        die("s0");
        repair.round();
        clock.addAndGet(INTERVAL.toMillis());
        repair.round();
        // Replacements come from rack0 (the survivors are in racks 1 and 2): s3, the only other node there.
        assertEquals("s3", group(1).joining());
        assertEquals("s3", group(2).joining());

        goLive("s0");
        repair.round();
        assertNull(record("s0"), "its groups have another joiner: it is an ordinary server again");
        assertEquals("s3", group(1).joining(), "the replacement is not undone");
        caughtUp(1, "s3");
        caughtUp(2, "s3");
        repair.round();
        assertEquals(List.of("s1", "s2", "s3"), group(1).members());
        assertEquals(List.of("s4", "s5", "s3"), group(2).members());
        repair.round();
        assertTrue(groups.list().stream().noneMatch(g -> g.members().contains("s0") || "s0".equals(g.joining())));
    }

    @Test
    void aNamenodeFailoverKeepsTheDownSinceTime() throws Exception {
        CuratorFramework first = client();
        ChainRepair leader = repair(first);
        die("s0");
        leader.round();
        leader.close();
        first.close(); // the leader namenode is gone; its memory with it

        clock.addAndGet(INTERVAL.toMillis() - 1_000);
        CuratorFramework second = client();
        try (ChainRepair next = repair(second)) {
            next.round();
            assertEquals(T0, record("s0").downSinceMillis(), "the new leader kept the down-since time");
            assertNull(group(1).joining(), "59 s after the loss: still waiting, the interval did not restart");
            clock.addAndGet(1_000);
            next.round();
            assertEquals("s3", group(1).joining(), "60 s after the loss: replaced");
        } finally {
            second.close();
        }
    }

    @Test
    void aGroupDownToOneCopyIsRepairedAtOnceAndTheOthersWait() throws Exception {
        ChainRepair repair = repair(zk);
        die("s0");
        die("s1");
        repair.round();
        assertEquals(List.of("s2"), group(1).members());
        assertNotEquals(null, group(1).joining(), "one copy left is an emergency: no waiting");
        assertNull(group(2).joining(), "group 2 still has two copies: it waits for s0");
        assertNull(group(3).joining());
        // Once the emergency join completes the group has two copies and waits for the rest of the interval.
        caughtUp(1, group(1).joining());
        repair.round();
        assertEquals(2, group(1).members().size());
        repair.round();
        assertNull(group(1).joining(), "back to two copies: waits for s0/s1");
    }

    @Test
    void aDrainingServerThatDiesIsNotWaitedFor() throws Exception {
        new NodeStore(zk).setAdminState("s0", NodeAdminRecord.DRAINING);
        ChainRepair repair = repair(zk);
        die("s0");
        repair.round();
        assertEquals("s3", group(1).joining(), "it was leaving anyway: replaced at once");
    }

    @Test
    void aSecondLossAfterComingBackStartsANewInterval() throws Exception {
        ChainRepair repair = repair(zk);
        die("s0");
        repair.round();
        clock.addAndGet(30_000);
        goLive("s0");
        repair.round();
        assertEquals("s0", group(1).joining());
        clock.addAndGet(40_000); // 70 s after the first loss, mid catch-up
        die("s0");
        repair.round();
        DownRecord r = record("s0");
        assertEquals(T0 + 70_000, r.downSinceMillis(), "a new interval from the second loss");
        assertEquals(List.of(1, 2), r.groups());
        assertNull(group(1).joining(), "the dead joiner is dropped and its group waits again");
    }

    @Test
    void theStatusShowsDownServersAndWhenTheirReplacementStarts() throws Exception {
        try (NameNode namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                "--zk=" + server.getConnectString(), "--oversubscription=0", "--replace-after-ms=600000"))) {
            TestHttp http = new TestHttp(namenode.baseUrl());
            assertEquals(0, http.get("/v1/status").json().get("down").size());
            die("s0");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            JsonNode down = null;
            while (System.nanoTime() < deadline) {
                JsonNode all = http.get("/v1/status").json().get("down");
                if (all.size() == 1 && group(1).members().size() == 2) {
                    down = all.get(0);
                    break;
                }
                Thread.sleep(50);
            }
            assertTrue(down != null, "status never showed s0 down");
            assertEquals("s0", down.get("id").asText());
            assertEquals("waiting", down.get("state").asText());
            assertTrue(down.get("backSince").isNull());
            assertEquals("[1,2]", down.get("groups").toString());
            Instant since = Instant.parse(down.get("downSince").asText());
            assertEquals(since.plusMillis(600_000), Instant.parse(down.get("replaceAt").asText()));
            assertNull(group(1).joining(), "inside the interval nobody replaces s0");

            goLive("s0");
            deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline && !"s0".equals(group(1).joining())) {
                Thread.sleep(50);
            }
            assertEquals("s0", group(1).joining(), "s0 back: it rejoins its own group");
            JsonNode back = http.get("/v1/status").json().get("down").get(0);
            assertEquals("rejoining", back.get("state").asText());
            assertFalse(back.get("backSince").isNull());
        }
    }
}
