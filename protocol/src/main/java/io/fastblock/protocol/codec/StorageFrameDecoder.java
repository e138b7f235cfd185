package io.fastblock.protocol.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.util.List;

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

    /** Frames from this size on are gathered from the socket's read buffers by {@link #GATHER}, not copied. */
    static final int GATHER_FROM = 64 * 1024;
    /** Beyond this many read buffers a composite consolidates (copies) them; a 1 MiB frame takes ~17. */
    private static final int MAX_COMPONENTS = 1024;

    /**
     * For a reader that passes large payloads on (the gateway sends a read answer's data out as
     * Data-In): a large frame is kept as the socket read buffers it arrived in, one composite
     * buffer, instead of being copied into a buffer of its own (a 1 MiB memcpy per read answer,
     * ~15% of the gateway's CPU per 1 MiB read). Small frames are merged as usual.
     */
    static final Cumulator GATHER = (alloc, cumulation, in) -> {
        if (cumulation instanceof CompositeByteBuf composite) {
            // Until the decoder has read all of it (then it releases it and starts afresh).
            composite.addComponent(true, in);
            return composite;
        }
        int held = cumulation.readableBytes();
        if (held >= LENGTH_FIELD) {
            long frame = (cumulation.getInt(cumulation.readerIndex()) & 0xffffffffL) + LENGTH_FIELD;
            if (frame >= GATHER_FROM && frame > held && frame <= StorageFrames.MAX_FRAME) {
                CompositeByteBuf composite = alloc.compositeDirectBuffer(MAX_COMPONENTS);
                composite.addComponent(true, cumulation);
                composite.addComponent(true, in);
                return composite;
            }
        }
        return WHOLE_FRAME.cumulate(alloc, cumulation, in);
    };

    private final boolean gather;

    public StorageFrameDecoder() {
        this(false);
    }

    private StorageFrameDecoder(boolean gather) {
        super(StorageFrames.MAX_FRAME, 0, LENGTH_FIELD, 0, 0);
        this.gather = gather;
        setCumulator(gather ? GATHER : WHOLE_FRAME);
    }

    /**
     * A decoder whose large frames' payloads are slices of the socket's read buffers (no copy).
     * For a reader that writes the payload out again, to a socket or with a gathered write (the
     * gateway's read answers, the storage server's writes); one that needs it contiguous (a pwrite
     * from one NIO buffer, a checksum over one array) is better served by the default.
     */
    public static StorageFrameDecoder gathering() {
        return new StorageFrameDecoder(true);
    }

    /**
     * A frame inside a gathered composite is cut into slices of the read buffers it covers, each
     * retained on its own: the decoder may then release read buffers it is done with (it discards
     * read components) while the frame's payload is still on its way out.
     */
    @Override
    protected ByteBuf extractFrame(ChannelHandlerContext ctx, ByteBuf buffer, int index, int length) {
        if (!gather || !(buffer instanceof CompositeByteBuf composite)) {
            return super.extractFrame(ctx, buffer, index, length);
        }
        List<ByteBuf> parts = composite.decompose(index, length);
        if (parts.size() == 1) {
            return parts.get(0).retain();
        }
        ByteBufAllocator alloc = ctx != null ? ctx.alloc() : composite.alloc();
        CompositeByteBuf frame = alloc.compositeDirectBuffer(Math.max(2, parts.size()));
        for (ByteBuf part : parts) {
            frame.addComponent(true, part.retain());
        }
        return frame;
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
