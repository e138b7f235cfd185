package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.TestBuffers;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.TimeUnit;

/** Reads through the chunk store's client path ({@link ChunkStore#readAsync}) into a byte array. */
final class ChunkReads {
    private ChunkReads() {
    }

    static byte[] read(ChunkStore store, ChunkId chunk, long offset, int length) throws Exception {
        return TestBuffers.drain(store.readAsync(chunk, offset, length, PooledByteBufAllocator.DEFAULT).get(30, TimeUnit.SECONDS), length);
    }
}
