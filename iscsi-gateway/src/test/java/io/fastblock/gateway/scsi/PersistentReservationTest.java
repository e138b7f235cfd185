package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PERSISTENT RESERVE IN/OUT and RESERVE/RELEASE(6) between two I_T nexuses of one LU. */
class PersistentReservationTest {
    @TempDir
    Path dir;
    FileBlockDevice device;
    ScsiCommandHandler lu;
    ScsiNexus a;
    ScsiNexus b;

    @BeforeEach
    void setUp() throws Exception {
        device = new FileBlockDevice(dir.resolve("pr.img"), 1 << 20, 3, "pr");
        lu = new ScsiCommandHandler(device, "iqn.2026-11.io.fastblock:pr");
        a = nexus("iqn.2026-11.io.fastblock:a", 1);
        b = nexus("iqn.2026-11.io.fastblock:b", 2);
    }

    ScsiNexus nexus(String name, long isid) {
        ScsiNexus n = new ScsiNexus(name, isid);
        n.takeUnitAttention();
        lu.attach(n);
        return n;
    }

    @AfterEach
    void tearDown() {
        device.close();
    }

    ScsiResult run(ScsiNexus n, ByteBuf cdb, ByteBuf out) {
        return ResultTracker.owned(lu.execute(0, cdb, out, n, ByteBufAllocator.DEFAULT).join());
    }

