package io.fastblock.protocol.codec;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

/** Splits the byte stream into frames and decodes each into a {@link io.fastblock.protocol.StorageMessage}. */
public final class StorageFrameDecoder extends LengthFieldBasedFrameDecoder {
    /** Bytes of the length field that starts every frame (the frame is this plus the field's value). */
    private static final int LENGTH_FIELD = 4;

    /**
     * Netty's default cumulator grows its buffer step by step while a large frame arrives in
     * socket reads of up to 64 KiB, copying what it holds at each step (for a 1 MiB read answer
     * about 2 MiB copied and five buffers taken from the pool). Once a frame's length field is in,
     * this one makes room for the whole frame at once, so each byte is copied once.
     */
    static final Cumulator WHOLE_FRAME = (alloc, cumulation, in) -> {
        int held = cumulation.readableBytes();
        if (held >= LENGTH_FIELD) {
            long frame = (cumulation.getInt(cumulation.readerIndex()) & 0xffffffffL) + LENGTH_FIELD;
            long needed = Math.max(frame, (long) held + in.readableBytes());
            if (frame > held && frame <= StorageFrames.MAX_FRAME && cumulation.writableBytes() < in.readableBytes()) {
                ByteBuf whole = alloc.directBuffer((int) needed);
                try {
                    whole.writeBytes(cumulation).writeBytes(in);
                } catch (RuntimeException e) {
                    whole.release();
                    in.release();
                    throw e;
                }
                cumulation.release();
                in.release();
                return whole;
            }
        }
        return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
    };

    public StorageFrameDecoder() {
        super(StorageFrames.MAX_FRAME, 0, LENGTH_FIELD, 0, 0);
        setCumulator(WHOLE_FRAME);
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
