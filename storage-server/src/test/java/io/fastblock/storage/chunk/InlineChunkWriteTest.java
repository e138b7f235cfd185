package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small writes to a chunk already recorded dirty run on the caller's (network) thread when the
 * chunk's stripe is idle; everything that may fsync (a dirty-record save), large writes and writes
 * behind queued work go to the stripe.
 */
class InlineChunkWriteTest {
    private static final int GROUP = 7;

    @TempDir
    Path dir;

    /** Real files; records which thread wrote the chunk's data file and which threads forced any file. */
    private static final class Watched implements FileIoFactory {
        final List<String> dataWriters = new CopyOnWriteArrayList<>();
        final List<String> forcers = new CopyOnWriteArrayList<>();

        @Override
        public FileIo open(Path file, boolean create) throws IOException {
            FileIo real = FileIoFactory.real().open(file, create);
            boolean data = file.getFileName().toString().equals("9") && file.getParent().getFileName().toString().equals("3");
            return new ForwardingFileIo(real) {
                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    if (data) {
                        dataWriters.add(Thread.currentThread().getName());
                    }
                    return super.write(src, position);
                }

                @Override
                public void writeFully(ByteBuffer[] srcs, long position) throws IOException {
                    if (data) {
                        dataWriters.add(Thread.currentThread().getName());
                    }
                    to.writeFully(srcs, position);
                }

                @Override
                public void force(boolean metadata) throws IOException {
                    forcers.add(Thread.currentThread().getName());
                    super.force(metadata);
                }
            };
        }

        @Override
        public void syncDirectory(Path d) throws IOException {
            FileIoFactory.real().syncDirectory(d);
        }

        String lastWriter() {
            return dataWriters.get(dataWriters.size() - 1);
        }
    }

    private static ByteBuf bytes(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return Unpooled.wrappedBuffer(b);
    }

    private static void awaitIdle(ChunkStore store, ChunkId c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!store.stripeIdle(c) && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(store.stripeIdle(c));
    }

    @Test
    void onlySmallWritesThatNeedNoRecordSaveRunOnTheCallersThread() throws Exception {
        Watched files = new Watched();
        String me = Thread.currentThread().getName();
        try (ChunkStore store = new ChunkStore(dir, 2, files, Duration.ofHours(1))) {
            int opened = files.forcers.size(); // the store's own state files, forced on open
            ChunkId c = new ChunkId(3, 9);
            assertFalse(store.writesWithoutRecord(c, GROUP, 4096), "a fresh chunk needs its dirty record saved first");
            store.writeAsync(GROUP, 1, c, 0, bytes(4096, 1)).get(10, TimeUnit.SECONDS);
            assertTrue(files.lastWriter().startsWith("chunk-io-"), files.dataWriters.toString());

            assertTrue(store.writesWithoutRecord(c, GROUP, 8192));
            assertFalse(store.writesWithoutRecord(c, GROUP + 1, 8192), "a write of another group changes the record");
            assertFalse(store.writesWithoutRecord(c, GROUP, ChunkStore.END_STEP + 4096), "past the recorded end");

            awaitIdle(store, c);
            int forcesBefore = files.forcers.size();
            CompletableFuture<Void> small = store.writeAsync(GROUP, 2, c, 4096, bytes(4096, 2));
            assertTrue(small.isDone(), "ran before writeAsync returned");
            small.get();
            assertEquals(me, files.lastWriter());
            assertEquals(forcesBefore, files.forcers.size(), "an inline write forces nothing");

            store.writeAsync(GROUP, 3, c, 1 << 20, bytes(ChunkStore.INLINE_WRITE_MAX + 4096, 3)).get(10, TimeUnit.SECONDS);
            assertTrue(files.lastWriter().startsWith("chunk-io-"), "a large write goes to the stripe");

            store.writeAsync(GROUP, 4, c, ChunkStore.END_STEP + 8192, bytes(4096, 4)).get(10, TimeUnit.SECONDS);
            assertTrue(files.lastWriter().startsWith("chunk-io-"), "a write past the recorded end saves the record on the stripe");
            List<String> writeForces = files.forcers.subList(opened, files.forcers.size());
            assertFalse(writeForces.isEmpty(), "the record saves forced");
            assertFalse(writeForces.contains(me), "no write's fsync ran on the caller's thread: " + writeForces);

            assertArrayEquals(bytes(4096, 2).array(), ChunkReads.read(store, c, 4096, 4096));
        }
    }

    @Test
    void aWriteBehindQueuedWorkWaitsItsTurnOnTheStripe() throws Exception {
        Watched files = new Watched();
        String me = Thread.currentThread().getName();
        try (ChunkStore store = new ChunkStore(dir, 1, files, Duration.ofHours(1))) {
            ChunkId c = new ChunkId(3, 9);
            store.writeAsync(GROUP, 1, c, 0, bytes(4096, 1)).get(10, TimeUnit.SECONDS);
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<String> order = new CopyOnWriteArrayList<>();
            CompletableFuture<Void> busy = CompletableFuture.runAsync(() -> {
                try {
                    store.onStripeNow(c, () -> {
                        holding.countDown();
                        release.await(10, TimeUnit.SECONDS);
                        order.add("queued work");
                        return null;
                    });
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertTrue(holding.await(10, TimeUnit.SECONDS));
            CompletableFuture<Void> write = store.writeAsync(GROUP, 2, c, 4096, bytes(4096, 2))
                    .thenRun(() -> order.add("write"));
            assertFalse(write.isDone(), "the stripe is busy: the write must not overtake its work");
            release.countDown();
            write.get(10, TimeUnit.SECONDS);
            busy.get(10, TimeUnit.SECONDS);
            assertEquals(List.of("queued work", "write"), order);
            assertTrue(files.lastWriter().startsWith("chunk-io-"), files.dataWriters.toString());
            assertFalse(files.dataWriters.contains(me), files.dataWriters.toString());
            assertArrayEquals(bytes(4096, 2).array(), ChunkReads.read(store, c, 4096, 4096));
        }
    }
}
