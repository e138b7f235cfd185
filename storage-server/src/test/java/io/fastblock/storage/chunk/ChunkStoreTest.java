package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChunkStoreTest {
    @TempDir
    Path dir;

    @Test
    void writesReadBackAndHolesAndEofReadAsZeros() throws Exception {
        // Dirty the pool so a buffer that is not zeroed explicitly would show garbage.
        ByteBuf junk = PooledByteBufAllocator.DEFAULT.directBuffer(1 << 16);
        junk.writeBytes(new byte[1 << 16]).setByte(5, 0x55);
        for (int i = 0; i < junk.capacity(); i++) {
            junk.setByte(i, 0x5A);
        }
        junk.release();
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkId c = new ChunkId(3, 9);
            byte[] a = new byte[4096];
            new Random(1).nextBytes(a);
            store.writeAsync(c, 1 << 20, Unpooled.wrappedBuffer(a)).get(10, TimeUnit.SECONDS);
            assertTrue(Files.exists(dir.resolve("chunks/3/9")));
            assertArrayEquals(a, ChunkReads.read(store, c, 1 << 20, 4096));
            assertArrayEquals(new byte[8192], ChunkReads.read(store, c, 4096, 8192), "hole");
            byte[] tail = ChunkReads.read(store, c, (1 << 20) + 4000, 200);
            byte[] want = new byte[200];
            System.arraycopy(a, 4000, want, 0, 96);
            assertArrayEquals(want, tail, "data then zeros past EOF");
            assertArrayEquals(new byte[512], ChunkReads.read(store, new ChunkId(4, 0), 0, 512), "never written chunk");
            byte[] b = new byte[100];
            new Random(2).nextBytes(b);
            store.writeAsync(c, (1 << 20) + 10, Unpooled.wrappedBuffer(b)).get(10, TimeUnit.SECONDS);
            System.arraycopy(b, 0, a, 10, 100);
            assertArrayEquals(a, ChunkReads.read(store, c, 1 << 20, 4096), "overwrite in place");
        }
    }
}
