package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import io.fastblock.storage.io.ForwardingFileIoFactory;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log behaves the same whether its segments are written around the page cache (the default
 * where the filesystem allows) or through it: records of odd sizes across segment roll-overs read
 * back, a process crash and reopen replays them all, a power loss keeps exactly the forced ones,
 * and the segment files end at their records after a clean close.
 */
class LogWritePathsTest {
    private static final ChunkId CHUNK = new ChunkId(4, 2);
    private static final long SEGMENT = 256 << 10;

    @TempDir
    Path dir;

    private FileIoFactory files(FaultInjectingFileIo.Factory disk, boolean direct) {
        return direct ? disk : FileIoFactory.withoutDirectWrites(disk);
    }

    @ParameterizedTest(name = "direct writes: {0}")
    @ValueSource(booleans = {true, false})
    void recordsSurviveRollOversACrashAndAPowerLoss(boolean direct) throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(11);
        List<byte[]> written = new ArrayList<>();
        LogStore store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, files(disk, direct));
        try {
            // Concurrent appends of sizes that end anywhere in a block, some larger than a block.
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                byte[] data = LogFixture.bytes(1 + (i * 977) % 9000, i);
                written.add(data);
                acks.add(store.append(CHUNK, i * 16384L, 1, Unpooled.wrappedBuffer(data)));
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            assertTrue(store.appendPosition().segment() > 2, "the appends should roll over several segments");
            assertAllRead(store, written);
        } finally {
            disk.processCrash();
            closeAfterCrash(store); // frees the RocksDB lock; the log's files are fenced already
        }
        assertEquals(direct, disk.directOpens() > 0, "direct handles opened: " + disk.directOpens());

        disk.powerOn();
        store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, files(disk, direct));
        try {
            assertAllRead(store, written);
            // One more acknowledged record, then a batch whose fsync the power loss beats.
            byte[] kept = LogFixture.bytes(3000, 500);
            LogFixture.write(store, CHUNK, 200 * 16384L, kept);
            disk.powerLossAtNextForceOf(".seg", FaultInjectingFileIo.Tear.LAST_WRITE);
            CompletableFuture<Void> lost = store.append(CHUNK, 201 * 16384L, 1,
                    Unpooled.wrappedBuffer(LogFixture.bytes(5000, 501)));
            assertTrue(lost.handle((v, e) -> e != null).get(30, TimeUnit.SECONDS), "the append the power loss beat must fail");
            written.add(kept);
        } finally {
            closeAfterCrash(store);
        }

        disk.powerOn();
        store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, files(disk, direct));
        try {
            assertAllRead(store, written);
            assertArrayEquals(new byte[5000], LogFixture.read(store, CHUNK, 201 * 16384L, 5000), "the unforced record is gone");
        } finally {
            store.close();
        }
        // A clean close leaves every segment file ending at its records (no padding, no zeros ahead).
        store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, files(disk, direct));
        LogPosition end = store.appendPosition();
        store.close();
        try (Stream<Path> segs = Files.list(dir.resolve("log"))) {
            Path last = segs.filter(p -> p.toString().endsWith(".seg")).max(Path::compareTo).orElseThrow();
            assertEquals(end.position(), Files.size(last));
        }
    }

    @Test
    void aFilesystemWhoseBlocksAreTooLargeIsWrittenThroughThePageCache() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(12);
        AtomicInteger opened = new AtomicInteger();
        FileIoFactory bigBlocks = new ForwardingFileIoFactory(disk) {
            @Override
            public FileIo openDirect(Path file) throws IOException {
                opened.incrementAndGet();
                return new ForwardingFileIo(disk.openDirect(file)) {
                    @Override
                    public int writeAlignment() {
                        return 128 << 10;
                    }

                    @Override
                    public int write(ByteBuffer src, long position) {
                        throw new AssertionError("written through a handle the log should have closed");
                    }
                };
            }
        };
        List<byte[]> written = new ArrayList<>();
        LogStore store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, bigBlocks);
        try {
            for (int i = 0; i < 40; i++) {
                byte[] data = LogFixture.bytes(1 + (i * 977) % 9000, i);
                written.add(data);
                LogFixture.write(store, CHUNK, i * 16384L, data);
            }
            assertAllRead(store, written);
            assertTrue(opened.get() > 0, "the log should have asked for a direct handle");
        } finally {
            store.close();
        }
    }

    private static void closeAfterCrash(LogStore store) {
        try {
            store.close();
        } catch (Exception e) {
            // the disk is gone
        }
    }

    private static void assertAllRead(LogStore store, List<byte[]> written) throws Exception {
        for (int i = 0; i < written.size(); i++) {
            long offset = i < 120 ? i * 16384L : 200 * 16384L;
            assertArrayEquals(written.get(i), LogFixture.read(store, CHUNK, offset, written.get(i).length), "record " + i);
        }
    }
}
