package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReadRouterTest {
    private static Replica replica(int n, boolean live) {
        return new Replica("storage-" + n, new NodeAddress("127.0.0.1", 9400 + n), live);
    }

    private static ChunkRoute chain(Replica... members) {
        return new ChunkRoute(1, 1, List.of(members));
    }

    private final ReadRouter router = new ReadRouter();

    @Test
    void randomReadsGoToTheHead() {
        ReadRouter.Choice c = router.choose(chain(replica(1, true), replica(2, true), replica(3, true)), AccessPattern.RANDOM);
        assertEquals(ReplicaRole.HEAD, c.role());
        assertEquals("storage-1", c.replica().id());
    }

    @Test
    void sequentialReadsGoToTheMiddle() {
        ReadRouter.Choice c = router.choose(chain(replica(1, true), replica(2, true), replica(3, true)), AccessPattern.SEQUENTIAL);
        assertEquals(ReplicaRole.MIDDLE, c.role());
        assertEquals("storage-2", c.replica().id());
    }

    @Test
    void sequentialReadsFallBackToTheHeadWithoutALiveMiddle() {
        assertEquals(ReplicaRole.HEAD,
                router.choose(chain(replica(1, true), replica(2, false), replica(3, true)), AccessPattern.SEQUENTIAL).role());
        assertEquals("storage-1",
                router.choose(chain(replica(1, true), replica(3, true)), AccessPattern.SEQUENTIAL).replica().id());
        assertEquals("storage-1",
                router.choose(chain(replica(1, true)), AccessPattern.SEQUENTIAL).replica().id());
    }

    @Test
    void retriesTryTheOtherMembersInChainOrderLiveOnesFirst() {
        ChunkRoute c = chain(replica(1, true), replica(2, true), replica(3, true));
        assertEquals("storage-1", router.retry(c, java.util.Set.of("storage-2")).replica().id());
        ReadRouter.Choice second = router.retry(c, java.util.Set.of("storage-1"));
        assertEquals("storage-2", second.replica().id());
        assertEquals(ReplicaRole.MIDDLE, second.role());
        ReadRouter.Choice third = router.retry(c, java.util.Set.of("storage-1", "storage-2"));
        assertEquals("storage-3", third.replica().id());
        assertEquals(ReplicaRole.TAIL, third.role());
        ChunkRoute deadMiddle = chain(replica(1, true), replica(2, false), replica(3, true));
        assertEquals("storage-3", router.retry(deadMiddle, java.util.Set.of("storage-1")).replica().id());
        assertEquals("storage-2", router.retry(deadMiddle, java.util.Set.of("storage-1", "storage-3")).replica().id());
        // All tried: round again rather than give up, the chain may have been repaired since.
        assertEquals("storage-1",
                router.retry(c, java.util.Set.of("storage-1", "storage-2", "storage-3")).replica().id());
        assertEquals(ReplicaRole.HEAD, router.retry(chain(replica(1, true), replica(2, true)),
                java.util.Set.of("storage-1", "storage-2")).role());
    }
}