    static ByteBuf cdb(int... bytes) {
        byte[] c = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            c[i] = (byte) bytes[i];
        }
        return Unpooled.wrappedBuffer(c);
    }

    int out(ScsiNexus n, int sa, int type, long key, long saKey) {
        ByteBuf params = Unpooled.buffer(24).writeLong(key).writeLong(saKey).writeZero(8);
        ScsiResult r = run(n, cdb(0x5F, sa, type, 0, 0, 0, 0, 0, 24, 0), params);
        return r.status();
    }

    int write(ScsiNexus n) {
        return run(n, cdb(0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0), Unpooled.wrappedBuffer(new byte[512])).status();
    }

    int read(ScsiNexus n) {
        ScsiResult r = run(n, cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0), null);
        r.dataIn().release();
        return r.status();
    }

    ByteBuf in(ScsiNexus n, int sa) {
        ScsiResult r = run(n, cdb(0x5E, sa, 0, 0, 0, 0, 0, 2, 0, 0), null);
        assertEquals(ScsiStatus.GOOD, r.status());
        return r.dataIn();
    }

    static final int GOOD = ScsiStatus.GOOD;
    static final int CONFLICT = ScsiStatus.RESERVATION_CONFLICT;

    @Test
    void registerReserveAndTheConflictsOfWriteExclusive() {
        assertEquals(GOOD, out(a, 0, 0, 0, 0xAAAA));
        assertEquals(CONFLICT, out(b, 0, 0, 0x1234, 0xBBBB), "wrong key for an unregistered nexus");
        assertEquals(GOOD, out(b, 0, 0, 0, 0xBBBB));
        ByteBuf keys = in(a, 0);
        assertEquals(2, keys.getInt(0), "PRgeneration counts registrations");
        assertEquals(16, keys.getInt(4));
        assertEquals(0xAAAAL, keys.getLong(8));
        keys.release();
        assertEquals(CONFLICT, out(a, 1, 1, 0xBBBB, 0), "RESERVE with someone else's key");
        assertEquals(GOOD, out(a, 1, 1, 0xAAAA, 0)); // WRITE EXCLUSIVE
        ByteBuf res = in(b, 1);
        assertEquals(16, res.getInt(4));
        assertEquals(0xAAAAL, res.getLong(8));
        assertEquals(1, res.getByte(21));
        res.release();
        assertEquals(GOOD, write(a));
        assertEquals(CONFLICT, write(b));
        assertEquals(GOOD, read(b), "reads are allowed under WRITE EXCLUSIVE");
        assertEquals(CONFLICT, out(b, 1, 1, 0xBBBB, 0), "second reservation");
        assertEquals(GOOD, out(a, 2, 1, 0xAAAA, 0)); // RELEASE
        assertEquals(GOOD, write(b));
        assertEquals(null, b.pendingUnitAttention(), "no UA when a WRITE EXCLUSIVE is released");
    }

    @Test
    void exclusiveAccessRegistrantsOnly() {
        ScsiNexus c = nexus("iqn.2026-11.io.fastblock:c", 3);
        out(a, 0, 0, 0, 1);
        out(b, 0, 0, 0, 2);
        assertEquals(GOOD, out(a, 1, 6, 1, 0));
        assertEquals(GOOD, read(b), "registrants may access");
        assertEquals(GOOD, write(b));
        assertEquals(CONFLICT, read(c), "others may not even read");
        assertEquals(GOOD, out(a, 2, 6, 1, 0));
        assertEquals(Sense.RESERVATIONS_RELEASED, b.takeUnitAttention(), "registrants-only release: UA 2A/04");
        assertEquals(null, c.pendingUnitAttention());
        assertEquals(ScsiStatus.CHECK_CONDITION, run(a, cdb(0x5F, 1, 6, 0, 0, 0, 0, 0, 10, 0),
                Unpooled.buffer(10).writeZero(10)).status(), "parameter list of 10 bytes");
    }

    @Test
    void preemptAndAbortRemovesTheHolderAndAbortsItsTasks() {
        AtomicInteger aborted = new AtomicInteger();
        b.onAbortRequest(aborted::incrementAndGet);
        out(a, 0, 0, 0, 1);
        out(b, 0, 0, 0, 2);
        assertEquals(GOOD, out(b, 1, 3, 2, 0)); // b holds EXCLUSIVE ACCESS
        assertEquals(CONFLICT, read(a));
        assertEquals(GOOD, out(a, 5, 1, 1, 2)); // a preempts b's key and aborts, new type WE
        assertEquals(1, aborted.get());
        assertEquals(Sense.REGISTRATIONS_PREEMPTED, b.takeUnitAttention());
        ByteBuf keys = in(a, 0);
        assertEquals(8, keys.getInt(4), "only a is registered");
        keys.release();
        assertEquals(CONFLICT, write(b));
        assertEquals(CONFLICT, out(a, 4, 1, 1, 99), "preempting a key nobody has");
    }

    @Test
    void clearRemovesEverythingAndCapabilitiesAreReported() {
        out(a, 0, 0, 0, 1);
        out(b, 0, 0, 0, 2);
        out(a, 1, 8, 1, 0); // EXCLUSIVE ACCESS, ALL REGISTRANTS
        assertEquals(GOOD, write(b), "all registrants hold it");
        assertEquals(GOOD, out(b, 3, 0, 2, 0)); // CLEAR
        assertEquals(Sense.RESERVATIONS_PREEMPTED, a.takeUnitAttention());
        ByteBuf keys = in(a, 0);
        assertEquals(0, keys.getInt(4));
        keys.release();
        ByteBuf caps = in(a, 2);
        assertEquals(8, caps.getShort(0));
        assertTrue((caps.getByte(3) & 0x80) != 0, "type mask valid");
        assertEquals((byte) 0xEA, caps.getByte(4));
        assertEquals(1, caps.getByte(5));
        caps.release();
        assertEquals(ScsiStatus.CHECK_CONDITION, run(a, cdb(0x5E, 4, 0, 0, 0, 0, 0, 2, 0, 0), null).status());
    }

    @Test
    void readFullStatusCarriesTransportIds() {
        out(a, 0, 0, 0, 7);
        out(a, 1, 1, 7, 0);
        ByteBuf full = in(b, 3);
        assertEquals(7, full.getLong(8));
        assertEquals(3, full.getByte(20), "ALL_TG_PT and R_HOLDER");
        int tidLen = full.getInt(28);
        assertEquals(0x45, full.getByte(32), "iSCSI, initiator port format");
        String name = full.toString(36, tidLen - 4, java.nio.charset.StandardCharsets.UTF_8).trim();
        assertTrue(name.startsWith("iqn.2026-11.io.fastblock:a,i,0x000000000001"), name);
        full.release();
    }

    @Test
    void reserve6ConflictsUntilReleasedResetOrNexusLoss() {
        assertEquals(GOOD, run(a, cdb(0x16), null).status());
        assertEquals(CONFLICT, run(b, cdb(0x16), null).status());
        ScsiResult ms = run(b, cdb(0x1A, 0, 0x3F, 0, 255), null);
        assertEquals(CONFLICT, ms.status(), "MODE SENSE from another initiator");
        ScsiResult inq = run(b, cdb(0x12, 0, 0, 0, 36), null);
        assertEquals(GOOD, inq.status(), "INQUIRY is always allowed");
        inq.dataIn().release();
        assertEquals(GOOD, run(b, cdb(0x17), null).status(), "releasing someone else's is a no-op");
        assertEquals(CONFLICT, write(b));
        lu.reset();
        assertEquals(GOOD, write(b));
        assertEquals(GOOD, run(b, cdb(0x16), null).status());
        lu.detach(b);
        assertEquals(GOOD, write(a), "I_T nexus loss releases it");
        assertEquals(GOOD, out(a, 0, 0, 0, 5));
        assertEquals(CONFLICT, run(b, cdb(0x16), null).status(), "no RESERVE(6) while registrations exist");
    }
}
