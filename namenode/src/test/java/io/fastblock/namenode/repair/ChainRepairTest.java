package io.fastblock.namenode.repair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
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
 * The leader's chain repair against real ZooKeeper: six storage "servers" in three racks, each with
 * its own ZooKeeper session for its live znode; this test plays the storage side of catching up by
 * creating the caught-up markers.
 */
class ChainRepairTest {
    @TempDir
    Path dir;
    private TestingServer zkServer;
    private NameNode namenode;
    private CuratorFramework admin;
    private final Map<String, CuratorFramework> sessions = new HashMap<>();
    private final Map<String, String> rack = new HashMap<>();

    @BeforeEach
    void start() throws Exception {
        zkServer = new TestingServer(true);
        admin = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        admin.start();
        for (int i = 0; i < 6; i++) {
            String id = "s" + i;
            rack.put(id, "rack" + (i % 3));
            admin.create().creatingParentsIfNeeded().forPath(ZkPaths.node(id), MetaJson.write(new NodeRecord(id,
                    "127.0.0.1", 9400 + i, 1L << 40, 1L << 40, Map.of("rack", "rack" + (i % 3), "host", "host" + i))));
            goLive(id);
        }
        // Started once all six are live, so it forms one group per node (formation happens once).
        namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                "--zk=" + zkServer.getConnectString(), "--oversubscription=0", "--max-concurrent-joins=2",
                "--replace-after-ms=0")); // these tests replace a lost member at once (DownOutIntervalTest: the interval)
        awaitTrue(() -> groups().size() == 6, "groups formed");
    }

    @AfterEach
    void stop() throws Exception {
        for (CuratorFramework c : sessions.values()) {
            c.close();
        }
        admin.close();
        namenode.close();
        zkServer.close();
    }

    private void goLive(String id) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        c.start();
        c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
        sessions.put(id, c);
    }

    /** The node's session ends: its ephemeral live znode goes, as on session expiry. */
    private void die(String id) {
        sessions.remove(id).close();
    }

    private List<GroupRecord> groups() throws Exception {
        List<GroupRecord> out = new ArrayList<>();
        for (String child : admin.getChildren().forPath(ZkPaths.GROUPS)) {
            out.add(MetaJson.read(admin.getData().forPath(ZkPaths.GROUPS + "/" + child), GroupRecord.class));
        }
        return out;
    }

    /** Plays the storage side until no group has a joining node: each joining node "catches up". */
    private int catchUpAll(int[] maxSeenConcurrent) throws Exception {
        return catchUpAll(maxSeenConcurrent, gs -> true);
    }

    /** As {@link #catchUpAll(int[])}, and also until {@code done} holds for the groups. */
    private int catchUpAll(int[] maxSeenConcurrent, java.util.function.Predicate<List<GroupRecord>> done)
            throws Exception {
        int completed = 0;
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            List<GroupRecord> gs = groups();
            int joining = 0;
            for (GroupRecord g : gs) {
                if (g.joining() != null) {
                    joining++;
                    assertFalse(g.members().contains(g.joining()));
                    if (admin.checkExists().forPath(ZkPaths.caughtUp(g.id(), g.joining())) == null) {
                        admin.create().creatingParentsIfNeeded().forPath(ZkPaths.caughtUp(g.id(), g.joining()));
                        completed++;
                    }
                }
            }
            maxSeenConcurrent[0] = Math.max(maxSeenConcurrent[0], joining);
            boolean healthy = gs.stream().allMatch(g -> g.members().size() == 3 && g.joining() == null);
            if (joining == 0 && healthy && done.test(gs)) {
                return completed;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("groups did not heal: " + groups());
    }

    private static void awaitTrue(BooleanSupplierX check, String what) throws Exception {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            if (check.get()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out waiting for " + what);
    }

    @FunctionalInterface
    private interface BooleanSupplierX {
        boolean get() throws Exception;
    }

    private void assertThreeRacksEverywhere() throws Exception {
        for (GroupRecord g : groups()) {
            Set<String> racks = new HashSet<>();
            g.members().forEach(m -> racks.add(rack.get(m)));
            assertEquals(3, racks.size(), "group " + g + " is not spread over 3 racks");
        }
    }

    @Test
    void aFailedNodeIsRemovedReplacedAcrossRacksAndTheReplacementJoinsAtTheTail() throws Exception {
        assertThreeRacksEverywhere();
        Map<Integer, GroupRecord> before = new HashMap<>();
        for (GroupRecord g : groups()) {
            before.put(g.id(), g);
        }
        die("s0");
        awaitTrue(() -> groups().stream().noneMatch(g -> g.members().contains("s0")), "s0 removed from its chains");
        for (GroupRecord g : groups()) {
            GroupRecord old = before.get(g.id());
            if (old.members().contains("s0")) {
                assertTrue(g.chainVersion() > old.chainVersion(), "version bumped in " + g);
                List<String> survivors = new ArrayList<>(old.members());
                survivors.remove("s0");
                assertEquals(survivors, g.members().subList(0, 2), "survivors keep their order in " + g);
            } else {
                assertEquals(old, g, "untouched group " + g.id());
            }
        }
        int[] concurrent = {0};
        int joins = catchUpAll(concurrent);
        assertEquals(3, joins, "s0 was in 3 groups");
        assertTrue(concurrent[0] <= 2, "at most 2 joins at once, saw " + concurrent[0]);
        assertThreeRacksEverywhere();
        for (GroupRecord g : groups()) {
            GroupRecord old = before.get(g.id());
            if (old.members().contains("s0")) {
                assertEquals("rack0", rack.get(g.tail()), "the replacement joined at the tail: " + g);
                assertEquals(old.chainVersion() + 2, g.chainVersion(), "one bump to remove, one to add: " + g);
            }
        }
        // The status shows a healthy cluster again.
        TestHttp http = new TestHttp(namenode.baseUrl());
        assertEquals(0, http.get("/v1/status").json().get("degradedGroups").asInt());
    }

    @Test
    void twoFailuresInOneGroupLeaveTheLastCopyAsHeadAndTail() throws Exception {
        GroupRecord victim = groups().get(0);
        die(victim.members().get(0));
        die(victim.members().get(2));
        awaitTrue(() -> groups().stream().filter(g -> g.id() == victim.id()).findFirst().orElseThrow()
                .members().equals(List.of(victim.members().get(1))) || groups().stream()
                .filter(g -> g.id() == victim.id()).findFirst().orElseThrow().members().get(0)
                .equals(victim.members().get(1)), "group down to its middle");
        catchUpAll(new int[1], gs -> gs.stream().noneMatch(g -> g.members().contains(victim.members().get(0))
                || g.members().contains(victim.members().get(2))));
        for (GroupRecord g : groups()) {
            assertEquals(3, g.members().size());
        }
    }

    @Test
    void drainingMovesTheNodeOutThenDecommissionsIt() throws Exception {
        TestHttp http = new TestHttp(namenode.baseUrl());
        assertEquals(202, http.post("/v1/nodes/s1/drain", "").status());
        int[] concurrent = {0};
        catchUpAll(concurrent, gs -> gs.stream().noneMatch(g -> g.members().contains("s1")));
        awaitTrue(() -> "decommissioned".equals(http.get("/v1/nodes").json().get("nodes").get(1).get("state").asText()),
                "s1 decommissioned");
        assertTrue(groups().stream().noneMatch(g -> g.members().contains("s1")));
        assertEquals(1, concurrent[0], "a drain moves one group at a time");
        assertThreeRacksEverywhere();
        // A decommissioned node is never chosen again: kill another, replacements avoid s1.
        die("s2");
        catchUpAll(new int[1], gs -> gs.stream().noneMatch(g -> g.members().contains("s2")));
        assertTrue(groups().stream().noneMatch(g -> g.members().contains("s1") || g.members().contains("s2")));
    }
}
