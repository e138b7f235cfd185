package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReadRouterTest {
    private static Replica replica(int n, boolean live) {
        return new Replica("storage-" + n, new NodeAddress("127.0.0.1", 9400 + n), live);
    }

    private static ChunkRoute chain(Replica... members) {
        return new ChunkRoute(0, 1, 1, List.of(members));
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
}
