package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.TestBuffers;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/** Small helpers shared by the log store tests. */
final class LogFixture {
    private LogFixture() {
    }

    static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void write(LogStore store, ChunkId chunk, long offset, byte[] data) throws Exception {
        store.append(chunk, offset, 1, Unpooled.wrappedBuffer(data)).get(30, TimeUnit.SECONDS);
    }

    static byte[] read(LogStore store, ChunkId chunk, long offset, int length) throws IOException {
        return TestBuffers.drain(store.read(chunk, offset, length, PooledByteBufAllocator.DEFAULT), length);
    }

    /** Runs cleaning passes until one frees nothing; returns the segments freed. */
    static int cleanUntilDone(LogCleaner cleaner) throws Exception {
        int freed = 0;
        for (int i = 0; i < 10_000; i++) {
            int n = cleaner.cleanOnce();
            if (n == 0) {
                return freed;
            }
            freed += n;
        }
        throw new AssertionError("cleaner never settled");
    }

    /** Number of index keys of all chunks. */
    static int indexKeys(LogStore store) throws IOException {
        return store.scanIndex(null, Integer.MAX_VALUE).size();
    }
}
