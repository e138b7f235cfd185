package io.fastblock.storage;

import io.netty.buffer.ByteBuf;

/** What the stores' read paths hand back, as bytes a test can compare; and seeded data to write. */
public final class TestBuffers {
    private TestBuffers() {
    }

    /** The first {@code length} readable bytes of {@code b}, which is released. */
    public static byte[] drain(ByteBuf b, int length) {
        try {
            byte[] out = new byte[length];
            b.getBytes(b.readerIndex(), out);
            return out;
        } finally {
            b.release();
        }
    }

    /** {@code length} bytes from a {@link java.util.Random} seeded with {@code seed}. */
    public static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }
}
