package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * SPC/SBC command interpretation for logical unit 0 backed by a {@link BlockDevice}: takes a CDB
 * (and the data-out of writes), produces status, sense and data-in. Transport-free; device I/O is
 * asynchronous and the returned future may complete on a device thread.
 */
public final class ScsiCommandHandler {
    public static final String VENDOR = "FASTBLK";
    public static final String PRODUCT = "fastblock volume";
    public static final String REVISION = "0001";
    /** Largest single transfer we accept (VPD B0 MAXIMUM TRANSFER LENGTH). */
    public static final int MAX_TRANSFER_BYTES = 8 << 20;
    /** Locally administered company id (the 0x02 bit of the first octet marks it as a CID). */
    static final long COMPANY_ID = 0x0AFB10L;

    private final BlockDevice device;
    private final String targetName;
    private final int blockSize;
    /** Updated when the device grows (an extend while in use); READ CAPACITY answers from it. */
    private volatile long blocks;
    private final Reservations reservations = new Reservations();
    private final LbaRangeLocks locks = new LbaRangeLocks();
    private final boolean thin;
    /** VPD B0 limits. */
    static final int MAX_COMPARE_AND_WRITE_BLOCKS = 255;
    static final int MAX_UNMAP_DESCRIPTORS = 256;
    /** Per UNMAP command and per WRITE SAME with UNMAP (libiscsi wants at most 2^20 blocks). */
    static final long MAX_UNMAP_BYTES = 256L << 20;
    /**
     * WRITE ATOMIC(16): at most this many bytes, starting at a multiple of it. An aligned range of
     * this size never crosses a chunk (chunk sizes are multiples of it), so the FAST client carries
     * it as one storage write, which every replica applies whole; the range lock keeps other
     * commands of this LU from seeing it half done.
     */
    static final int ATOMIC_BYTES = 128 << 10;

    public ScsiCommandHandler(BlockDevice device, String targetName) {
        this.device = device;
        this.targetName = targetName;
        this.blockSize = device.blockSize();
        this.blocks = device.sizeBytes() / blockSize;
        this.thin = device.thinProvisioned();
        this.copies = new CopyManager(device, this::locked);
        this.writes = new WriteCoalescer(device);
        device.onCapacityChange(this::capacityChanged);
    }

    /** SBC-4: every I_T nexus of the LU learns of the new capacity through a unit attention. */
    private void capacityChanged() {
        long now = device.sizeBytes() / blockSize;
        if (now != blocks) {
            blocks = now;
            reservations.unitAttentionAll(Sense.CAPACITY_DATA_HAS_CHANGED);
        }
    }

    private final CopyManager copies;
    /** Plain WRITE commands go through it; the other writing commands go to the device directly. */
    private final WriteCoalescer writes;

    public BlockDevice device() {
        return device;
    }

    /** A session starts using this LU. */
    public void attach(ScsiNexus nexus) {
        reservations.attach(nexus);
    }

    /** A session ended (logout, connection loss, reinstatement): an I_T nexus loss for this LU. */
    public void detach(ScsiNexus nexus) {
        reservations.nexusLost(nexus);
        copies.nexusLost(nexus);
    }

    /** Whether the LU advertises and serves logical block provisioning (UNMAP, GET LBA STATUS...). */
    public boolean thin() {
        return thin;
    }

    /** LOGICAL UNIT RESET / target reset: SCSI-2 reservations go, persistent ones stay (SPC-4 5.13.11). */
    public void reset() {
        reservations.reset();
    }

    /**
     * Bytes of data-out the command in {@code cdb} transfers according to the CDB (0 for commands
     * without data-out); the transport uses it to size its buffer and compute residuals.
     */
    public long dataOutLength(ByteBuf cdb) {
        int op = cdb.getUnsignedByte(0);
        long tl = switch (op) {
            case 0x0A -> transferLength6(cdb);
            case 0x2A, 0x2E -> cdb.getUnsignedShort(7);
            case 0xAA, 0xAE -> cdb.getUnsignedInt(6);
            case 0x8A, 0x8E -> cdb.getUnsignedInt(10);
            case 0x9C -> cdb.getUnsignedShort(12); // WRITE ATOMIC(16)
            case 0x2F -> verifyBlocks(cdb, cdb.getUnsignedShort(7));
            case 0xAF -> verifyBlocks(cdb, cdb.getUnsignedInt(6));
            case 0x8F -> verifyBlocks(cdb, cdb.getUnsignedInt(10));
            case 0x89 -> 2L * cdb.getUnsignedByte(13); // COMPARE AND WRITE: verify + write data
            case 0x8B -> cdb.getUnsignedInt(10); // ORWRITE(16)
            case 0x41 -> 1; // WRITE SAME(10): one block of data-out
            case 0x93 -> (cdb.getByte(1) & 0x01) != 0 ? 0 : 1; // WRITE SAME(16), NDOB: no data-out
            default -> -1;
        };
        if (tl >= 0) {
            return tl * blockSize;
        }
        return switch (op) {
            case 0x15 -> cdb.getUnsignedByte(4); // MODE SELECT(6) parameter list
            case 0x55 -> cdb.getUnsignedShort(7);
            case 0x42 -> cdb.getUnsignedShort(7); // UNMAP parameter list
            case 0x5F -> cdb.getUnsignedInt(5); // PERSISTENT RESERVE OUT parameter list
            case 0x83 -> cdb.getUnsignedInt(10); // EXTENDED COPY parameter list
            default -> 0;
        };
    }

    /** Data-out blocks of VERIFY: the whole range with BYTCHK=01, one block with 11, none with 00. */
    private static long verifyBlocks(ByteBuf cdb, long count) {
        return switch ((cdb.getByte(1) >> 1) & 3) {
            case 1 -> count;
            case 3 -> count == 0 ? 0 : 1;
            default -> 0;
        };
    }

    /** True when {@code lun} (the 8-byte iSCSI LUN field) addresses our logical unit 0. */
    public static boolean isLun0(long lun) {
        return lun == 0;
    }

