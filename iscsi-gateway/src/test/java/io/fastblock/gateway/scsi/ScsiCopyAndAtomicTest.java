package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * WRITE ATOMIC(16), EXTENDED COPY / RECEIVE COPY RESULTS, WRITE SAME with zero blocks and the
 * field pointers of INVALID FIELD IN CDB, on a real file-backed LU.
 */
class ScsiCopyAndAtomicTest {
    static final long SIZE = 16L << 20; // 32768 blocks of 512
    static final long BLOCKS = SIZE / 512;

    @TempDir
    Path dir;
    FileBlockDevice device;
    ScsiCommandHandler scsi;
    ScsiNexus nexus;

    @BeforeEach
    void setUp() throws Exception {
        device = new FileBlockDevice(dir.resolve("lun.img"), SIZE, 0x77, "copy").thin(true);
        scsi = new ScsiCommandHandler(device, "iqn.2026-11.io.fastblock:copy");
        nexus = new ScsiNexus();
        nexus.takeUnitAttention();
    }

    @AfterEach
    void tearDown() {
        device.close();
    }

    ScsiResult run(ByteBuf cdb, byte[] out) {
        return run(cdb, out, nexus);
    }

    ScsiResult run(ByteBuf cdb, byte[] out, ScsiNexus n) {
        return ResultTracker.owned(scsi.execute(0, cdb, out == null ? null : Unpooled.wrappedBuffer(out), n,
                ByteBufAllocator.DEFAULT).join());
    }

    static byte[] bytes(ScsiResult r) {
        assertEquals(ScsiStatus.GOOD, r.status(), String.valueOf(r.sense()));
        byte[] b = ByteBufUtil.getBytes(r.dataIn());
        r.dataIn().release();
        return b;
    }

    static void assertSense(ScsiResult r, Sense expected) {
        assertEquals(ScsiStatus.CHECK_CONDITION, r.status(), "expected " + expected);
        assertEquals(expected.key(), r.sense().key(), r.sense().toString());
        assertEquals(expected.asc(), r.sense().asc(), r.sense().toString());
        assertEquals(expected.ascq(), r.sense().ascq(), r.sense().toString());
    }

    /** The field pointer (SKSV=1, C/D=1) at CDB byte {@code index}, in the fixed-format bytes 15-17. */
    static void assertCdbPointer(ScsiResult r, int index) {
        byte[] f = r.sense().toFixedFormat();
        assertEquals(0xC0, f[15] & 0xC0, "SKSV and C/D set: " + r.sense());
        assertEquals(index, ((f[16] & 0xff) << 8) | (f[17] & 0xff), r.sense().toString());
    }

    static ByteBuf cdb16(int op) {
        return Unpooled.wrappedBuffer(new byte[16]).setByte(0, op);
    }

