package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Against a real ZooKeeper: reads sent together come back in their slots; a missing znode is null. */
class ZkReadsTest extends ZkTestSupport {
    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void readsAndListingsComeBackInTheirSlots() throws Exception {
        zk.create().creatingParentsIfNeeded().forPath("/t/a", bytes("alpha"));
        zk.create().creatingParentsIfNeeded().forPath("/t/b", bytes("beta"));
        zk.create().creatingParentsIfNeeded().forPath("/t/b/c");
        ZkReads reads = new ZkReads(zk, "test reads");
        int b = reads.data("/t/b");
        int listing = reads.children("/t");
        int missing = reads.data("/t/none");
        int a = reads.data("/t/a");
        int missingListing = reads.children("/none");
        reads.run();
        assertArrayEquals(bytes("alpha"), reads.data(a));
        assertArrayEquals(bytes("beta"), reads.data(b));
        assertEquals(List.of("a", "b"), reads.children(listing).stream().sorted().toList());
        assertNull(reads.data(missing));
        assertNull(reads.children(missingListing));
    }

    @Test
    void nothingToReadReturnsAtOnce() {
        assertTrue(new ZkReads(zk, "empty").run() != null);
    }

    @Test
    void withoutZooKeeperTheBatchFailsAsUnavailableNamingWhatItRead() throws Exception {
        zk.create().creatingParentsIfNeeded().forPath("/t/a", bytes("alpha"));
        server.stop();
        ZkReads reads = new ZkReads(zk, "read the test nodes");
        reads.data("/t/a");
        reads.children("/t");
        MetadataUnavailableException e = assertThrows(MetadataUnavailableException.class, reads::run);
        assertTrue(e.getMessage().startsWith("read the test nodes: "), e.getMessage());
    }
}
