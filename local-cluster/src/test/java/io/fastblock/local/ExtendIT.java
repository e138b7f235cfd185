package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiSession;
import io.fastblock.bench.initiator.IscsiUrl;
import io.fastblock.bench.initiator.ScsiCommandException;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extend while an initiator is logged in, on a real cluster: the session's next command gets the
 * unit attention CAPACITY DATA HAS CHANGED (2A/09) within a few seconds, READ CAPACITY then
 * reports the new size, and the new blocks are writable and read back.
 */
class ExtendIT {
    @TempDir
    Path dir;

    @Test
    void aLoggedInInitiatorSeesTheUnitAttentionAndTheNewCapacity() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=1M", "--no-demo");
        try (LocalCluster cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
             IscsiInitiator initiator = new IscsiInitiator(1, IscsiInitiator.DEFAULT_NAME)) {
            NamenodeAdmin admin = cluster.admin();
            assertEquals(201, admin.createVolume("grow", "8M", "1M").status());
            assertEquals(201, admin.createOpenExport("grow").status());
            IscsiSession session = initiator.login(IscsiUrl.parse(cluster.iscsiUrl("grow")), 30_000)
                    .get(60, TimeUnit.SECONDS);
            assertEquals(8L << 20, session.readCapacity().get(30, TimeUnit.SECONDS).bytes());

            NamenodeAdmin.Reply extended = admin.post("/v1/volumes/grow/extend", Map.of("size", "24M"));
            assertEquals(200, extended.status(), String.valueOf(extended.body()));
            assertEquals(24L << 20, extended.body().get("size").asLong());

            // Commands keep working; within a few seconds one of them carries the unit attention.
            long start = System.nanoTime();
            ScsiCommandException ua = null;
            while (ua == null && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30)) {
                try {
                    session.read(0, 8, 512, null).get(30, TimeUnit.SECONDS);
                    Thread.sleep(200);
                } catch (ExecutionException | CompletionException e) {
                    Throwable c = e.getCause();
                    while (c != null && !(c instanceof ScsiCommandException)) {
                        c = c.getCause();
                    }
                    assertTrue(c != null, "unexpected failure: " + e);
                    ua = (ScsiCommandException) c;
                }
            }
            assertTrue(ua != null, "no unit attention within 30 s of the extend");
            long seenAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(0x06, ua.senseKey(), ua.getMessage());
            assertEquals(0x2A, ua.asc(), ua.getMessage());
            assertEquals(0x09, ua.ascq(), ua.getMessage());
            System.out.println("unit attention CAPACITY DATA HAS CHANGED seen " + seenAfterMs + " ms after the extend");

            assertEquals(24L << 20, session.readCapacity().get(30, TimeUnit.SECONDS).bytes());
            // A block past the old end is now writable in the same session.
            byte[] block = new byte[4096];
            java.util.Arrays.fill(block, (byte) 0x3c);
            long lba = (20L << 20) / 512;
            session.write(lba, 8, Unpooled.wrappedBuffer(block)).get(30, TimeUnit.SECONDS);
            io.netty.buffer.ByteBuf back = Unpooled.buffer(4096);
            session.read(lba, 8, 512, back).get(30, TimeUnit.SECONDS);
            assertEquals(Unpooled.wrappedBuffer(block), back);
            session.logout(10_000).get(30, TimeUnit.SECONDS);
        }
    }
}