    static ByteBuf atomic(long lba, int blocks) {
        return cdb16(0x9C).setLong(2, lba).setShort(12, blocks);
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
    void blockLimitsAdvertiseAtomicWrites() {
        byte[] p = bytes(run(Unpooled.wrappedBuffer(new byte[] {0x12, 1, (byte) 0xB0, 0, (byte) 255, 0}), null));
        ByteBuf b = Unpooled.wrappedBuffer(p);
        assertEquals(1, p[4] & 0x01, "WSNZ=1");
        int max = ScsiCommandHandler.ATOMIC_BYTES / 512;
        assertEquals(max, b.getInt(44), "MAXIMUM ATOMIC TRANSFER LENGTH");
        assertEquals(max, b.getInt(48), "ATOMIC ALIGNMENT");
        assertEquals(1, b.getInt(52), "ATOMIC TRANSFER LENGTH GRANULARITY");
        assertEquals(0, b.getInt(60), "no atomic boundaries");
    }

    @Test
    void writeAtomicWritesWithinTheLimitsAndRefusesOutsideThem() throws Exception {
        int max = ScsiCommandHandler.ATOMIC_BYTES / 512;
        assertEquals(ScsiStatus.GOOD, run(atomic(max, max), fill(max * 512, 0xA6)).status());
        assertArrayEquals(fill(max * 512, 0xA6), disk((long) max * 512, max * 512));
        assertEquals(ScsiStatus.GOOD, run(atomic(BLOCKS - max, 1), fill(512, 0x11)).status(), "last aligned window");
        assertEquals(ScsiStatus.GOOD, run(atomic(0, 0), null).status(), "zero blocks: nothing");

        ScsiResult misaligned = run(atomic(1, 1), fill(512, 1));
        assertSense(misaligned, Sense.INVALID_FIELD_IN_CDB);
        assertCdbPointer(misaligned, 2);
        ScsiResult tooLong = run(atomic(0, max + 1), fill((max + 1) * 512, 1));
        assertSense(tooLong, Sense.INVALID_FIELD_IN_CDB);
        assertCdbPointer(tooLong, 12);
        ScsiResult boundary = run(atomic(0, 1).setShort(10, 1), fill(512, 1));
        assertCdbPointer(boundary, 10);
        ScsiResult wrprotect = run(atomic(0, 1).setByte(1, 0x20), fill(512, 1));
        assertSense(wrprotect, Sense.INVALID_FIELD_IN_CDB);
        // range before limits: an unaligned write past the end is out of range, not misaligned
        assertSense(run(atomic(BLOCKS - 1, 2), fill(1024, 1)), Sense.LBA_OUT_OF_RANGE);
        assertSense(run(atomic(0x8000000000000000L, 1), fill(512, 1)), Sense.LBA_OUT_OF_RANGE);
        // less data than the CDB says: nothing is written (no partial atomic write)
        assertSense(run(atomic(0, 2), fill(512, 0x33)), Sense.INCORRECT_DATA_AMOUNT);
        assertArrayEquals(new byte[512], disk(0, 512));
        assertEquals(2 * 512L, scsi.dataOutLength(atomic(0, 2)));
    }

    @Test
    void writeSameZeroBlocksIsRefusedPointingAtTheCount() {
        ScsiResult ws16 = run(cdb16(0x93).setLong(2, 0), fill(512, 7));
        assertSense(ws16, Sense.INVALID_FIELD_IN_CDB); // WSNZ=1
        assertCdbPointer(ws16, 10);
        ScsiResult ws10 = run(cdb16(0x41).setInt(2, 5), fill(512, 7));
        assertCdbPointer(ws10, 7);
    }

    /** An EXTENDED COPY parameter list: header, target descriptors naming {@code designator}, segments. */
    static byte[] xcopy(int listId, int usage, byte[][] targets, long[][] segments) {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(listId).writeByte(usage << 3).writeShort(targets.length * 32).writeInt(0)
                .writeInt(segments.length * 28).writeInt(0);
        for (byte[] t : targets) {
            b.writeBytes(t);
        }
        for (long[] s : segments) { // {src index, dst index, blocks, src lba, dst lba}
            b.writeByte(0x02).writeByte(0).writeShort(0x18).writeShort((int) s[0]).writeShort((int) s[1])
                    .writeShort(0).writeShort((int) s[2]).writeLong(s[3]).writeLong(s[4]);
        }
        return ByteBufUtil.getBytes(b);
    }

    /** An identification target descriptor (0xE4) carrying designation descriptor {@code d}. */
    static byte[] target(byte[] d, int type) {
        byte[] t = new byte[32];
        t[0] = (byte) type;
        System.arraycopy(d, 0, t, 4, Math.min(d.length, 24));
        t[30] = 0x02; // disk block length 512
        return t;
    }

    byte[] naa() {
        return scsi.designators().get(0);
    }

    static ByteBuf xcopyCdb(int len) {
        return cdb16(0x83).setInt(10, len);
    }

    static ByteBuf copyResults(int sa, int listId) {
        return cdb16(0x84).setByte(1, sa).setByte(2, listId).setInt(10, 1024);
    }

    @Test
    void extendedCopyCopiesBlocksWithinTheLuAndHoldsItsStatus() throws Exception {
        byte[] data = new byte[64 * 512];
        new java.util.Random(3).nextBytes(data);
        assertEquals(ScsiStatus.GOOD, run(cdb16(0x8A).setLong(2, 100).setInt(10, 64), data).status());
        byte[] list = xcopy(5, 0, new byte[][] {target(naa(), 0xE4)},
                new long[][] {{0, 0, 32, 100, 5000}, {0, 0, 32, 132, 5032}});
        assertEquals(list.length, scsi.dataOutLength(xcopyCdb(list.length)));
        assertEquals(ScsiStatus.GOOD, run(xcopyCdb(list.length), list).status());
        assertArrayEquals(data, disk(5000 * 512, data.length));

        ScsiNexus other = new ScsiNexus();
        other.takeUnitAttention();
        assertSense(run(copyResults(0, 5), null, other), Sense.INVALID_FIELD_IN_CDB); // list ids are per nexus
        byte[] st = bytes(run(copyResults(0, 5), null));
        ByteBuf s = Unpooled.wrappedBuffer(st);
        assertEquals(8, s.getInt(0));
        assertEquals(CopyManager.STATUS_COMPLETED_GOOD, st[4] & 0x7f);
        assertEquals(2, s.getUnsignedShort(5), "segments processed");
        assertEquals(64 * 512, s.getInt(8), "bytes copied");
        ScsiResult again = run(copyResults(0, 5), null);
        assertSense(again, Sense.INVALID_FIELD_IN_CDB); // reported once, then discarded
        assertCdbPointer(again, 2);
        assertEquals(ScsiStatus.GOOD, run(xcopyCdb(0), null).status(), "an empty parameter list copies nothing");
    }

    @Test
    void operatingParametersDescribeTheLimitsTheParserEnforces() {
        byte[] p = bytes(run(copyResults(3, 0), null));
        ByteBuf b = Unpooled.wrappedBuffer(p);
        assertEquals(p.length - 4, b.getInt(0));
        assertEquals(ExtendedCopy.MAX_TARGET_DESCRIPTORS, b.getUnsignedShort(8));
        assertEquals(ExtendedCopy.MAX_SEGMENT_DESCRIPTORS, b.getUnsignedShort(10));
        assertEquals(ExtendedCopy.MAX_DESCRIPTOR_LIST_LENGTH, b.getInt(12));
        assertEquals(2, p[43]);
        assertEquals(0x02, p[44]);
        assertEquals(0xE4, p[45] & 0xff);
        ScsiResult receiveData = run(copyResults(1, 0), null);
        assertSense(receiveData, Sense.INVALID_FIELD_IN_CDB);
        assertCdbPointer(receiveData, 1); // not implemented
    }

    @Test
    void extendedCopyRefusesBadListsPrecisely() throws Exception {
        byte[] t = target(naa(), 0xE4);
        long[] seg = {0, 0, 8, 0, 100};
        byte[] ok = xcopy(1, 0, new byte[][] {t}, new long[][] {seg});
        assertSense(run(xcopyCdb(ok.length - 1), Arrays.copyOf(ok, ok.length - 1)), Sense.PARAMETER_LIST_LENGTH_ERROR);
        assertSense(run(xcopyCdb(47), Arrays.copyOf(ok, 47)), Sense.PARAMETER_LIST_LENGTH_ERROR);
        byte[] threeTargets = xcopy(1, 0, new byte[][] {t, t, t}, new long[][] {seg});
        assertSense(run(xcopyCdb(threeTargets.length), threeTargets), Sense.TOO_MANY_TARGET_DESCRIPTORS);
        long[][] many = new long[ExtendedCopy.MAX_SEGMENT_DESCRIPTORS + 1][];
        Arrays.fill(many, seg);
        byte[] manySegs = xcopy(1, 0, new byte[][] {t}, many);
        assertSense(run(xcopyCdb(manySegs.length), manySegs), Sense.TOO_MANY_SEGMENT_DESCRIPTORS);
        long[][] huge = new long[40][];
        Arrays.fill(huge, seg);
        byte[] tooLong = xcopy(1, 0, new byte[][] {t}, huge);
        assertSense(run(xcopyCdb(tooLong.length), tooLong), Sense.PARAMETER_LIST_LENGTH_ERROR);
        byte[] fc = xcopy(1, 0, new byte[][] {target(naa(), 0xE0)}, new long[][] {seg});
        assertSense(run(xcopyCdb(fc.length), fc), Sense.UNSUPPORTED_TARGET_DESCRIPTOR_TYPE);
        byte[] stream = ok.clone();
        stream[16 + 32] = 0x03; // stream-to-stream segment
        assertSense(run(xcopyCdb(stream.length), stream), Sense.UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE);
        byte[] badIndex = xcopy(1, 0, new byte[][] {t}, new long[][] {{0, 1, 8, 0, 100}});
        assertSense(run(xcopyCdb(badIndex.length), badIndex), Sense.COPY_TARGET_NOT_REACHABLE);
        byte[] otherLu = naa().clone();
        otherLu[otherLu.length - 1] ^= 1;
        byte[] foreign = xcopy(1, 0, new byte[][] {target(otherLu, 0xE4)}, new long[][] {seg});
        assertSense(run(xcopyCdb(foreign.length), foreign), Sense.COPY_TARGET_NOT_REACHABLE);
        byte[] beyond = xcopy(1, 0, new byte[][] {t}, new long[][] {{0, 0, 8, 0, BLOCKS - 1}});
        ScsiResult r = run(xcopyCdb(beyond.length), beyond);
        assertSense(r, Sense.COPY_ABORTED_NO_DETAIL);
        assertEquals(0, r.sense().commandSpecific(), "the failed segment");
        assertArrayEquals(new byte[8 * 512], disk(100 * 512, 8 * 512), "nothing was copied by refused lists");
        // a device failure during the copy: COPY ABORTED naming the segment, and a held error status
        device.failWith = DeviceException.Reason.IO_ERROR;
        ScsiResult failed = run(xcopyCdb(ok.length), ok);
        device.failWith = null;
        assertSense(failed, Sense.COPY_ABORTED_NO_DETAIL);
        byte[] st = bytes(run(copyResults(0, 1), null));
        assertEquals(CopyManager.STATUS_COMPLETED_ERROR, st[4] & 0x7f);
        assertEquals(0, Unpooled.wrappedBuffer(st).getUnsignedShort(5));
    }

    @Test
    void unimplementedServiceActionsPointAtTheServiceActionByte() {
        ScsiResult maintenanceIn = run(cdb16(0xA3).setByte(1, 0x0A), null);
        assertCdbPointer(maintenanceIn, 1);
        ScsiResult sai = run(cdb16(0x9E).setByte(1, 0x13), null);
        assertCdbPointer(sai, 1);
        // REPORT SUPPORTED OPERATION CODES with options that do not fit the opcode: pointer at byte 2
        ScsiResult rsoc = run(cdb16(0xA3).setByte(1, 0x0C).setByte(2, 0x02).setByte(3, 0x00).setInt(6, 512), null);
        assertSense(rsoc, Sense.INVALID_FIELD_IN_CDB);
        assertCdbPointer(rsoc, 2);
        byte[] one = bytes(run(cdb16(0xA3).setByte(1, 0x0C).setByte(2, 0x01).setByte(3, 0x9C).setInt(6, 512), null));
        assertEquals(0x03, one[1] & 0x07, "WRITE ATOMIC(16) is supported");
        assertEquals(0x18, one[5] & 0x18, "with DPO/FUA");
    }
}
