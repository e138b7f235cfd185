package io.fastblock.protocol.codec;

import io.fastblock.protocol.StorageMessage;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/** Encodes storage messages; payload buffers are passed through without copying. */
@ChannelHandler.Sharable
public final class StorageFrameEncoder extends MessageToMessageEncoder<StorageMessage> {
    public static final StorageFrameEncoder INSTANCE = new StorageFrameEncoder();

    @Override
    protected void encode(ChannelHandlerContext ctx, StorageMessage msg, List<Object> out) {
        // MessageToMessageEncoder releases msg if it is ReferenceCounted; records are not, and
        // encode() takes over the payload, so ownership moves to the outbound frame.
        out.add(StorageFrames.encode(msg, ctx.alloc()));
    }
}
