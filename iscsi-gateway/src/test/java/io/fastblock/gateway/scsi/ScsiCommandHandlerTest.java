package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScsiCommandHandlerTest {
    static final long SIZE = 4L << 20; // 8192 blocks
    static final String IQN = "iqn.2026-11.io.fastblock:vol7";

    @TempDir
    Path dir;
    FileBlockDevice device;
    ScsiCommandHandler scsi;
    ScsiNexus nexus;

    @BeforeEach
    void setUp() throws Exception {
        device = new FileBlockDevice(dir.resolve("lun.img"), SIZE, 0x1234, "vol7");
        scsi = new ScsiCommandHandler(device, IQN);
        nexus = new ScsiNexus();
        nexus.takeUnitAttention(); // most tests start past the power-on unit attention
    }

    @AfterEach
    void tearDown() {
        device.close();
    }

    static ByteBuf cdb(int... bytes) {
        byte[] b = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            b[i] = (byte) bytes[i];
        }
        return Unpooled.wrappedBuffer(b);
    }

    ScsiResult run(ByteBuf cdb) {
        return run(0, cdb, null);
    }

    ScsiResult run(long lun, ByteBuf cdb, ByteBuf out) {
        return ResultTracker.owned(scsi.execute(lun, cdb, out, nexus, ByteBufAllocator.DEFAULT).join());
    }

    static byte[] bytes(ScsiResult r) {
        byte[] b = ByteBufUtil.getBytes(r.dataIn());
        r.dataIn().release();
        return b;
    }

    static void assertSense(ScsiResult r, int key, int asc, int ascq) {
        assertEquals(ScsiStatus.CHECK_CONDITION, r.status());
        assertTrue(new Sense(key, asc, ascq).sameCode(r.sense()), "expected " + new Sense(key, asc, ascq) + ", got " + r.sense());
    }

    @Test
    void standardInquiry() {
        byte[] d = bytes(run(cdb(0x12, 0, 0, 0, 255)));
        assertEquals(96, d.length);
        assertEquals(0x00, d[0], "PQ 0, PDT disk");
        assertEquals(0x06, d[2], "SPC-4");
        assertEquals(0x12, d[3], "HiSup + format 2");
        assertEquals(91, d[4]);
        assertEquals(0x02, d[7], "CmdQue");
        assertEquals("FASTBLK ", new String(d, 8, 8, StandardCharsets.US_ASCII));
        assertEquals("fastblock volume", new String(d, 16, 16, StandardCharsets.US_ASCII));
        assertEquals(0x0960, ((d[58] & 0xff) << 8) | (d[59] & 0xff));
        assertEquals(0x0460, ((d[60] & 0xff) << 8) | (d[61] & 0xff));
        assertEquals(0x04C0, ((d[62] & 0xff) << 8) | (d[63] & 0xff));
    }

    @Test
    void inquiryHonoursAllocationLength() {
        assertEquals(36, bytes(run(cdb(0x12, 0, 0, 0, 36))).length);
        assertEquals(0, bytes(run(cdb(0x12, 0, 0, 0, 0))).length);
    }

    @Test
    void inquiryPageWithoutEvpdIsInvalidField() {
        assertSense(run(cdb(0x12, 0, 0x80, 0, 255)), 0x05, 0x24, 0);
        assertSense(run(cdb(0x12, 1, 0x99, 0, 255)), 0x05, 0x24, 0);
    }

    @Test
    void vpdSupportedPagesAreSorted() {
        assertEquals("00000005008083b0b1", ByteBufUtil.hexDump(bytes(run(cdb(0x12, 1, 0x00, 0, 255)))));
    }

    @Test
    void vpdSerialIsStablePerVolume() {
        byte[] d = bytes(run(cdb(0x12, 1, 0x80, 0, 255)));
        assertEquals((byte) 0x80, d[1]);
        assertEquals("FB0000000000001234", new String(d, 4, d[3], StandardCharsets.US_ASCII));
    }

    @Test
    void vpdDeviceIdentification() {
        byte[] d = bytes(run(cdb(0x12, 1, 0x83, 0, 255)));
        assertEquals((byte) 0x83, d[1]);
        assertEquals(d.length - 4, ((d[2] & 0xff) << 8) | (d[3] & 0xff));
        // NAA 6 designator: binary, LU, type 3, 16 bytes; volume id in the last 8 bytes
        assertEquals("01030010", ByteBufUtil.hexDump(d, 4, 4));
        assertEquals(0x60, d[8] & 0xf0);
        assertEquals("0000000000001234", ByteBufUtil.hexDump(d, 16, 8));
        // T10 vendor id
        int t10 = 24;
        assertEquals("0201", ByteBufUtil.hexDump(d, t10, 2));
        assertEquals("FASTBLK vol7", new String(d, t10 + 4, d[t10 + 3], StandardCharsets.US_ASCII));
        // SCSI name string with the IQN
        int name = t10 + 4 + d[t10 + 3];
        assertEquals("53a8", ByteBufUtil.hexDump(d, name, 2));
        assertEquals(0, d[name + 3] % 4);
        assertEquals(IQN, new String(d, name + 4, IQN.length(), StandardCharsets.UTF_8));
        // the same volume gives the same bytes on another gateway
        ScsiCommandHandler other = new ScsiCommandHandler(device, IQN);
        byte[] again = bytes(other.execute(0, cdb(0x12, 1, 0x83, 0, 255), null, nexus,
                ByteBufAllocator.DEFAULT).join());
        assertArrayEquals(d, again);
    }

    @Test
    void vpdBlockLimitsAndCharacteristics() {
        byte[] b0 = bytes(run(cdb(0x12, 1, 0xB0, 0, 255)));
        assertEquals(64, b0.length);
        assertEquals(0x3C, b0[3]);
        assertEquals(16384, Unpooled.wrappedBuffer(b0).getInt(8), "max transfer 8 MiB in blocks");
        assertEquals(2048, Unpooled.wrappedBuffer(b0).getInt(12), "optimal transfer 1 MiB");
        assertEquals(0, Unpooled.wrappedBuffer(b0).getInt(20), "no unmap");
        byte[] b1 = bytes(run(cdb(0x12, 1, 0xB1, 0, 255)));
        assertEquals(1, ((b1[4] & 0xff) << 8) | (b1[5] & 0xff), "non-rotating");
    }

    @Test
    void nonExistentLun() {
        long lun1 = 0x0001000000000000L;
        byte[] inq = ByteBufUtil.getBytes(run(lun1, cdb(0x12, 0, 0, 0, 36), null).dataIn());
        assertEquals(0x7F, inq[0], "PQ=3 PDT=0x1F");
        assertSense(run(lun1, cdb(0x00), null), 0x05, 0x25, 0);
        assertSense(run(lun1, cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0), null), 0x05, 0x25, 0);
    }

    @Test
    void readCapacity10And16() {
        ByteBuf rc10 = run(cdb(0x25)).dataIn();
        assertEquals(8191, rc10.getInt(0));
        assertEquals(512, rc10.getInt(4));
        rc10.release();
        ByteBuf rc16 = run(cdb(0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32)).dataIn();
        assertEquals(32, rc16.readableBytes());
        assertEquals(8191, rc16.getLong(0));
        assertEquals(512, rc16.getInt(8));
        assertEquals(0, rc16.getByte(13), "LBPPBE 0 (see ScsiCommandHandler.readCapacity16)");
        assertEquals(0, rc16.getByte(14), "thick: no LBPME");
        rc16.release();
        assertSense(run(cdb(0x25, 0, 0, 0, 0, 1)), 0x05, 0x24, 0); // LBA without PMI
        assertSense(run(cdb(0x9E, 0x12)), 0x05, 0x24, 0); // GET LBA STATUS: not on a thick LU
    }

    @Test
    void modeSenseAllPages() {
        byte[] d = bytes(run(cdb(0x1A, 0, 0x3F, 0, 255)));
        assertEquals(d.length - 1, d[0] & 0xff);
        assertEquals(0x10, d[2], "DPOFUA, not write protected");
        assertEquals(8, d[3], "block descriptor");
        assertEquals(8192, Unpooled.wrappedBuffer(d).getInt(4));
        assertEquals(512, Unpooled.wrappedBuffer(d).getInt(8));
        assertEquals(0x08, d[12]);
        assertEquals(0x12, d[13]);
        assertEquals(0, d[14] & 0x04, "WCE=0: writes are durable when acknowledged");
        assertEquals(0x0A, d[12 + 20]);
        assertEquals(0x0A, d[13 + 20]);
        assertEquals(12 + 20 + 12, d.length);
    }

    @Test
    void modeSenseCachingPage10WithoutBlockDescriptor() {
        byte[] d = bytes(run(cdb(0x5A, 0x08, 0x08, 0, 0, 0, 0, 0, 255)));
        assertEquals(8 + 20, d.length);
        assertEquals(d.length - 2, ((d[0] & 0xff) << 8) | (d[1] & 0xff));
        assertEquals(0, d[7]);
        assertEquals(0x08, d[8]);
    }

    @Test
    void modeSensePageControl() {
        byte[] changeable = bytes(run(cdb(0x1A, 0x08, 0x40 | 0x3F, 0, 255)));
        for (int i = 4; i < changeable.length; i++) {
            if (i != 4 && i != 5 && i != 24 && i != 25) {
                assertEquals(0, changeable[i], "nothing changeable at " + i);
            }
        }
        assertEquals(ScsiStatus.GOOD, run(cdb(0x1A, 0, 0x80 | 0x08, 0, 255)).status()); // default
        assertSense(run(cdb(0x1A, 0, 0xC0 | 0x08, 0, 255)), 0x05, 0x39, 0); // saved
        assertSense(run(cdb(0x1A, 0, 0x1C, 0, 255)), 0x05, 0x24, 0); // unknown page
    }

    @Test
    void reportLuns() {
        byte[] d = bytes(run(cdb(0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 16)));
        assertEquals("00000008000000000000000000000000", ByteBufUtil.hexDump(d));
        assertSense(run(cdb(0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 8)), 0x05, 0x24, 0);
    }

    @Test
    void writeThenReadRoundTrip() throws Exception {
        byte[] data = new byte[8 * 512];
        new Random(3).nextBytes(data);
        ScsiResult w = run(0, cdb(0x2A, 0, 0, 0, 0, 100, 0, 0, 8, 0), Unpooled.wrappedBuffer(data));
        assertEquals(ScsiStatus.GOOD, w.status());
        assertArrayEquals(data, Arrays.copyOfRange(Files.readAllBytes(dir.resolve("lun.img")), 100 * 512, 108 * 512));
        assertArrayEquals(data, bytes(run(cdb(0x28, 0, 0, 0, 0, 100, 0, 0, 8, 0))));
        assertArrayEquals(data, bytes(run(cdb(0x88, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 8))));
        assertArrayEquals(Arrays.copyOf(data, 512), bytes(run(cdb(0x08, 0, 0, 100, 1))));
        assertEquals(ScsiStatus.GOOD, run(cdb(0x35)).status()); // SYNCHRONIZE CACHE(10)
        assertEquals(ScsiStatus.GOOD, run(cdb(0x91)).status()); // SYNCHRONIZE CACHE(16)
    }

    @Test
    void writeWithShortDataOutWritesOnlyWholeBlocksReceived() throws Exception {
        byte[] data = new byte[512 + 100];
        Arrays.fill(data, (byte) 7);
        assertEquals(ScsiStatus.GOOD, run(0, cdb(0x2A, 0, 0, 0, 0, 10, 0, 0, 2, 0), Unpooled.wrappedBuffer(data)).status());
        byte[] disk = Files.readAllBytes(dir.resolve("lun.img"));
        assertEquals(7, disk[10 * 512 + 511]);
        assertEquals(0, disk[11 * 512]);
    }

    @Test
    void dataOutLengthFollowsTheCdb() {
        assertEquals(8 * 512, scsi.dataOutLength(cdb(0x2A, 0, 0, 0, 0, 0, 0, 0, 8, 0)));
        assertEquals(256 * 512, scsi.dataOutLength(cdb(0x0A, 0, 0, 0, 0)));
        assertEquals(0, scsi.dataOutLength(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0)));
        assertEquals(512, scsi.dataOutLength(cdb(0x2F, 0x06, 0, 0, 0, 0, 0, 0, 8, 0)), "VERIFY BYTCHK=11");
    }

    @Test
    void lbaOutOfRange() {
        assertSense(run(cdb(0x28, 0, 0, 0, 0x20, 0x00, 0, 0, 1, 0)), 0x05, 0x21, 0); // LBA 8192 = capacity
        assertSense(run(cdb(0x28, 0, 0, 0, 0x1F, 0xFF, 0, 0, 2, 0)), 0x05, 0x21, 0); // last LBA + 2 blocks
        assertSense(run(0, cdb(0x2A, 0, 0, 0, 0x1F, 0xFF, 0, 0, 2, 0), Unpooled.wrappedBuffer(new byte[1024])), 0x05, 0x21, 0);
        assertSense(run(cdb(0x88, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1)), 0x05, 0x21, 0);
        assertEquals(ScsiStatus.GOOD, run(cdb(0x28, 0, 0, 0, 0x1F, 0xFF, 0, 0, 1, 0)).status()); // last block
    }

    @Test
    void unknownOpcodeAndInvalidFields() {
        assertSense(run(cdb(0xC0)), 0x05, 0x20, 0);
        assertSense(run(cdb(0x42)), 0x05, 0x20, 0); // UNMAP not advertised
        assertSense(run(cdb(0x28, 0x20, 0, 0, 0, 0, 0, 0, 1, 0)), 0x05, 0x24, 0); // RDPROTECT
    }

    @Test
    void unitAttentionOnFirstCommandOfANewNexus() {
        nexus = new ScsiNexus();
        assertEquals(ScsiStatus.GOOD, run(cdb(0x12, 0, 0, 0, 36)).status(), "INQUIRY is exempt");
        assertEquals(ScsiStatus.GOOD, run(cdb(0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 16)).status(), "REPORT LUNS too");
        assertSense(run(cdb(0x00)), 0x06, 0x29, 0x00);
        assertEquals(ScsiStatus.GOOD, run(cdb(0x00)).status());
    }

    @Test
    void requestSenseReturnsAndClearsTheUnitAttention() {
        nexus = new ScsiNexus();
        byte[] s = bytes(run(cdb(0x03, 0, 0, 0, 18)));
        assertEquals(0x70, s[0]);
        assertEquals(0x06, s[2]);
        assertEquals(0x29, s[12]);
        assertNull(nexus.pendingUnitAttention());
        byte[] none = bytes(run(cdb(0x03, 0, 0, 0, 18)));
        assertEquals(0x00, none[2]);
    }

    @Test
    void deviceErrorsBecomeSense() {
        device.failWith = DeviceException.Reason.IO_ERROR;
        assertSense(run(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0)), 0x03, 0x11, 0x00);
        assertSense(run(0, cdb(0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0), Unpooled.wrappedBuffer(new byte[512])), 0x03, 0x0C, 0x00);
        device.failWith = DeviceException.Reason.NO_SPACE;
        assertSense(run(0, cdb(0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0), Unpooled.wrappedBuffer(new byte[512])), 0x07, 0x27, 0x07);
        device.failWith = DeviceException.Reason.UNAVAILABLE;
        assertSense(run(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0)), 0x02, 0x04, 0x00);
        device.failWith = DeviceException.Reason.FENCED;
        assertSense(run(0, cdb(0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0), Unpooled.wrappedBuffer(new byte[512])), 0x07, 0x27, 0x00);
        device.failWith = DeviceException.Reason.OUT_OF_RANGE;
        assertSense(run(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0)), 0x05, 0x21, 0x00);
        assertSense(run(cdb(0x35)), 0x05, 0x21, 0x00);
    }

    @Test
    void verifyComparesData() {
        byte[] data = new byte[512];
        Arrays.fill(data, (byte) 5);
        run(0, cdb(0x2A, 0, 0, 0, 0, 1, 0, 0, 1, 0), Unpooled.wrappedBuffer(data));
        assertEquals(ScsiStatus.GOOD, run(0, cdb(0x2F, 0x02, 0, 0, 0, 1, 0, 0, 1, 0), Unpooled.wrappedBuffer(data)).status());
        data[100] = 6;
        assertSense(run(0, cdb(0x2F, 0x02, 0, 0, 0, 1, 0, 0, 1, 0), Unpooled.wrappedBuffer(data)), 0x0E, 0x1D, 0x00);
    }

    @Test
    void fixedFormatSense() {
        assertEquals("700005000000000a00000000210000000000",
                ByteBufUtil.hexDump(Sense.LBA_OUT_OF_RANGE.toFixedFormat()));
        assertTrue(Sense.POWER_ON_RESET.toFixedFormat()[2] == 6);
    }

    @Test
    void writeSameRepeatsOneBlock() throws Exception {
        byte[] block = new byte[512];
        Arrays.fill(block, (byte) 0x5A);
        assertEquals(ScsiStatus.GOOD, run(0, cdb(0x41, 0, 0, 0, 0, 20, 0, 0, 3, 0), Unpooled.wrappedBuffer(block)).status());
        byte[] disk = Arrays.copyOfRange(Files.readAllBytes(dir.resolve("lun.img")), 20 * 512, 23 * 512);
        for (byte b : disk) {
            assertEquals(0x5A, b);
        }
        assertSense(run(0, cdb(0x41, 0x08, 0, 0, 0, 20, 0, 0, 3, 0), Unpooled.wrappedBuffer(block)), 0x05, 0x24, 0); // UNMAP
        assertSense(run(0, cdb(0x41, 0, 0, 0, 0, 20, 0, 0, 0, 0), Unpooled.wrappedBuffer(block)), 0x05, 0x24, 0); // WSNZ
        assertSense(run(0, cdb(0x41, 0, 0, 0, 0x1F, 0xFF, 0, 0, 2, 0), Unpooled.wrappedBuffer(block)), 0x05, 0x21, 0);
    }

    @Test
    void reportSupportedOpcodesOneCommand() {
        // READ(10): supported, DPO and FUA usable (we report DPOFUA in MODE SENSE)
        byte[] d = bytes(run(cdb(0xA3, 0x0C, 0x01, 0x28, 0, 0, 0, 0, 1, 0)));
        assertEquals(0x03, d[1] & 0x07, "supported");
        assertEquals(10, ((d[2] & 0xff) << 8) | (d[3] & 0xff));
        assertEquals(0x28, d[4] & 0xff);
        assertEquals(0x18, d[5] & 0x18);
        // UNMAP: not supported on a thick LU
        byte[] u = bytes(run(cdb(0xA3, 0x0C, 0x01, 0x42, 0, 0, 0, 0, 1, 0)));
        assertEquals(0x01, u[1] & 0x07);
        // READ CAPACITY(16) has a service action: option 1 is invalid for it
        assertSense(run(cdb(0xA3, 0x0C, 0x01, 0x9E, 0, 0, 0, 0, 1, 0)), 0x05, 0x24, 0);
        byte[] all = bytes(run(cdb(0xA3, 0x0C, 0x00, 0, 0, 0, 0, 0x10, 0, 0)));
        int len = Unpooled.wrappedBuffer(all).getInt(0);
        assertEquals(all.length - 4, len);
        assertEquals(SupportedOpcodes.COMMANDS.size() * 8, len);
    }

    @Test
    void readDefectDataReportsEmptyLists() {
        byte[] d10 = bytes(run(cdb(0x37, 0, 0x18 | 0x05, 0, 0, 0, 0, 0, 255, 0)));
        assertArrayEquals(new byte[] {0, 0x1D, 0, 0}, d10, "PLIST+GLIST, format echoed, no defects");
        byte[] d12 = bytes(run(cdb(0xB7, 0x08 | 0x04, 0, 0, 0, 0, 0, 0, 0, 32)));
        assertArrayEquals(new byte[] {0, 0x0C, 0, 0, 0, 0, 0, 0}, d12);
        assertEquals(2, bytes(run(cdb(0x37, 0, 0x18, 0, 0, 0, 0, 0, 2, 0))).length, "allocation length honoured");
    }
}