    /**
     * Executes one command. {@code dataOut} (may be null) is only read during this call's device
     * write; the caller keeps ownership and releases it when the future completes.
     */
    public CompletableFuture<ScsiResult> execute(long lun, ByteBuf cdb, ByteBuf dataOut, ScsiNexus nexus,
                                                 ByteBufAllocator alloc) {
        return execute(lun, cdb, dataOut, -1, nexus, alloc);
    }

    /**
     * As above, with the data-out length the initiator announced ({@code -1}: unknown). Commands
     * whose data-out size is fixed by the CDB (COMPARE AND WRITE, WRITE SAME) refuse any other
     * amount with ILLEGAL REQUEST instead of guessing which part was meant.
     */
    public CompletableFuture<ScsiResult> execute(long lun, ByteBuf cdb, ByteBuf dataOut, long announcedDataOut,
                                                 ScsiNexus nexus, ByteBufAllocator alloc) {
        int op = cdb.getUnsignedByte(0);
        boolean exists = isLun0(lun);
        try {
            if (op == 0x12) {
                return done(inquiry(cdb, exists, alloc));
            }
            if (op == 0xA0) {
                return done(reportLuns(cdb, alloc));
            }
            if (op == 0x03) {
                return done(requestSense(cdb, exists, nexus, alloc));
            }
            if (!exists) {
                return done(ScsiResult.check(Sense.LUN_NOT_SUPPORTED));
            }
            if (nexus.pendingUnitAttention() != null) {
                return done(ScsiResult.check(nexus.takeUnitAttention()));
            }
            if (reservations.conflicts(nexus, access(op, cdb))) {
                return done(ScsiResult.conflict());
            }
            if (announcedDataOut >= 0 && (op == 0x89 || op == 0x41 || op == 0x93)
                    && announcedDataOut != dataOutLength(cdb)) {
                return invalidField();
            }
            IoAdmission admission = device.admission();
            int direction = direction(op);
            if (direction != 0 && !admission.unlimited()) {
                // Per-volume QoS: the command waits for its turn, then runs as usual.
                long bytes = direction == READS ? readBytes(op, cdb) : dataOutLength(cdb);
                return admission.admit(direction == READS, bytes).thenCompose(v -> dispatch(op, cdb, dataOut, nexus, alloc));
            }
            return dispatch(op, cdb, dataOut, nexus, alloc);
        } catch (IndexOutOfBoundsException shortCdb) {
            return done(ScsiResult.check(Sense.INVALID_FIELD_IN_CDB));
        }
    }

    private static final int READS = 1;
    private static final int WRITES = 2;

    /** Whether {@code op} moves data of the medium (QoS counts it): READS, WRITES or 0. */
    static int direction(int op) {
        return switch (op) {
            case 0x08, 0x28, 0xA8, 0x88, 0x2F, 0xAF, 0x8F -> READS;
            case 0x0A, 0x2A, 0xAA, 0x8A, 0x2E, 0xAE, 0x8E, 0x9C, 0x41, 0x93, 0x89, 0x8B, 0x42, 0x83 -> WRITES;
            default -> 0;
        };
    }

    /** Bytes a read command returns (VERIFY: the bytes it reads to compare). */
    private long readBytes(int op, ByteBuf cdb) {
        long blocksRead = switch (op) {
            case 0x08 -> transferLength6(cdb);
            case 0x28, 0x2F -> cdb.getUnsignedShort(7);
            case 0xA8, 0xAF -> cdb.getUnsignedInt(6);
            default -> cdb.getUnsignedInt(10);
        };
        return blocksRead * blockSize;
    }

