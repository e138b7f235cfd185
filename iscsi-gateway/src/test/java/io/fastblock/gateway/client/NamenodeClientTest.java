package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NamenodeClientTest {
    private FakeNamenode namenode;
    private NamenodeClient client;

    @BeforeEach
    void start() throws Exception {
        namenode = new FakeNamenode(List.of(new NodeAddress("127.0.0.1", 9401), new NodeAddress("127.0.0.1", 9402),
                new NodeAddress("127.0.0.1", 9403)));
        namenode.addVolume("vol1", 17, 10L << 30, 64L << 20);
        client = new NamenodeClient(List.of(namenode.url()), Duration.ofSeconds(5), 1);
    }

    @AfterEach
    void stop() {
        client.close();
        namenode.close();
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS)).getCause();
    }

    private static int deadPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void readsAVolume() throws Exception {
        VolumeInfo v = get(client.volume("vol1"));
        assertEquals(17, v.id());
        assertEquals("vol1", v.name());
        assertEquals(10L << 30, v.size());
        assertEquals(512, v.blockSize());
        assertEquals(64L << 20, v.chunkSize());
        assertEquals("iqn.2026-11.io.fastblock:vol1", v.iqn());
        assertEquals("available", v.state());
        assertEquals(160, v.chunkCount());
        assertEquals(List.of(v), get(client.listVolumes()));
    }

    @Test
    void aMissingVolumeIsA404WithTheContractCode() throws Exception {
        NamenodeException e = assertInstanceOf(NamenodeException.class, failure(client.volume("nope")));
        assertEquals(404, e.httpStatus());
        assertEquals("VOLUME_NOT_FOUND", e.code());
        assertEquals("no volume nope", e.detail());
        assertEquals(Optional.empty(), get(client.findVolume("nope")));
        assertTrue(get(client.findVolume("vol1")).isPresent());
    }

    @Test
    void chunkLookupNeverAllocatesAndAllocationDoes() throws Exception {
        ChunkLocation before = get(client.lookupChunk("vol1", 3));
        assertEquals(3, before.index());
        assertFalse(before.allocated());
        assertNull(before.group());
        ChunkLocation alloc = get(client.allocateChunk("vol1", 3));
        assertTrue(alloc.allocated());
        assertEquals(1, alloc.group().id());
        assertEquals(1, alloc.group().chainVersion());
        assertEquals(3, alloc.group().members().size());
        assertEquals(new NodeAddress("127.0.0.1", 9401), alloc.group().members().get(0).address());
        assertEquals(alloc, get(client.lookupChunk("vol1", 3)));
        assertEquals(List.of("GET /v1/volumes/vol1/chunks/3", "POST /v1/volumes/vol1/chunks/3",
                "GET /v1/volumes/vol1/chunks/3"), namenode.requests);
    }

    @Test
    void badChunkIndexCarriesCodeAndMessage() {
        NamenodeException e = assertInstanceOf(NamenodeException.class, failure(client.lookupChunk("vol1", 160)));
        assertEquals(400, e.httpStatus());
        assertEquals("INVALID_CHUNK_INDEX", e.code());
        assertTrue(e.getMessage().contains("chunk index 160 out of range"), e.getMessage());
    }

    @Test
    void anAnswerThatIsNotContractJsonStillBecomesAnError() {
        namenode.forcedStatus = 500;
        NamenodeException e = assertInstanceOf(NamenodeException.class, failure(client.volume("vol1")));
        assertEquals(500, e.httpStatus());
        assertEquals("HTTP_500", e.code());
        assertEquals("oops", e.detail());
    }

    @Test
    void theNextUrlIsTriedWhenANamenodeIsUnreachable() throws Exception {
        client.close();
        client = new NamenodeClient(List.of("http://127.0.0.1:" + deadPort(), namenode.url()), Duration.ofSeconds(5), 1);
        assertEquals(17, get(client.volume("vol1")).id());
        assertEquals(17, get(client.volume("vol1")).id());
        assertEquals(2, namenode.requests.size());
    }

    @Test
    void noReachableNamenodeIsUnavailable() throws Exception {
        client.close();
        client = new NamenodeClient(List.of("http://127.0.0.1:" + deadPort(), "http://127.0.0.1:" + deadPort()),
                Duration.ofSeconds(5), 1);
        Throwable t = failure(client.lookupChunk("vol1", 0));
        assertInstanceOf(NamenodeUnavailableException.class, t);
    }

    @Test
    void aChangeWaitsForANewLeaderWhileNoNamenodeLeads() throws Exception {
        namenode.forcedStatus = 503; // the leader died; the standby has not taken over yet
        long t0 = System.nanoTime();
        CompletableFuture<ChunkLocation> allocation = client.allocateChunk("vol1", 3);
        Thread.sleep(1_000);
        assertFalse(allocation.isDone(), "a change is retried while no namenode leads");
        namenode.forcedStatus = 0; // elected
        assertTrue(get(allocation).allocated());
        assertTrue(System.nanoTime() - t0 < NamenodeClient.FAILOVER_WAIT.toNanos());
        namenode.forcedStatus = 503;
        assertInstanceOf(NamenodeUnavailableException.class, failure(client.lookupChunk("vol1", 3)),
                "reads are served by any namenode: no waiting for a leader");
        namenode.forcedStatus = 0;
    }

    @Test
    void aStandbyAnswering503IsSkipped() throws Exception {
        FakeNamenode standby = new FakeNamenode(List.of(new NodeAddress("127.0.0.1", 9401)));
        try {
            standby.forcedStatus = 503;
            client.close();
            client = new NamenodeClient(List.of(standby.url(), namenode.url()), Duration.ofSeconds(5), 1);
            assertEquals(17, get(client.volume("vol1")).id());
            assertEquals(1, standby.requests.size());
            namenode.forcedStatus = 503;
            assertInstanceOf(NamenodeUnavailableException.class, failure(client.volume("vol1")));
        } finally {
            standby.close();
        }
    }

    @Test
    void rejectsUrlsThatAreNotHttp() {
        assertThrows(IllegalArgumentException.class, () -> new NamenodeClient(List.of("ftp://x")));
        assertThrows(IllegalArgumentException.class, () -> new NamenodeClient(List.of()));
    }
}
