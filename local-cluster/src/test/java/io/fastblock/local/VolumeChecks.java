package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.function.Predicate;

/** What the end-to-end tests check about a volume: what an initiator reads, and what every replica holds. */
final class VolumeChecks {
    static final long MIB = 1024 * 1024;

    private VolumeChecks() {
    }

    /** Writes {@code file} from offset 0 of the volume through the gateway, as an initiator would. */
    static void write(LocalCluster cluster, String volume, Path file) throws Exception {
        ExternalCommand.ok(300, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", file.toString(),
                cluster.iscsiUrl(volume));
    }

    /** Reads the whole volume through the gateway: {@code pattern} first, zeros after it. */
    static void assertReadsBack(LocalCluster cluster, String volume, byte[] pattern, long volumeSize, Path scratch)
            throws Exception {
        Path out = scratch.resolve(volume + "-readback.raw");
        Files.deleteIfExists(out);
        ExternalCommand.ok(300, "qemu-img", "convert", "-f", "raw", "-O", "raw", cluster.iscsiUrl(volume),
                out.toString());
        try {
            assertImageHolds(out, volume, pattern, volumeSize);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** A raw image read out of a volume holds {@code pattern} first and zeros after it. */
    static void assertImageHolds(Path image, String volume, byte[] pattern, long volumeSize) throws Exception {
        assertEquals(volumeSize, Files.size(image));
        MessageDigest want = MessageDigest.getInstance("SHA-256");
        want.update(pattern);
        MessageDigest got = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[(int) MIB];
        long firstMismatch = -1;
        try (InputStream in = Files.newInputStream(image)) {
            long pos = 0;
            int n;
            while ((n = in.readNBytes(buf, 0, buf.length)) > 0) {
                int head = (int) Math.max(0, Math.min(n, pattern.length - pos));
                got.update(buf, 0, head);
                if (firstMismatch < 0 && head > 0 && !Arrays.equals(buf, 0, head, pattern, (int) pos, (int) pos + head)) {
                    firstMismatch = pos;
                }
                assertTrue(allZero(buf, head, n), "non-zero bytes past the written data near offset " + pos);
                pos += n;
            }
        }
        assertEquals(HexFormat.of().formatHex(want.digest()), HexFormat.of().formatHex(got.digest()),
                "volume " + volume + " differs from what was written, first at MiB " + firstMismatch / MIB);
    }

    /** Every member of every chunk's group holds the pattern, read from its own copy over the storage protocol. */
    static void assertReplicasHold(NamenodeAdmin admin, String volume, byte[] pattern, int expectedMembers)
            throws Exception {
        JsonNode vol = admin.get("/v1/volumes/" + volume).body();
        long volumeId = vol.get("id").asLong();
        long chunkSize = vol.get("chunkSize").asLong();
        // Storage servers refuse epochs older than the volume's lease, which the writing gateway took.
        long epoch = admin.get("/v1/volumes/" + volume + "/lease").body().get("epoch").asLong();
        for (int chunk = 0; chunk < pattern.length / chunkSize; chunk++) {
            JsonNode lookup = admin.get("/v1/volumes/" + volume + "/chunks/" + chunk).body();
            assertTrue(lookup.get("allocated").asBoolean(), "chunk " + chunk + " allocated");
            JsonNode group = lookup.get("group");
            ChainAddress chain = new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), epoch);
            assertEquals(expectedMembers, group.get("members").size(), "members of group " + group);
            byte[] expected = Arrays.copyOfRange(pattern, (int) (chunk * chunkSize), (int) ((chunk + 1) * chunkSize));
            for (JsonNode member : group.get("members")) {
                byte[] copy = readReplica(member.get("host").asText(), member.get("port").asInt(), chain,
                        new ChunkId(volumeId, chunk), (int) chunkSize);
                assertArrayEquals(expected, copy, "replica " + member.get("id").asText() + " chunk " + chunk);
            }
        }
    }

    /** Polls the namenode's groups until every one satisfies {@code condition}. */
    static void awaitGroups(NamenodeAdmin admin, Predicate<JsonNode> condition, long timeoutSeconds, String what)
            throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        JsonNode groups = null;
        while (System.nanoTime() < deadline) {
            groups = admin.get("/v1/groups").body().get("groups");
            boolean all = groups.size() > 0;
            for (JsonNode g : groups) {
                all &= condition.test(g);
            }
            if (all) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("groups did not reach '" + what + "' within " + timeoutSeconds + " s: " + groups);
    }

    static boolean hasMember(JsonNode group, String nodeId) {
        for (JsonNode m : group.get("members")) {
            if (m.get("id").asText().equals(nodeId)) {
                return true;
            }
        }
        return false;
    }

    static boolean healed(JsonNode group) {
        JsonNode joining = group.path("joining");
        return group.get("members").size() == 3 && (joining.isNull() || joining.isMissingNode());
    }

    static byte[] readReplica(String host, int port, ChainAddress chain, ChunkId chunk, int chunkSize)
            throws IOException {
        byte[] all = new byte[chunkSize];
        try (StorageProbe probe = new StorageProbe(host, port)) {
            for (int off = 0; off < chunkSize; off += (int) MIB) {
                StorageResponse r = probe.read(chain, chunk, off, (int) MIB);
                try {
                    assertEquals(Status.OK, r.status(), r.message());
                    assertEquals(MIB, r.data().readableBytes());
                    r.data().getBytes(r.data().readerIndex(), all, off, (int) MIB);
                } finally {
                    r.data().release();
                }
            }
        }
        return all;
    }

    static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