    private CompletableFuture<ScsiResult> dispatch(int op, ByteBuf cdb, ByteBuf dataOut, ScsiNexus nexus,
                                                   ByteBufAllocator alloc) {
        try {
            return switch (op) {
                case 0x00 -> done(ScsiResult.good()); // TEST UNIT READY
                case 0x25 -> done(readCapacity10(cdb, alloc));
                case 0x9E -> serviceActionIn16(cdb, alloc);
                case 0x1A -> done(modeSense(cdb, false, alloc));
                case 0x5A -> done(modeSense(cdb, true, alloc));
                case 0x08 -> read(transferLength6(cdb), cdb.getUnsignedMedium(1) & 0x1fffff, alloc);
                case 0x28 -> checkProtect(cdb) ? read(cdb.getUnsignedShort(7), cdb.getUnsignedInt(2), alloc) : invalidField();
                case 0xA8 -> checkProtect(cdb) ? read(cdb.getUnsignedInt(6), cdb.getUnsignedInt(2), alloc) : invalidField();
                case 0x88 -> checkProtect(cdb) ? read(cdb.getUnsignedInt(10), cdb.getLong(2), alloc) : invalidField();
                case 0x0A -> write(transferLength6(cdb), cdb.getUnsignedMedium(1) & 0x1fffff, dataOut);
                case 0x2A -> checkProtect(cdb) ? write(cdb.getUnsignedShort(7), cdb.getUnsignedInt(2), dataOut) : invalidField();
                case 0xAA -> checkProtect(cdb) ? write(cdb.getUnsignedInt(6), cdb.getUnsignedInt(2), dataOut) : invalidField();
                case 0x8A -> checkProtect(cdb) ? write(cdb.getUnsignedInt(10), cdb.getLong(2), dataOut) : invalidField();
                case 0x9C -> writeAtomic(cdb, dataOut);
                case 0x83 -> copies.extendedCopy(cdb, dataOut, nexus, blocks, designators());
                case 0x84 -> done(copies.receiveCopyResults(cdb, nexus, alloc));
                // WRITE AND VERIFY: a write is durable and read back from the same replicas, so the
                // verification (BYTCHK=1 compares the data just written) cannot fail after a good write.
                case 0x2E -> checkProtect(cdb) ? write(cdb.getUnsignedShort(7), cdb.getUnsignedInt(2), dataOut) : invalidField();
                case 0xAE -> checkProtect(cdb) ? write(cdb.getUnsignedInt(6), cdb.getUnsignedInt(2), dataOut) : invalidField();
                case 0x8E -> checkProtect(cdb) ? write(cdb.getUnsignedInt(10), cdb.getLong(2), dataOut) : invalidField();
                case 0x41 -> writeSame(cdb, cdb.getUnsignedShort(7), cdb.getUnsignedInt(2), false, dataOut, alloc);
                case 0x93 -> writeSame(cdb, cdb.getUnsignedInt(10), cdb.getLong(2), (cdb.getByte(1) & 0x01) != 0,
                        dataOut, alloc);
                // PRE-FETCH: no cache to fill; range check only.
                case 0x34 -> done(prefetch(cdb.getUnsignedShort(7), cdb.getUnsignedInt(2)));
                case 0x90 -> done(prefetch(cdb.getUnsignedInt(10), cdb.getLong(2)));
                case 0x35 -> synchronizeCache(cdb.getUnsignedShort(7), cdb.getUnsignedInt(2));
                case 0x91 -> synchronizeCache(cdb.getUnsignedInt(10), cdb.getLong(2));
                case 0x2F -> verify(cdb, cdb.getUnsignedShort(7), cdb.getUnsignedInt(2), dataOut, alloc);
                case 0xAF -> verify(cdb, cdb.getUnsignedInt(6), cdb.getUnsignedInt(2), dataOut, alloc);
                case 0x8F -> verify(cdb, cdb.getUnsignedInt(10), cdb.getLong(2), dataOut, alloc);
                case 0x5E -> done(reservations.in(cdb, alloc));
                case 0x5F -> done(persistentReserveOut(cdb, dataOut, nexus));
                case 0x16 -> done(reservations.reserve6(nexus)); // RESERVE(6)
                case 0x17 -> done(reservations.release6(nexus)); // RELEASE(6)
                case 0x1E -> done(ScsiResult.good()); // PREVENT ALLOW MEDIUM REMOVAL: fixed disk, nothing to lock
                case 0x37 -> done(readDefectData(cdb, false, alloc));
                case 0xB7 -> done(readDefectData(cdb, true, alloc));
                case 0x89 -> compareAndWrite(cdb, dataOut, alloc);
                case 0x8B -> (cdb.getByte(1) & 0xe0) == 0 ? orWrite(cdb.getUnsignedInt(10), cdb.getLong(2), dataOut, alloc)
                        : invalidField();
                case 0x42 -> thin ? unmap(cdb, dataOut) : done(ScsiResult.check(Sense.INVALID_OPCODE));
                case 0xA3 -> done((cdb.getByte(1) & 0x1f) == 0x0C ? SupportedOpcodes.report(cdb, alloc, thin)
                        : ScsiResult.check(Sense.invalidCdbField(1))); // MAINTENANCE IN: only this service action
                case 0x1B -> done((cdb.getByte(4) & 0x02) != 0 ? ScsiResult.check(Sense.INVALID_FIELD_IN_CDB)
                        : ScsiResult.good()); // START STOP UNIT: fixed disk, always started
                default -> done(ScsiResult.check(Sense.INVALID_OPCODE));
            };
        } catch (IndexOutOfBoundsException shortCdb) {
            return done(ScsiResult.check(Sense.INVALID_FIELD_IN_CDB));
        }
    }

    /** Which reservation class an opcode belongs to (SPC-4 table 58, simplified). */
    static Reservations.Access access(int op, ByteBuf cdb) {
        return switch (op) {
            case 0x12, 0xA0, 0x03, 0x00, 0x25, 0x5E, 0x5F, 0x17, 0xA3, 0x84 -> Reservations.Access.ALWAYS;
            case 0x9E -> (cdb.getByte(1) & 0x1f) == 0x10 ? Reservations.Access.ALWAYS : Reservations.Access.READ;
            case 0x08, 0x28, 0xA8, 0x88, 0x2F, 0xAF, 0x8F, 0x34, 0x90, 0x1A, 0x5A, 0x37, 0xB7 ->
                    Reservations.Access.READ;
            default -> Reservations.Access.WRITE;
        };
    }

    private static CompletableFuture<ScsiResult> done(ScsiResult r) {
        return CompletableFuture.completedFuture(r);
    }

    private static CompletableFuture<ScsiResult> invalidField() {
        return done(ScsiResult.check(Sense.INVALID_FIELD_IN_CDB));
    }

    /** RDPROTECT/WRPROTECT must be 0: we have no protection information. */
    private static boolean checkProtect(ByteBuf cdb) {
        return (cdb.getByte(1) & 0xe0) == 0;
    }

    private static long transferLength6(ByteBuf cdb) {
        int tl = cdb.getUnsignedByte(4);
        return tl == 0 ? 256 : tl;
    }

    /** LBA and count within capacity (unsigned LBA, no overflow). */
    private boolean inRange(long lba, long count) {
        return Long.compareUnsigned(lba, blocks) <= 0 && count <= blocks - lba;
    }

    // ---- block I/O ----------------------------------------------------------------------------

