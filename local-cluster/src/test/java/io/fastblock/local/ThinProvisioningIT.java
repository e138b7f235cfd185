package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fastblock.gateway.iscsi.conformance.CunitOutput;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.client.BlockingStorageClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Discards through iSCSI give space back on every replica of a real cluster: QEMU's
 * {@code qemu-io -c discard} (UNMAP) on an {@code iscsi://} URL, then the storage servers' own
 * EXTENTS show nothing in the discarded ranges, reads return zeros there and the data elsewhere,
 * and GET LBA STATUS (as {@code qemu-img map} asks it) reports the ranges deallocated. And
 * libiscsi's whole conformance suite passes on a thin volume of the cluster, with every server
 * still up after it.
 */
class ThinProvisioningIT {
    private static final long CHUNK = 4 * MIB;
    private static final int DATA = (int) (16 * MIB);

    @TempDir
    static Path dir;
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=4M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        assertEquals(201, cluster.admin().createVolume("thin", "64M", "4M").status());
        assertEquals(201, cluster.admin().createOpenExport("thin").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void discardGivesSpaceBackOnEveryReplicaAndReadsZeros() throws Exception {
        byte[] pattern = new byte[DATA];
        new Random(7).nextBytes(pattern);
        Path f = dir.resolve("pattern.raw");
        Files.write(f, pattern);
        VolumeChecks.write(cluster, "thin", f);
        assertEquals(List.of(List.of(0L, CHUNK)), allocated(0), "a written chunk is allocated on its replicas");

        // chunks 0 and 1 whole, and the second MiB of chunk 2
        String url = cluster.iscsiUrl("thin");
        ExternalCommand.Result discard = ExternalCommand.ok(120, "qemu-io", "-f", "raw", "-d", "unmap",
                "-c", "discard 0 8M", "-c", "discard 9M 1M", url);
        assertTrue(discard.output().contains("discard 8388608/8388608 bytes at offset 0")
                && discard.output().contains("discard 1048576/1048576 bytes at offset 9437184"), discard.output());

        for (int chunk : new int[] {0, 1}) {
            assertEquals(List.of(), allocated(chunk), "chunk " + chunk + " given back on every replica");
        }
        assertEquals(List.of(List.of(0L, MIB), List.of(2 * MIB, 2 * MIB)), allocated(2));
        assertEquals(List.of(List.of(0L, CHUNK)), allocated(3), "not discarded");

        byte[] expected = pattern.clone();
        Arrays.fill(expected, 0, (int) (8 * MIB), (byte) 0);
        Arrays.fill(expected, (int) (9 * MIB), (int) (10 * MIB), (byte) 0);
        VolumeChecks.assertReadsBack(cluster, "thin", expected, 64 * MIB, dir);

        // GET LBA STATUS, as QEMU's iSCSI driver asks it for qemu-img map: data only where it is left.
        String map = ExternalCommand.ok(120, "qemu-img", "map", "-f", "raw", "--output=json", url).output();
        List<List<Long>> data = new ArrayList<>();
        for (JsonNode e : new ObjectMapper().readTree(map)) {
            if (e.get("data").asBoolean()) {
                long start = e.get("start").asLong();
                long length = e.get("length").asLong();
                if (!data.isEmpty() && data.get(data.size() - 1).get(0) + data.get(data.size() - 1).get(1) == start) {
                    List<Long> last = data.remove(data.size() - 1);
                    data.add(List.of(last.get(0), last.get(1) + length));
                } else {
                    data.add(List.of(start, length));
                }
            }
        }
        assertEquals(List.of(List.of(8 * MIB, MIB), List.of(10 * MIB, 6 * MIB)), data, map);
    }

    /** The allocated ranges of {@code chunk} on each replica, checked to be the same on all of them. */
    private static List<List<Long>> allocated(int chunk) throws Exception {
        NamenodeAdmin admin = cluster.admin();
        JsonNode vol = admin.get("/v1/volumes/thin").body();
        long epoch = admin.get("/v1/volumes/thin/lease").body().get("epoch").asLong();
        JsonNode lookup = admin.get("/v1/volumes/thin/chunks/" + chunk).body();
        assertTrue(lookup.get("allocated").asBoolean(), lookup.toString());
        JsonNode group = lookup.get("group");
        ChainAddress chain = new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), epoch);
        List<List<Long>> first = null;
        for (JsonNode m : group.get("members")) {
            try (BlockingStorageClient c = new BlockingStorageClient(m.get("host").asText(), m.get("port").asInt(),
                    Duration.ofSeconds(10))) {
                Extents e = c.extents(chain, new ChunkId(vol.get("id").asLong(), chunk), 0, (int) CHUNK);
                List<List<Long>> ranges = e.ranges().stream().map(r -> List.of(r.offset(), (long) r.length())).toList();
                if (first == null) {
                    first = ranges;
                } else {
                    assertEquals(first, ranges, "replica " + m.get("id").asText() + " of chunk " + chunk);
                }
            }
        }
        return first;
    }

    /**
     * The suite {@code IscsiConformanceIT} runs on a file LU, here through the FAST client, the
     * chains and the chunk files, on one 64 MiB chunk. Its UNMAP and WRITE SAME tests cut the chunk's
     * files and read them back, which killed storage servers (SIGBUS: a trim cut a file under its read
     * mapping, see ChunkFile.trim). The suite itself still passed then, 202 tests, since the chain
     * failed over: so the servers must all still be running after it.
     */
    @Test
    void iscsiTestCuPassesOnAThinClusterVolumeAndNoServerDies() throws Exception {
        assertEquals(201, cluster.admin().createVolume("conformance", "64M", "64M").status());
        assertEquals(201, cluster.admin().createOpenExport("conformance").status());
        String url = cluster.iscsiUrl("conformance");
        ExternalCommand.Result r = ExternalCommand.run(300, "iscsi-test-cu", "-d", "-v", "-t", "ALL", url, url);
        List<CunitOutput.Result> results = CunitOutput.parse(r.output());
        long passed = CunitOutput.count(results, CunitOutput.Outcome.PASSED);
        long failed = CunitOutput.count(results, CunitOutput.Outcome.FAILED);
        String summary = CunitOutput.summary(results);
        System.out.println(summary);
        for (Map.Entry<String, ChildProcess> p : cluster.processes().entrySet()) {
            assertTrue(p.getValue().isAlive(), p.getKey() + " died during the suite; " + summary);
        }
        assertTrue(results.size() > 200, "the suite ran (" + results.size() + " results)");
        assertEquals(0, failed, summary + "\n" + CunitOutput.failures(results));
        assertTrue(passed >= 202, summary);
    }
}
