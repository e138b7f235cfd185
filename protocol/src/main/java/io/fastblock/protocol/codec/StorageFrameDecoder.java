package io.fastblock.protocol.codec;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/** Splits the byte stream into frames and decodes each into a {@link io.fastblock.protocol.StorageMessage}. */
public final class StorageFrameDecoder extends LengthFieldBasedFrameDecoder {
    public StorageFrameDecoder() {
        super(StorageFrames.MAX_FRAME, 0, 4, 0, 0);
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        ByteBuf frame = (ByteBuf) super.decode(ctx, in);
        if (frame == null) {
            return null;
        }
        try {
            return StorageFrames.decode(frame);
        } finally {
            frame.release();
        }
    }
}