    private CompletableFuture<ScsiResult> read(long count, long lba, ByteBufAllocator alloc) {
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (count == 0) {
            return done(ScsiResult.good());
        }
        if (count * blockSize > MAX_TRANSFER_BYTES) {
            return invalidField();
        }
        CompletableFuture<ByteBuf> f;
        try {
            f = device.read(lba * blockSize, (int) (count * blockSize));
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((buf, err) -> err == null ? ScsiResult.good(buf) : ScsiResult.check(deviceSense(err, true)));
    }

    private CompletableFuture<ScsiResult> write(long count, long lba, ByteBuf dataOut) {
        return write(count, lba, dataOut, true);
    }

    /** {@code merge}: whether the write may travel inside a merged one ({@link WriteCoalescer}). */
    private CompletableFuture<ScsiResult> write(long count, long lba, ByteBuf dataOut, boolean merge) {
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (count * blockSize > MAX_TRANSFER_BYTES) {
            return invalidField();
        }
        // With less data-out than the CDB asks for (EDTL too small) only whole blocks received are written.
        long have = dataOut == null ? 0 : dataOut.readableBytes() / blockSize;
        long n = Math.min(count, have);
        if (n == 0) {
            return done(ScsiResult.good());
        }
        ByteBuf slice = dataOut.slice(dataOut.readerIndex(), (int) (n * blockSize));
        return locked(lba, n, () -> merge ? writes.write(lba * blockSize, slice) : deviceWrite(lba * blockSize, slice))
                .handle((v, err) -> err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false)));
    }

    /**
     * WRITE ATOMIC(16) (SBC-4 5.48): a write that takes effect whole or not at all, within the VPD
     * B0 atomic limits (length up to {@link #ATOMIC_BYTES}, starting on a multiple of it, no atomic
     * boundary). Range errors come before limit errors, as for every write.
     */
    private CompletableFuture<ScsiResult> writeAtomic(ByteBuf cdb, ByteBuf dataOut) {
        if (!checkProtect(cdb)) {
            return done(ScsiResult.check(Sense.invalidCdbField(1))); // WRPROTECT: no protection information
        }
        long lba = cdb.getLong(2);
        long count = cdb.getUnsignedShort(12);
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (count == 0) {
            return done(ScsiResult.good());
        }
        long maxBlocks = ATOMIC_BYTES / blockSize;
        if (cdb.getUnsignedShort(10) != 0) {
            return done(ScsiResult.check(Sense.invalidCdbField(10))); // ATOMIC BOUNDARY: none supported
        }
        if (count > maxBlocks) {
            return done(ScsiResult.check(Sense.invalidCdbField(12)));
        }
        if (lba % maxBlocks != 0) {
            return done(ScsiResult.check(Sense.invalidCdbField(2))); // not on an ATOMIC ALIGNMENT boundary
        }
        if (dataOut == null || dataOut.readableBytes() < count * blockSize) {
            // a partial atomic write is no atomic write: refuse instead of writing what arrived
            return done(ScsiResult.check(Sense.INCORRECT_DATA_AMOUNT));
        }
        return write(count, lba, dataOut, false); // one storage write, never part of a merged one
    }

    /** Runs {@code io} holding the range lock of [lba, lba+count); the lock goes when its future does. */
    private <T> CompletableFuture<T> locked(long lba, long count, java.util.function.Supplier<CompletableFuture<T>> io) {
        LbaRangeLocks.Held now = locks.tryLock(lba, count);
        if (now != null) {
            // Uncontended (the usual case): run at once, without the lock's future and a compose stage.
            return holding(now, io);
        }
        return locks.lock(lba, count).thenCompose(held -> holding(held, io));
    }

    private static <T> CompletableFuture<T> holding(LbaRangeLocks.Held held,
                                                    java.util.function.Supplier<CompletableFuture<T>> io) {
        CompletableFuture<T> f;
        try {
            f = io.get();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.whenComplete((v, err) -> held.release());
    }

    private CompletableFuture<Void> deviceWrite(long offset, ByteBuf data) {
        try {
            return device.write(offset, data);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<ByteBuf> deviceRead(long offset, int length) {
        try {
            return device.read(offset, length);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Void> deviceUnmap(long offset, long length) {
        try {
            return device.unmap(offset, length);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ---- COMPARE AND WRITE, ORWRITE -----------------------------------------------------------

    /**
     * COMPARE AND WRITE (SBC-3 5.2): under the range lock, reads the blocks, compares them with the
     * first half of the data-out and, when equal, writes the second half. A difference ends it
     * with MISCOMPARE and the offset of the first differing byte in INFORMATION.
     */
    private CompletableFuture<ScsiResult> compareAndWrite(ByteBuf cdb, ByteBuf dataOut, ByteBufAllocator alloc) {
        if ((cdb.getByte(1) & 0xe0) != 0) {
            return invalidField();
        }
        long lba = cdb.getLong(2);
        int n = cdb.getUnsignedByte(13);
        if (n == 0) {
            return done(ScsiResult.good());
        }
        if (n > MAX_COMPARE_AND_WRITE_BLOCKS) {
            return invalidField();
        }
        if (!inRange(lba, n)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        int len = n * blockSize;
        if (dataOut == null || dataOut.readableBytes() < 2 * len) {
            return invalidField();
        }
        int base = dataOut.readerIndex();
        return locked(lba, n, () -> deviceRead(lba * blockSize, len).thenCompose(current -> {
            try {
                for (int i = 0; i < len; i++) {
                    if (current.getByte(current.readerIndex() + i) != dataOut.getByte(base + i)) {
                        return CompletableFuture.completedFuture(
                                ScsiResult.check(Sense.MISCOMPARE_DURING_VERIFY.withInformation(i)));
                    }
                }
            } finally {
                current.release();
            }
            return deviceWrite(lba * blockSize, dataOut.slice(base + len, len)).thenApply(v -> ScsiResult.good());
        })).handle((r, err) -> err == null ? r : ScsiResult.check(deviceSense(err, false)));
    }

    /** ORWRITE(16): the data-out is ORed into the blocks, atomically against other writes here. */
    private CompletableFuture<ScsiResult> orWrite(long count, long lba, ByteBuf dataOut, ByteBufAllocator alloc) {
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (count == 0) {
            return done(ScsiResult.good());
        }
        if (count * blockSize > MAX_TRANSFER_BYTES) {
            return invalidField();
        }
        int len = (int) (count * blockSize);
        if (dataOut == null || dataOut.readableBytes() < len) {
            return done(ScsiResult.check(Sense.INCORRECT_DATA_AMOUNT));
        }
        int base = dataOut.readerIndex();
        return locked(lba, count, () -> deviceRead(lba * blockSize, len).thenCompose(current -> {
            int r = current.readerIndex();
            for (int i = 0; i < len; i++) {
                current.setByte(r + i, current.getByte(r + i) | dataOut.getByte(base + i));
            }
            return deviceWrite(lba * blockSize, current).whenComplete((v, e) -> current.release());
        })).handle((v, err) -> err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false)));
    }

    // ---- thin provisioning ---------------------------------------------------------------------

    /** UNMAP (SBC-3 5.28): the block descriptors' ranges are deallocated and then read as zeros. */
    private CompletableFuture<ScsiResult> unmap(ByteBuf cdb, ByteBuf list) {
        if ((cdb.getByte(1) & 0x01) != 0) {
            return invalidField(); // ANCHOR: not supported (ANC_SUP=0)
        }
        int listLen = cdb.getUnsignedShort(7);
        if (listLen == 0) {
            return done(ScsiResult.good());
        }
        if (listLen < 8 || list == null || list.readableBytes() < listLen) {
            return done(ScsiResult.check(Sense.PARAMETER_LIST_LENGTH_ERROR));
        }
        int r = list.readerIndex();
        int descLen = list.getUnsignedShort(r + 2);
        int count = Math.min(descLen, listLen - 8) / 16;
        if (count > MAX_UNMAP_DESCRIPTORS) {
            return done(ScsiResult.check(Sense.INVALID_FIELD_IN_PARAMETER_LIST));
        }
        long[] lbas = new long[count];
        long[] lens = new long[count];
        long total = 0;
        for (int i = 0; i < count; i++) {
            lbas[i] = list.getLong(r + 8 + 16 * i);
            lens[i] = list.getUnsignedInt(r + 16 + 16 * i);
            if (!inRange(lbas[i], lens[i])) {
                return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
            }
            total += lens[i];
        }
        if (total * blockSize > MAX_UNMAP_BYTES) {
            return done(ScsiResult.check(Sense.INVALID_FIELD_IN_PARAMETER_LIST));
        }
        // Initiators may list a range block by block (libiscsi's UNMAP test sends up to 256 adjacent
        // one-block descriptors): one chain request per descriptor made such a command cost hundreds
        // of round trips. The union is what gets deallocated, so adjacent and overlapping
        // descriptors merge, and the merged ranges, disjoint, go out together.
        long[] ranges = coalesce(lbas, lens);
        CompletableFuture<?>[] each = new CompletableFuture<?>[ranges.length / 2];
        for (int i = 0; i < each.length; i++) {
            long lba = ranges[2 * i];
            long n = ranges[2 * i + 1];
            each[i] = locked(lba, n, () -> deviceUnmap(lba * blockSize, n * blockSize));
        }
        return CompletableFuture.allOf(each)
                .handle((v, err) -> err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false)));
    }

    /**
     * The union of the ranges {@code [lbas[i], lbas[i] + lens[i])}, empty ones left out, as sorted,
     * disjoint and non-adjacent pairs {@code start, length} in one array.
     */
    static long[] coalesce(long[] lbas, long[] lens) {
        Integer[] order = new Integer[lbas.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, java.util.Comparator.comparingLong(i -> lbas[i]));
        long[] out = new long[2 * lbas.length];
        int n = 0;
        for (int i : order) {
            if (lens[i] == 0) {
                continue;
            }
            long end = lbas[i] + lens[i];
            if (n > 0 && lbas[i] <= out[n - 2] + out[n - 1]) {
                out[n - 1] = Math.max(out[n - 2] + out[n - 1], end) - out[n - 2];
            } else {
                out[n++] = lbas[i];
                out[n++] = lens[i];
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /** GET LBA STATUS (SBC-3 5.7): mapped / deallocated extents from the requested LBA on. */
    private CompletableFuture<ScsiResult> getLbaStatus(ByteBuf cdb, ByteBufAllocator alloc) {
        long lba = cdb.getLong(2);
        long allocLen = cdb.getUnsignedInt(10);
        if (Long.compareUnsigned(lba, blocks) >= 0) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (allocLen < 24) {
            // room for the header and one descriptor is needed to say anything
            ByteBuf out = alloc.buffer(8);
            out.writeInt(4).writeInt(0);
            return done(ScsiResult.good(truncate(out, allocLen)));
        }
        long wanted = Math.min(blocks - lba, MAX_UNMAP_BYTES / blockSize);
        CompletableFuture<java.util.List<BlockDevice.Extent>> f;
        try {
            f = device.lbaStatus(lba * blockSize, wanted * blockSize);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        int maxDescriptors = (int) Math.min((allocLen - 8) / 16, 1024);
        return f.handle((extents, err) -> {
            if (err != null) {
                return ScsiResult.check(deviceSense(err, true));
            }
            ByteBuf out = alloc.buffer(8 + 16 * Math.min(extents.size(), maxDescriptors));
            out.writeInt(0).writeInt(0);
            long next = lba;
            for (BlockDevice.Extent e : extents) {
                if (out.readableBytes() >= 8 + 16 * maxDescriptors) {
                    break;
                }
                long first = e.offset() / blockSize;
                long n = e.length() / blockSize;
                if (first != next || n <= 0) {
                    break; // the device must describe consecutive extents; stop at a gap
                }
                out.writeLong(first).writeInt((int) Math.min(n, 0xffffffffL)).writeByte(e.mapped() ? 0 : 1)
                        .writeZero(3);
                next = first + n;
            }
            if (out.readableBytes() == 8) {
                out.release();
                return ScsiResult.check(Sense.INTERNAL_TARGET_FAILURE);
            }
            out.setInt(0, out.readableBytes() - 4);
            return ScsiResult.good(out);
        });
    }

    /**
     * READ DEFECT DATA (10/12): a volume has no media defects, so both lists are empty; the header
     * echoes the lists and format asked for.
     */
    private static ScsiResult readDefectData(ByteBuf cdb, boolean twelve, ByteBufAllocator alloc) {
        int flags = cdb.getUnsignedByte(twelve ? 1 : 2) & 0x1f;
        long allocLen = twelve ? cdb.getUnsignedInt(6) : cdb.getUnsignedShort(7);
        ByteBuf out = alloc.buffer(8);
        out.writeByte(0).writeByte(flags);
        if (twelve) {
            out.writeShort(0).writeInt(0); // GENERATION CODE, DEFECT LIST LENGTH
        } else {
            out.writeShort(0); // DEFECT LIST LENGTH
        }
        return ScsiResult.good(truncate(out, allocLen));
    }

    private ScsiResult persistentReserveOut(ByteBuf cdb, ByteBuf params, ScsiNexus nexus) {
        Reservations.OutResult r = reservations.out(cdb, params, nexus);
        r.abortTasksOf().forEach(ScsiNexus::requestAbort);
        return r.result();
    }

    /**
     * WRITE SAME: the one block of data-out (or zeros with NDOB) repeated over the range, bounded by
     * MAXIMUM WRITE SAME LENGTH; NUMBER OF BLOCKS 0 is refused (WSNZ=1). With UNMAP on a thin LU a
     * range of zeros is deallocated instead (unmapped blocks read as zeros: LBPRZ=1).
     */
    private CompletableFuture<ScsiResult> writeSame(ByteBuf cdb, long requested, long lba, boolean ndob, ByteBuf dataOut,
                                                    ByteBufAllocator alloc) {
        int flags = cdb.getByte(1);
        boolean unmap = (flags & 0x08) != 0;
        if ((flags & 0xe0) != 0 || (flags & 0x10) != 0 || (unmap && !thin)) {
            return done(ScsiResult.check(Sense.invalidCdbField(1))); // WRPROTECT, ANCHOR, UNMAP on a thick LU
        }
        if (requested == 0) {
            // WSNZ=1 (VPD B0). With WSNZ=0, Debian's libiscsi 1.19 WriteSame10.UnmapUntilEnd sends
            // WRITE SAME(10) UNMAP with a block of 0xFF and wants zeros back: writing what was sent
            // (SBC-4: only data equal to a deallocated block's may be deallocated) would fail it.
            return done(ScsiResult.check(Sense.invalidCdbField(cdb.getUnsignedByte(0) == 0x41 ? 7 : 10)));
        }
        long count = requested;
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (count * blockSize > MAX_TRANSFER_BYTES) {
            return done(ScsiResult.check(Sense.invalidCdbField(cdb.getUnsignedByte(0) == 0x41 ? 7 : 10)));
            // beyond MAXIMUM WRITE SAME LENGTH, with or without UNMAP
        }
        if (!ndob && (dataOut == null || dataOut.readableBytes() < blockSize)) {
            return invalidField();
        }
        if (unmap && (ndob || isZero(dataOut, blockSize))) {
            return locked(lba, count, () -> deviceUnmap(lba * blockSize, count * blockSize))
                    .handle((v, err) -> err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false)));
        }
        int total = (int) (count * blockSize);
        ByteBuf data = alloc.directBuffer(total, total);
        if (ndob) {
            data.writeZero(total);
        } else {
            for (long i = 0; i < count; i++) {
                data.writeBytes(dataOut, dataOut.readerIndex(), blockSize);
            }
        }
        return locked(lba, count, () -> deviceWrite(lba * blockSize, data)).handle((v, err) -> {
            data.release();
            return err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false));
        });
    }

    private static boolean isZero(ByteBuf b, int len) {
        for (int i = 0; i < len; i++) {
            if (b.getByte(b.readerIndex() + i) != 0) {
                return false;
            }
        }
        return true;
    }

    private ScsiResult prefetch(long count, long lba) {
        return inRange(lba, count) ? ScsiResult.good() : ScsiResult.check(Sense.LBA_OUT_OF_RANGE);
    }

    private CompletableFuture<ScsiResult> synchronizeCache(long count, long lba) {
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        CompletableFuture<Void> f;
        try {
            f = device.flush();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((v, err) -> err == null ? ScsiResult.good() : ScsiResult.check(deviceSense(err, false)));
    }

    private CompletableFuture<ScsiResult> verify(ByteBuf cdb, long count, long lba, ByteBuf dataOut,
                                                 ByteBufAllocator alloc) {
        int bytchk = (cdb.getByte(1) >> 1) & 3;
        if ((cdb.getByte(1) & 0xe0) != 0 || bytchk == 2) {
            return invalidField();
        }
        if (!inRange(lba, count)) {
            return done(ScsiResult.check(Sense.LBA_OUT_OF_RANGE));
        }
        if (bytchk == 0 || count == 0) {
            return done(ScsiResult.good()); // medium verification: nothing to check beyond the range
        }
        if (count * blockSize > MAX_TRANSFER_BYTES) {
            return invalidField();
        }
        int expected = (int) (bytchk == 1 ? count * blockSize : blockSize);
        if (dataOut == null || dataOut.readableBytes() < expected) {
            return done(ScsiResult.check(Sense.INCORRECT_DATA_AMOUNT));
        }
        CompletableFuture<ByteBuf> f;
        try {
            f = device.read(lba * blockSize, (int) (count * blockSize));
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((buf, err) -> {
            if (err != null) {
                return ScsiResult.check(deviceSense(err, true));
            }
            try {
                for (int off = 0; off < buf.readableBytes(); off++) {
                    byte want = dataOut.getByte(dataOut.readerIndex() + (bytchk == 1 ? off : off % blockSize));
                    if (buf.getByte(buf.readerIndex() + off) != want) {
                        return ScsiResult.check(Sense.MISCOMPARE_DURING_VERIFY);
                    }
                }
                return ScsiResult.good();
            } finally {
                buf.release();
            }
        });
    }

    /** Maps a device failure to sense data; unknown failures are internal target failures. */
    public static Sense deviceSense(Throwable err, boolean read) {
        Throwable t = err;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (!(t instanceof DeviceException de)) {
            return Sense.INTERNAL_TARGET_FAILURE;
        }
        return switch (de.reason()) {
            case IO_ERROR -> read ? Sense.READ_ERROR : Sense.WRITE_ERROR;
            case NO_SPACE -> Sense.SPACE_ALLOCATION_FAILED;
            case UNAVAILABLE -> Sense.LUN_NOT_READY;
            case FENCED -> Sense.WRITE_PROTECTED;
            case OUT_OF_RANGE -> Sense.LBA_OUT_OF_RANGE;
            case UNSUPPORTED -> Sense.INVALID_OPCODE;
        };
    }

    // ---- INQUIRY ------------------------------------------------------------------------------

    private ScsiResult inquiry(ByteBuf cdb, boolean exists, ByteBufAllocator alloc) {
        int flags = cdb.getUnsignedByte(1);
        int page = cdb.getUnsignedByte(2);
        int allocLen = cdb.getUnsignedShort(3);
        if ((flags & 0x02) != 0 || ((flags & 0x01) == 0 && page != 0)) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB); // CmdDt, or page without EVPD
        }
        ByteBuf out = alloc.buffer(256);
        if ((flags & 0x01) == 0) {
            standardInquiry(out, exists);
        } else if (!exists) {
            out.release();
            return ScsiResult.check(Sense.LUN_NOT_SUPPORTED);
        } else {
            switch (page) {
                case 0x00 -> vpd(out, 0x00, thin
                        ? new byte[] {0x00, (byte) 0x80, (byte) 0x83, (byte) 0xB0, (byte) 0xB1, (byte) 0xB2}
                        : new byte[] {0x00, (byte) 0x80, (byte) 0x83, (byte) 0xB0, (byte) 0xB1});
                case 0xB2 -> {
                    if (!thin) {
                        out.release();
                        return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
                    }
                    // LBPU, LBPWS, LBPWS10, LBPRZ=1; provisioning type 2 (thin)
                    vpd(out, 0xB2, new byte[] {0, (byte) (0x80 | 0x40 | 0x20 | 0x04), 0x02, 0});
                }
                case 0x80 -> vpd(out, 0x80, serialNumber().getBytes(StandardCharsets.US_ASCII));
                case 0x83 -> deviceIdentification(out);
                case 0xB0 -> blockLimits(out);
                case 0xB1 -> {
                    byte[] p = new byte[0x3C];
                    p[1] = 1; // MEDIUM ROTATION RATE 1: non-rotating
                    vpd(out, 0xB1, p);
                }
                default -> {
                    out.release();
                    return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
                }
            }
        }
        return ScsiResult.good(truncate(out, allocLen));
    }

    private static ByteBuf truncate(ByteBuf out, long allocLen) {
        if (out.readableBytes() > allocLen) {
            out.writerIndex(out.readerIndex() + (int) allocLen);
        }
        return out;
    }

    private static void standardInquiry(ByteBuf out, boolean exists) {
        int start = out.writerIndex();
        out.writeByte(exists ? 0x00 : 0x7F); // PQ=3/PDT=0x1F: no logical unit here
        out.writeByte(0); // not removable
        out.writeByte(0x06); // SPC-4
        out.writeByte(0x12); // HiSup, response data format 2
        out.writeByte(91); // additional length: 96 - 5
        out.writeByte(0);
        out.writeByte(0);
        out.writeByte(0x02); // CmdQue
        ascii(out, VENDOR, 8);
        ascii(out, PRODUCT, 16);
        ascii(out, REVISION, 4);
        out.writeZero(58 - (out.writerIndex() - start));
        out.writeShort(0x0960); // iSCSI
        out.writeShort(0x0460); // SPC-4
        out.writeShort(0x04C0); // SBC-3
        out.writeZero(96 - (out.writerIndex() - start));
    }

    private static void ascii(ByteBuf out, String s, int width) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        out.writeBytes(b, 0, Math.min(b.length, width));
        for (int i = b.length; i < width; i++) {
            out.writeByte(' ');
        }
    }

    private static void vpd(ByteBuf out, int page, byte[] payload) {
        out.writeByte(0x00);
        out.writeByte(page);
        out.writeShort(payload.length);
        out.writeBytes(payload);
    }

    /** Unit serial number: stable per volume, derived from its cluster-unique id. */
    public String serialNumber() {
        return String.format("FB%016x", device.volumeId());
    }

    private void deviceIdentification(ByteBuf out) {
        int start = out.writerIndex();
        out.writeByte(0x00);
        out.writeByte(0x83);
        out.writeShort(0); // length, set below
        for (byte[] d : designators()) {
            out.writeBytes(d);
        }
        out.setShort(start + 2, out.writerIndex() - start - 4);
    }

    /**
     * The LU's designation descriptors (VPD 0x83), each header + designator: what EXTENDED COPY
     * target descriptors must name to reach this LU.
     */
    java.util.List<byte[]> designators() {
        java.util.List<byte[]> all = new java.util.ArrayList<>();
        // NAA 6 (IEEE Registered Extended): company id + volume id, associated with the LU.
        ByteBuf naa = io.netty.buffer.Unpooled.buffer(20);
        naa.writeByte(0x01).writeByte(0x03).writeByte(0).writeByte(16);
        naa.writeLong(6L << 60 | COMPANY_ID << 36);
        naa.writeLong(device.volumeId());
        all.add(io.netty.buffer.ByteBufUtil.getBytes(naa));
        // T10 vendor identification: vendor + volume name.
        byte[] t10 = (padRight(VENDOR, 8) + device.name()).getBytes(StandardCharsets.US_ASCII);
        ByteBuf t = io.netty.buffer.Unpooled.buffer(4 + t10.length);
        t.writeByte(0x02).writeByte(0x01).writeByte(0).writeByte(t10.length).writeBytes(t10);
        all.add(io.netty.buffer.ByteBufUtil.getBytes(t));
        // SCSI name string (iSCSI, target device): the IQN, NUL-terminated and padded to 4.
        byte[] name = targetName.getBytes(StandardCharsets.UTF_8);
        int len = (name.length + 1 + 3) & ~3;
        ByteBuf n = io.netty.buffer.Unpooled.buffer(4 + len);
        n.writeByte(0x53).writeByte(0xA8).writeByte(0).writeByte(len).writeBytes(name).writeZero(len - name.length);
        all.add(io.netty.buffer.ByteBufUtil.getBytes(n));
        return all;
    }

    private static String padRight(String s, int width) {
        StringBuilder b = new StringBuilder(s);
        while (b.length() < width) {
            b.append(' ');
        }
        return b.toString();
    }

    private void blockLimits(ByteBuf out) {
        byte[] p = new byte[0x3C];
        ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(p).writerIndex(0);
        b.writeByte(0x01); // WSNZ: WRITE SAME with 0 blocks (to the end of the LU) is refused
        b.writeByte(MAX_COMPARE_AND_WRITE_BLOCKS); // MAXIMUM COMPARE AND WRITE LENGTH
        b.writeShort(Math.max(1, 4096 / blockSize)); // OPTIMAL TRANSFER LENGTH GRANULARITY
        b.writeInt(MAX_TRANSFER_BYTES / blockSize); // MAXIMUM TRANSFER LENGTH
        b.writeInt((1 << 20) / blockSize); // OPTIMAL TRANSFER LENGTH
        b.writeInt(0); // MAXIMUM PREFETCH LENGTH: no prefetch cache
        if (thin) {
            b.writeInt((int) (MAX_UNMAP_BYTES / blockSize)); // MAXIMUM UNMAP LBA COUNT
            b.writeInt(MAX_UNMAP_DESCRIPTORS); // MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT
            b.writeInt(Math.max(1, 4096 / blockSize)); // OPTIMAL UNMAP GRANULARITY
        }
        b.writerIndex(32); // page byte 36
        b.writeLong(MAX_TRANSFER_BYTES / blockSize); // MAXIMUM WRITE SAME LENGTH
        b.writeInt(ATOMIC_BYTES / blockSize); // MAXIMUM ATOMIC TRANSFER LENGTH
        b.writeInt(ATOMIC_BYTES / blockSize); // ATOMIC ALIGNMENT
        b.writeInt(1); // ATOMIC TRANSFER LENGTH GRANULARITY
        b.writeInt(0); // MAXIMUM ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY: boundaries not supported
        b.writeInt(0); // MAXIMUM ATOMIC BOUNDARY SIZE
        vpd(out, 0xB0, p);
    }

    // ---- capacity, LUNs, sense ---------------------------------------------------------------

    private ScsiResult readCapacity10(ByteBuf cdb, ByteBufAllocator alloc) {
        if ((cdb.getByte(8) & 0x01) == 0 && cdb.getInt(2) != 0) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB); // PMI=0 needs LBA 0
        }
        ByteBuf out = alloc.buffer(8);
        out.writeInt((int) Math.min(blocks - 1, 0xffffffffL));
        out.writeInt(blockSize);
        return ScsiResult.good(out);
    }

    private CompletableFuture<ScsiResult> serviceActionIn16(ByteBuf cdb, ByteBufAllocator alloc) {
        int sa = cdb.getByte(1) & 0x1f;
        if (sa == 0x12 && thin) {
            return getLbaStatus(cdb, alloc);
        }
        if (sa != 0x10) {
            return done(ScsiResult.check(Sense.invalidCdbField(1))); // READ CAPACITY(16), and GET LBA STATUS when thin
        }
        return done(readCapacity16(cdb, alloc));
    }

    private ScsiResult readCapacity16(ByteBuf cdb, ByteBufAllocator alloc) {
        long allocLen = cdb.getUnsignedInt(10);
        ByteBuf out = alloc.buffer(32);
        out.writeLong(blocks - 1);
        out.writeInt(blockSize);
        out.writeByte(0);
        // LBPPBE 0: one logical block per physical block. The 4 KiB preference is in VPD B0's
        // granularities instead; libiscsi's GetLBAStatus.UnmapSingle cannot pass with LBPPBE > 0.
        out.writeByte(0);
        out.writeByte(thin ? 0x80 | 0x40 : 0); // LBPME, LBPRZ: unmapped blocks read as zeros
        out.writeZero(17);
        return ScsiResult.good(truncate(out, allocLen));
    }

    private static ScsiResult reportLuns(ByteBuf cdb, ByteBufAllocator alloc) {
        int select = cdb.getUnsignedByte(2);
        long allocLen = cdb.getUnsignedInt(6);
        if (select > 2 || allocLen < 16) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
        }
        ByteBuf out = alloc.buffer(16);
        out.writeInt(8); // one LUN
        out.writeInt(0);
        out.writeLong(0); // LUN 0
        return ScsiResult.good(truncate(out, allocLen));
    }

    private static ScsiResult requestSense(ByteBuf cdb, boolean exists, ScsiNexus nexus, ByteBufAllocator alloc) {
        if ((cdb.getByte(1) & 0x01) != 0) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB); // descriptor format not supported
        }
        Sense s = !exists ? Sense.LUN_NOT_SUPPORTED
                : nexus.pendingUnitAttention() != null ? nexus.takeUnitAttention() : Sense.NONE;
        ByteBuf out = alloc.buffer(Sense.FIXED_LENGTH);
        out.writeBytes(s.toFixedFormat());
        return ScsiResult.good(truncate(out, cdb.getUnsignedByte(4)));
    }

    // ---- MODE SENSE ---------------------------------------------------------------------------

    private ScsiResult modeSense(ByteBuf cdb, boolean ten, ByteBufAllocator alloc) {
        boolean dbd = (cdb.getByte(1) & 0x08) != 0;
        int pc = cdb.getUnsignedByte(2) >>> 6;
        int page = cdb.getUnsignedByte(2) & 0x3f;
        int subpage = cdb.getUnsignedByte(3);
        long allocLen = ten ? cdb.getUnsignedShort(7) : cdb.getUnsignedByte(4);
        if (pc == 3) {
            return ScsiResult.check(Sense.SAVING_NOT_SUPPORTED);
        }
        if (!(subpage == 0 || (subpage == 0xff && page == 0x3f))) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
        }
        if (page != 0x08 && page != 0x0A && page != 0x3F) {
            return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
        }
        boolean changeable = pc == 1;
        ByteBuf out = alloc.buffer(64);
        int header = ten ? 8 : 4;
        out.writeZero(header);
        // Device-specific parameter: DPOFUA (writes are durable on completion, so FUA is a no-op).
        out.setByte(ten ? 3 : 2, 0x10);
        if (!dbd) {
            out.writeInt((int) Math.min(blocks, 0xffffffffL));
            out.writeInt(blockSize & 0xffffff); // density code 0, block length
            if (ten) {
                out.setShort(6, 8);
            } else {
                out.setByte(3, 8);
            }
        }
        if (page == 0x08 || page == 0x3F) {
            // Caching: WCE=0 because a write is durable when we acknowledge it; nothing changeable.
            out.writeByte(0x08).writeByte(0x12).writeZero(0x12);
        }
        if (page == 0x0A || page == 0x3F) {
            out.writeByte(0x0A).writeByte(0x0A);
            if (changeable) {
                out.writeZero(0x0A);
            } else {
                out.writeByte(0x00); // TST 0, D_SENSE 0
                out.writeByte(0x10); // QUEUE ALGORITHM MODIFIER 1: unrestricted reordering
                out.writeByte(0x00);
                out.writeByte(0x00);
                out.writeShort(0);
                out.writeShort(0xffff); // BUSY TIMEOUT PERIOD: unlimited
                out.writeShort(0);
            }
        }
        if (ten) {
            out.setShort(0, out.readableBytes() - 2);
        } else {
            out.setByte(0, out.readableBytes() - 1);
        }
        return ScsiResult.good(truncate(out, allocLen));
    }
}
