package io.fastblock.storage.log;

import io.fastblock.storage.io.FileIo;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Writes a segment's records through a handle that bypasses the page cache ({@link
 * io.fastblock.storage.io.FileIoFactory#openDirect}), where every write must cover whole blocks.
 * Records are packed as in a buffered segment: a batch starts inside the block the previous one
 * ended in, so that block is written again, its earlier bytes copied from memory (read back from
 * the file once after an open or a cut). The bytes after the last record, up to the block's end,
 * are written as zeros, which replay reads as the clean end of the records.
 *
 * <p>Why: the tail forces every batch before it answers, so a copy into the page cache bought
 * nothing; it cost a copy per byte, and the fsync then had to find and write back those dirty
 * pages. On this project's 2-vCPU VM, a batch of four 4 KiB records plus fdatasync took about
 * half the CPU and 55-60% of the time through this path (docs/performance.md).
 *
 * <p>Rewriting the last block cannot lose a record already forced: the new write carries the same
 * bytes for it, and a power loss tears a write only at sector boundaries. Only the committer
 * thread calls {@link #write}; {@link #writeZeros} (the preallocator's) touches only whole blocks
 * after the records, and both run under the segment's rules for who writes where.
 */
final class AlignedAppender implements Closeable {
    /** Largest single write: batches of large records go out in pieces of this size. */
    static final int STAGE_BYTES = 1 << 20;
    /** Shared zeros for {@link #writeZeros}, aligned for any block size up to 64 KiB. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(STAGE_BYTES + (64 << 10))
            .alignedSlice(64 << 10).limit(STAGE_BYTES).slice().asReadOnlyBuffer();

    private final FileIo direct;
    /** Where the bytes of a partial block come from when they are not in memory. */
    private final FileIo reader;
    private final int block;
    private ByteBuffer stage;
    /** The file offset of {@code stage}'s first byte while it holds the last partial block, else -1. */
    private long carriedFrom = -1;
    private int carried;

    AlignedAppender(FileIo direct, FileIo reader) {
        this.direct = direct;
        this.reader = reader;
        this.block = direct.writeAlignment();
        if (!supports(block)) {
            throw new IllegalArgumentException("direct write alignment must be a power of two up to 64 KiB, got " + block);
        }
    }

    /** Whether blocks of this size can be written (a power of two up to 64 KiB; the zeros are aligned for that). */
    static boolean supports(int block) {
        return block >= 1 && Integer.bitCount(block) == 1 && block <= 64 << 10;
    }

    int block() {
        return block;
    }

    long roundUp(long position) {
        return (position + block - 1) & -(long) block;
    }

    /**
     * Writes {@code parts} one after the other from {@code position} (the end of the records already
     * written), then zeros up to the end of the last block touched. The parts are not consumed.
     */
    void write(ByteBuffer[] parts, long position) throws IOException {
        if (stage == null) {
            stage = ByteBuffer.allocateDirect(STAGE_BYTES + block).alignedSlice(block).limit(STAGE_BYTES).slice();
        }
        long at = position & -(long) block;
        int head = (int) (position - at);
        if (carriedFrom != at || carried != head) {
            loadPartialBlock(at, head);
        }
        stage.clear().position(head);
        for (ByteBuffer part : parts) {
            ByteBuffer src = part.duplicate();
            while (src.hasRemaining()) {
                int n = Math.min(src.remaining(), stage.remaining());
                stage.put(src.duplicate().limit(src.position() + n));
                src.position(src.position() + n);
                if (!stage.hasRemaining()) {
                    carriedFrom = -1; // the stage is being overwritten
                    direct.writeFully(stage.flip(), at);
                    at += stage.limit();
                    stage.clear();
                }
            }
        }
        int used = stage.position();
        if (used == 0) {
            carriedFrom = at;
            carried = 0;
            return;
        }
        int padded = (int) roundUp(used);
        stage.put(used, ZEROS, 0, padded - used);
        carriedFrom = -1;
        direct.writeFully(stage.duplicate().position(0).limit(padded), at);
        // Keep the last partial block's bytes at the start of the stage for the next batch.
        int full = used & -block;
        int tail = used - full;
        if (tail > 0 && full > 0) {
            stage.put(0, stage, full, tail);
        }
        carriedFrom = at + full;
        carried = tail;
    }

    /** Reads the first {@code bytes} of the block at {@code at} into the stage (the records there already). */
    private void loadPartialBlock(long at, int bytes) throws IOException {
        carriedFrom = -1;
        ByteBuffer dst = stage.clear().limit(bytes);
        if (bytes > 0 && !reader.readFully(dst, at)) {
            throw new IOException(direct.path() + ": the file ends before its records' end at " + (at + bytes));
        }
        carriedFrom = at;
        carried = bytes;
    }

    /** Writes {@code length} bytes of zeros at {@code position}, both multiples of {@link #block}. */
    void writeZeros(long position, long length) throws IOException {
        if ((position | length) % block != 0) {
            throw new IllegalArgumentException("zeros at " + position + " for " + length + " bytes: not whole blocks of " + block);
        }
        for (long at = position; at < position + length; ) {
            int n = (int) Math.min(STAGE_BYTES, position + length - at);
            direct.writeFully(ZEROS.duplicate().limit(n), at);
            at += n;
        }
    }

    /** The file was cut or written by someone else: the next write reads its partial block again. */
    void forget() {
        carriedFrom = -1;
    }

    @Override
    public void close() throws IOException {
        stage = null;
        carriedFrom = -1;
        direct.close();
    }
}
