package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.TimeUnit;

/** Reads through the chunk store's client path ({@link ChunkStore#readAsync}) into a byte array. */
final class ChunkReads {
    private ChunkReads() {
    }

    static byte[] read(ChunkStore store, ChunkId chunk, long offset, int length) throws Exception {
        ByteBuf b = store.readAsync(chunk, offset, length, PooledByteBufAllocator.DEFAULT).get(30, TimeUnit.SECONDS);
        try {
            byte[] out = new byte[length];
            b.getBytes(0, out);
            return out;
        } finally {
            b.release();
        }
    }
}
