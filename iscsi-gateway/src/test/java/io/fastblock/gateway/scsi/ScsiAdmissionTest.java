package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-volume QoS at the SCSI layer: data commands wait for the device's admission, others do not. */
class ScsiAdmissionTest {
    @TempDir
    Path dir;

    /** Records each admission and holds it until released. */
    static final class Gate implements IoAdmission {
        final List<String> asked = new ArrayList<>();
        final List<CompletableFuture<Void>> pending = new ArrayList<>();

        @Override
        public synchronized CompletableFuture<Void> admit(boolean read, long bytes) {
            asked.add((read ? "read " : "write ") + bytes);
            CompletableFuture<Void> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }

        @Override
        public boolean unlimited() {
            return false;
        }
    }

    /** A file device whose admission is {@code gate}. */
    static BlockDevice gated(FileBlockDevice d, IoAdmission gate) {
        return new BlockDevice() {
            public long sizeBytes() {
                return d.sizeBytes();
            }

            public int blockSize() {
                return d.blockSize();
            }

            public long volumeId() {
                return d.volumeId();
            }

            public String name() {
                return d.name();
            }

            public CompletableFuture<ByteBuf> read(long offset, int length) {
                return d.read(offset, length);
            }

            public CompletableFuture<Void> write(long offset, ByteBuf data) {
                return d.write(offset, data);
            }

            public CompletableFuture<Void> flush() {
                return d.flush();
            }

            public IoAdmission admission() {
                return gate;
            }

            public void close() {
                d.close();
            }
        };
    }

    static ByteBuf cdb(int... bytes) {
        byte[] b = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            b[i] = (byte) bytes[i];
        }
        return Unpooled.wrappedBuffer(b);
    }

    @Test
    void dataCommandsWaitForTheirTurnAndOthersDoNot() throws Exception {
        Gate gate = new Gate();
        try (FileBlockDevice file = new FileBlockDevice(dir.resolve("lun.img"), 4 << 20, 3, "q")) {
            ScsiCommandHandler scsi = new ScsiCommandHandler(gated(file, gate), "iqn.2026-11.io.fastblock:q");
            ScsiNexus n = new ScsiNexus();
            n.takeUnitAttention();
            CompletableFuture<ScsiResult> read = scsi.execute(0, cdb(0x28, 0, 0, 0, 0, 8, 0, 0, 4, 0), null, n,
                    ByteBufAllocator.DEFAULT);
            CompletableFuture<ScsiResult> write = scsi.execute(0, cdb(0x2A, 0, 0, 0, 0, 8, 0, 0, 2, 0),
                    Unpooled.wrappedBuffer(new byte[1024]), n, ByteBufAllocator.DEFAULT);
            ScsiResult tur = scsi.execute(0, cdb(0x00), null, n, ByteBufAllocator.DEFAULT).join();
            ScsiResult inquiry = scsi.execute(0, cdb(0x12, 0, 0, 0, 96), null, n, ByteBufAllocator.DEFAULT).join();
            assertTrue(tur.isGood() && inquiry.isGood(), "no admission for commands that move no medium data");
            inquiry.dataIn().release();
            assertEquals(List.of("read 2048", "write 1024"), gate.asked);
            assertFalse(read.isDone() || write.isDone(), "data commands wait for admission");
            gate.pending.forEach(f -> f.complete(null));
            ScsiResult r = read.join();
            assertTrue(r.isGood());
            assertEquals(2048, r.dataIn().readableBytes());
            r.dataIn().release();
            assertTrue(write.join().isGood());
        }
    }

    @Test
    void everyMediumCommandHasADirection() {
        for (int op : new int[] {0x08, 0x28, 0xA8, 0x88, 0x2F, 0xAF, 0x8F}) {
            assertEquals(1, ScsiCommandHandler.direction(op), Integer.toHexString(op));
        }
        for (int op : new int[] {0x0A, 0x2A, 0xAA, 0x8A, 0x2E, 0xAE, 0x8E, 0x9C, 0x41, 0x93, 0x89, 0x8B, 0x42, 0x83}) {
            assertEquals(2, ScsiCommandHandler.direction(op), Integer.toHexString(op));
        }
        for (int op : new int[] {0x00, 0x12, 0x25, 0x9E, 0xA0, 0x35, 0x91, 0x5E, 0x5F}) {
            assertEquals(0, ScsiCommandHandler.direction(op), Integer.toHexString(op));
        }
    }
}
