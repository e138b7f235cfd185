package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** COMPARE AND WRITE, ORWRITE, thin provisioning and the supported-opcodes table against the dispatch. */
class ScsiThinAndAtomicTest {
    static final long SIZE = 4L << 20; // 8192 blocks of 512

    @TempDir
    Path dir;
    FileBlockDevice device;
    ScsiCommandHandler scsi;
    ScsiNexus nexus;

    @BeforeEach
    void setUp() throws Exception {
        device = new FileBlockDevice(dir.resolve("lun.img"), SIZE, 7, "thin").thin(true);
        scsi = new ScsiCommandHandler(device, "iqn.2026-11.io.fastblock:thin");
        nexus = new ScsiNexus();
        nexus.takeUnitAttention();
    }

    @AfterEach
    void tearDown() {
        CountDownLatch h = device.hold;
        if (h != null) {
            h.countDown();
        }
        device.close();
    }

    static ByteBuf cdb(int... bytes) {
        byte[] b = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            b[i] = (byte) bytes[i];
        }
        return Unpooled.wrappedBuffer(b);
    }

    CompletableFuture<ScsiResult> submit(ByteBuf cdb, byte[] out) {
        return scsi.execute(0, cdb, out == null ? null : Unpooled.wrappedBuffer(out), nexus, ByteBufAllocator.DEFAULT);
    }

    ScsiResult run(ByteBuf cdb, byte[] out) {
        return ResultTracker.owned(submit(cdb, out).join());
    }

    static byte[] bytes(ScsiResult r) {
        byte[] b = ByteBufUtil.getBytes(r.dataIn());
        r.dataIn().release();
        return b;
    }

    static void assertSense(ScsiResult r, int key, int asc, int ascq) {
        assertEquals(ScsiStatus.CHECK_CONDITION, r.status(), String.valueOf(r.sense()));
        assertEquals(key, r.sense().key());
        assertEquals(asc, r.sense().asc());
        assertEquals(ascq, r.sense().ascq());
    }

    static ByteBuf write16(long lba, int blocks) {
        ByteBuf c = cdb(0x8A);
        c.setLong(2, lba);
        c.setInt(10, blocks);
        return c;
    }

    static ByteBuf read16(long lba, int blocks) {
        ByteBuf c = write16(lba, blocks);
        c.setByte(0, 0x88);
        return c;
    }

    static ByteBuf caw(long lba, int blocks) {
        ByteBuf c = cdb(0x89);
        c.setLong(2, lba);
        c.setByte(13, blocks);
        return c;
    }

    static byte[] fill(int len, int v) {
        byte[] b = new byte[len];
        Arrays.fill(b, (byte) v);
        return b;
    }

    byte[] disk(long offset, int len) throws Exception {
        return Arrays.copyOfRange(Files.readAllBytes(dir.resolve("lun.img")), (int) offset, (int) offset + len);
    }

    @Test
    void compareAndWriteWritesWhenEqualAndReportsTheFirstDifferenceOtherwise() throws Exception {
        assertTrue(run(write16(10, 2), fill(1024, 'A')).isGood());
        byte[] both = new byte[2048];
        Arrays.fill(both, 0, 1024, (byte) 'A');
        Arrays.fill(both, 1024, 2048, (byte) 'B');
        assertTrue(run(caw(10, 2), both).isGood());
        assertArrayEquals(fill(1024, 'B'), disk(10 * 512, 1024));

        byte[] wrong = both.clone(); // compares 'B' blocks with a difference at byte 700
        Arrays.fill(wrong, 0, 1024, (byte) 'B');
        wrong[700] = 'x';
        Arrays.fill(wrong, 1024, 2048, (byte) 'C');
        ScsiResult r = run(caw(10, 2), wrong);
        assertSense(r, 0x0E, 0x1D, 0x00);
        assertEquals(700, r.sense().information());
        byte[] fixed = r.sense().toFixedFormat();
        assertEquals((byte) 0xF0, fixed[0], "VALID bit: INFORMATION holds the offset");
        assertEquals(700, ((fixed[5] & 0xff) << 8) | (fixed[6] & 0xff));
        assertArrayEquals(fill(1024, 'B'), disk(10 * 512, 1024), "nothing written after a miscompare");
    }

    @Test
    void compareAndWriteLimitsAndDataOutSize() {
        assertSense(run(caw(0, 1), new byte[512]), 0x05, 0x24, 0x00); // half the data-out
        assertSense(run(caw(8191, 2), new byte[2048]), 0x05, 0x21, 0x00);
        assertSense(scsi.execute(0, caw(0, 1), Unpooled.wrappedBuffer(new byte[1536]), 1536, nexus,
                ByteBufAllocator.DEFAULT).join(), 0x05, 0x24, 0x00); // announced length is not 2 blocks
        assertTrue(run(caw(0, 0), null).isGood());
    }

    @Test
    void compareAndWriteIsAtomicAgainstAConcurrentWrite() throws Exception {
        assertTrue(run(write16(0, 1), fill(512, 'A')).isGood());
        device.hold = new CountDownLatch(1);
        byte[] cw = new byte[1024];
        Arrays.fill(cw, 0, 512, (byte) 'A');
        Arrays.fill(cw, 512, 1024, (byte) 'B');
        CompletableFuture<ScsiResult> compare = submit(caw(0, 1), cw);
        CompletableFuture<ScsiResult> write = submit(write16(0, 1), fill(512, 'C'));
        Thread.sleep(100);
        assertFalse(write.isDone(), "the write waits for the compare-and-write's range");
        device.hold.countDown();
        assertTrue(compare.join().isGood(), "the compare saw 'A': the write did not slip in before it");
        assertTrue(write.join().isGood());
        assertArrayEquals(fill(512, 'C'), disk(0, 512), "the write came after the compare-and-write");
    }

    @Test
    void orWriteOrsTheDataIn() throws Exception {
        assertTrue(run(write16(4, 1), fill(512, 0x0F)).isGood());
        ByteBuf c = write16(4, 1);
        c.setByte(0, 0x8B);
        assertTrue(run(c, fill(512, 0xF0)).isGood());
        assertArrayEquals(fill(512, 0xFF), disk(4 * 512, 512));
    }

    static byte[] unmapList(long lba, int blocks) {
        ByteBuf l = Unpooled.buffer(24);
        l.writeShort(22).writeShort(16).writeInt(0).writeLong(lba).writeInt(blocks).writeInt(0);
        return ByteBufUtil.getBytes(l);
    }

    byte[] lbaStatus(long lba) {
        ByteBuf c = cdb(0x9E, 0x12);
        c.setLong(2, lba);
        c.setInt(10, 1024);
        return bytes(run(c, null));
    }

    @Test
    void unmapDeallocatesAndTheRangeReadsAsZeros() throws Exception {
        assertTrue(run(write16(0, 64), fill(64 * 512, 'D')).isGood());
        assertEquals(64 * 512, device.mappedBytes());
        ByteBuf u = cdb(0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0);
        assertTrue(run(u, unmapList(16, 16)).isGood());
        assertEquals(48 * 512, device.mappedBytes(), "the space is returned");
        assertArrayEquals(new byte[16 * 512], bytes(run(read16(16, 16), null)));
        ByteBuf s = Unpooled.wrappedBuffer(lbaStatus(0));
        assertEquals(8 + 4 * 16, s.getInt(0) + 4, "mapped, deallocated, mapped, never written");
        assertEquals(0, s.getLong(8));
        assertEquals(16, s.getInt(16));
        assertEquals(0, s.getByte(20), "mapped");
        assertEquals(16, s.getLong(24));
        assertEquals(16, s.getInt(32));
        assertEquals(1, s.getByte(36), "deallocated");
        assertEquals(32, s.getLong(40));
        assertEquals(0, s.getByte(52));
        assertEquals(64, s.getLong(56));
        assertEquals(8192 - 64, s.getInt(64));
        assertEquals(1, s.getByte(68));
        ByteBuf mid = Unpooled.wrappedBuffer(lbaStatus(20));
        assertEquals(20, mid.getLong(8), "the first descriptor starts at the requested LBA");
        assertEquals(12, mid.getInt(16));
    }

    /** Descriptors (lba, blocks) as an UNMAP parameter list. */
    static byte[] unmapList(long... descriptors) {
        ByteBuf l = Unpooled.buffer(8 + 8 * descriptors.length);
        l.writeShort(6 + 8 * descriptors.length).writeShort(8 * descriptors.length).writeInt(0);
        for (int i = 0; i < descriptors.length; i += 2) {
            l.writeLong(descriptors[i]).writeInt((int) descriptors[i + 1]).writeInt(0);
        }
        return ByteBufUtil.getBytes(l);
    }

    @Test
    void unmapMergesAdjacentAndOverlappingDescriptorsIntoOneRequestPerRange() throws Exception {
        assertTrue(run(write16(0, 64), fill(64 * 512, 'G')).isGood());
        // block by block out of order (8..11), one overlapping them (10..13), and a separate range (40..41)
        byte[] list = unmapList(9, 1, 8, 1, 11, 1, 10, 1, 10, 4, 40, 2, 20, 0);
        int before = device.unmapsAsked.get();
        ByteBuf u = cdb(0x42);
        u.setShort(7, list.length);
        assertTrue(run(u, list).isGood());
        assertEquals(2, device.unmapsAsked.get() - before, "8..13 and 40..41, each one request");
        assertEquals((64 - 6 - 2) * 512, device.mappedBytes());
        assertArrayEquals(fill(8 * 512, 'G'), disk(0, 8 * 512));
        assertArrayEquals(new byte[6 * 512], disk(8 * 512, 6 * 512));
        assertArrayEquals(fill(26 * 512, 'G'), disk(14 * 512, 26 * 512));
        assertArrayEquals(new byte[2 * 512], disk(40 * 512, 2 * 512));
        assertArrayEquals(fill(22 * 512, 'G'), disk(42 * 512, 22 * 512));
    }

    @Test
    void coalescedRangesAreSortedDisjointAndNotAdjacent() {
        assertArrayEquals(new long[] {}, ScsiCommandHandler.coalesce(new long[] {5}, new long[] {0}));
        assertArrayEquals(new long[] {0, 4}, ScsiCommandHandler.coalesce(new long[] {3, 0, 1, 2},
                new long[] {1, 1, 1, 1}));
        assertArrayEquals(new long[] {2, 8, 20, 1}, ScsiCommandHandler.coalesce(new long[] {20, 4, 2, 5},
                new long[] {1, 6, 3, 2}));
        assertArrayEquals(new long[] {0, 2, 3, 1}, ScsiCommandHandler.coalesce(new long[] {3, 0},
                new long[] {1, 2}), "a gap of one block keeps two ranges");
    }

    @Test
    void unmapErrors() {
        assertSense(run(cdb(0x42, 1, 0, 0, 0, 0, 0, 0, 24, 0), unmapList(0, 1)), 0x05, 0x24, 0x00); // ANCHOR
        assertSense(run(cdb(0x42, 0, 0, 0, 0, 0, 0, 0, 6, 0), new byte[6]), 0x05, 0x1A, 0x00);
        assertSense(run(cdb(0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0), unmapList(8190, 4)), 0x05, 0x21, 0x00);
        assertTrue(run(cdb(0x42), null).isGood(), "an empty parameter list does nothing");
        ByteBuf c = cdb(0x9E, 0x12);
        c.setLong(2, 8192);
        c.setInt(10, 32);
        assertSense(run(c, null), 0x05, 0x21, 0x00);
    }

    @Test
    void writeSameWithUnmapDeallocatesZeros() throws Exception {
        assertTrue(run(write16(0, 32), fill(32 * 512, 'E')).isGood());
        assertTrue(run(cdb(0x93, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8), new byte[512]).isGood());
        assertEquals(24 * 512, device.mappedBytes());
        // non-zero data with UNMAP: written, not unmapped
        assertTrue(run(cdb(0x41, 0x08, 0, 0, 0, 8, 0, 0, 4, 0), fill(512, 'F')).isGood());
        assertArrayEquals(fill(4 * 512, 'F'), disk(8 * 512, 4 * 512));
        assertEquals(24 * 512, device.mappedBytes());
    }

    @Test
    void provisioningIsAdvertisedOnlyWhenThin() throws Exception {
        byte[] rc16 = bytes(run(cdb(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32), null));
        assertEquals((byte) 0xC0, rc16[14], "LBPME and LBPRZ");
        byte[] b2 = bytes(run(cdb(0x12, 1, 0xB2, 0, 64), null));
        assertEquals((byte) 0xE4, b2[5], "LBPU, LBPWS, LBPWS10, LBPRZ");
        assertEquals(2, b2[6], "thin");
        byte[] b0 = bytes(run(cdb(0x12, 1, 0xB0, 0, 64), null));
        assertTrue(Unpooled.wrappedBuffer(b0).getInt(20) > 0, "MAXIMUM UNMAP LBA COUNT");
        assertEquals(ScsiCommandHandler.MAX_UNMAP_DESCRIPTORS, Unpooled.wrappedBuffer(b0).getInt(24));

        try (FileBlockDevice thick = new FileBlockDevice(dir.resolve("thick.img"), SIZE, 8, "thick")) {
            ScsiCommandHandler t = new ScsiCommandHandler(thick, "iqn.2026-11.io.fastblock:thick");
            ScsiResult rc = t.execute(0, cdb(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32), null, nexus,
                    ByteBufAllocator.DEFAULT).join();
            assertEquals(0, bytes(rc)[14]);
            assertSense(t.execute(0, cdb(0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0), Unpooled.wrappedBuffer(unmapList(0, 1)),
                    nexus, ByteBufAllocator.DEFAULT).join(), 0x05, 0x20, 0x00);
            assertSense(t.execute(0, cdb(0x12, 1, 0xB2, 0, 64), null, nexus, ByteBufAllocator.DEFAULT).join(),
                    0x05, 0x24, 0x00);
        }
    }

    /** Every opcode the dispatch serves is in REPORT SUPPORTED OPERATION CODES, and nothing else. */
    @Test
    void supportedOpcodesMatchTheDispatchTable() throws Exception {
        for (boolean thin : new boolean[] {false, true}) {
            try (FileBlockDevice d = new FileBlockDevice(dir.resolve("d" + thin + ".img"), SIZE, 9, "d").thin(thin)) {
                ScsiCommandHandler h = new ScsiCommandHandler(d, "iqn.2026-11.io.fastblock:d");
                Set<Integer> served = new HashSet<>();
                for (int op = 0; op < 256; op++) {
                    ScsiNexus n = new ScsiNexus();
                    n.takeUnitAttention();
                    ScsiResult r = h.execute(0, cdb(op, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), null, n,
                            ByteBufAllocator.DEFAULT).join();
                    if (r.sense() == null || !r.sense().sameCode(Sense.INVALID_OPCODE)) {
                        served.add(op);
                    }
                    r.dataIn().release();
                    h.detach(n);
                }
                Set<Integer> listed = new HashSet<>();
                SupportedOpcodes.commands(thin).forEach(c -> listed.add(c.opcode()));
                assertEquals(listed, served, "thin=" + thin);
                // and every listed service action is served
                for (SupportedOpcodes.Command c : SupportedOpcodes.commands(thin)) {
                    if (c.sa() < 0) {
                        continue;
                    }
                    ScsiNexus n = new ScsiNexus();
                    n.takeUnitAttention();
                    ByteBuf probe = cdb(c.opcode(), c.sa(), 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x20);
                    ScsiResult r = h.execute(0, probe, null, n, ByteBufAllocator.DEFAULT).join();
                    // "not implemented" is INVALID FIELD IN CDB without a field pointer or pointing at
                    // the service action (byte 1); another field may be refused (e.g. an unknown list id)
                    boolean notImplemented = r.sense() != null && r.sense().sameCode(Sense.INVALID_FIELD_IN_CDB)
                            && (r.sense().keySpecific() < 0 || (r.sense().keySpecific() & 0xffff) == 1);
                    assertFalse(notImplemented && c.opcode() != 0x5F,
                            "0x" + Integer.toHexString(c.opcode()) + "/" + c.sa() + " " + r.sense());
                    r.dataIn().release();
                }
            }
        }
    }
}
