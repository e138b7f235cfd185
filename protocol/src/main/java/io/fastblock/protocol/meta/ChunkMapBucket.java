package io.fastblock.protocol.meta;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A fixed-size slice of a volume's chunk map: the replication group of each of
 * {@link #CHUNKS_PER_BUCKET} consecutive chunks, {@link #UNALLOCATED} where none is assigned.
 * One znode per bucket keeps a 1 TiB volume at 64 MiB chunks in 4 znodes of 16 KiB.
 */
public final class ChunkMapBucket {
    public static final int CHUNKS_PER_BUCKET = 4096;
    public static final int UNALLOCATED = -1;

    private final int[] groups;

    private ChunkMapBucket(int[] groups) {
        this.groups = groups;
    }

    public static ChunkMapBucket empty() {
        int[] g = new int[CHUNKS_PER_BUCKET];
        Arrays.fill(g, UNALLOCATED);
        return new ChunkMapBucket(g);
    }

    public static ChunkMapBucket decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return empty();
        }
        if (bytes.length != CHUNKS_PER_BUCKET * 4) {
            throw new IllegalArgumentException("chunk map bucket of " + bytes.length + " bytes");
        }
        int[] g = new int[CHUNKS_PER_BUCKET];
        ByteBuffer.wrap(bytes).asIntBuffer().get(g);
        return new ChunkMapBucket(g);
    }

    public byte[] encode() {
        ByteBuffer buf = ByteBuffer.allocate(CHUNKS_PER_BUCKET * 4);
        buf.asIntBuffer().put(groups);
        return buf.array();
    }

    public static long bucketOf(long chunkIndex) {
        return chunkIndex / CHUNKS_PER_BUCKET;
    }

    private static int slotOf(long chunkIndex) {
        return (int) (chunkIndex % CHUNKS_PER_BUCKET);
    }

    public int groupOf(long chunkIndex) {
        return groups[slotOf(chunkIndex)];
    }

    public void assign(long chunkIndex, int groupId) {
        groups[slotOf(chunkIndex)] = groupId;
    }

    public int allocatedCount() {
        int n = 0;
        for (int g : groups) {
            if (g != UNALLOCATED) {
                n++;
            }
        }
        return n;
    }
}
