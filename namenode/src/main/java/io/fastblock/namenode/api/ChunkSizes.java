package io.fastblock.namenode.api;

/** The chunk sizes a volume may use: powers of two from 1 MiB to 1 GiB. */
public final class ChunkSizes {
    public static final long MIN = 1L << 20;
    public static final long MAX = 1L << 30;
    public static final long DEFAULT = 64L << 20;

    private ChunkSizes() {
    }

    /** Returns {@code bytes} or throws {@link IllegalArgumentException} with a message saying what is allowed. */
    public static long check(long bytes) {
        if (bytes < MIN || bytes > MAX || Long.bitCount(bytes) != 1) {
            throw new IllegalArgumentException(
                    "chunk size must be a power of two from 1 MiB (1048576) to 1 GiB (1073741824) bytes, got " + bytes);
        }
        return bytes;
    }
}
