package io.fastblock.protocol.codec;

import io.fastblock.protocol.StorageMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** Encodes a message into a frame and decodes it back, as the two ends of a connection would. */
final class RoundTrip {
    private RoundTrip() {
    }

    static StorageMessage of(StorageMessage in) {
        ByteBuf frame = StorageFrames.encode(in, ByteBufAllocator.DEFAULT);
        try {
            return StorageFrames.decode(frame);
        } finally {
            frame.release();
        }
    }
}
