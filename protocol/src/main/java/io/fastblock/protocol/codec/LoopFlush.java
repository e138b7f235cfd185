package io.fastblock.protocol.codec;

import io.netty.channel.Channel;

/**
 * Flushes a channel once per turn of its event loop instead of once per message: answers written
 * while the loop works through one batch of socket reads (32 commands in flight arrive together)
 * leave in one {@code writev} when the turn's tasks run, rather than one system call each. Both
 * the gateway (Data-In, storage requests) and the storage servers (answers) use it. Confined to
 * the channel's event loop.
 */
public final class LoopFlush {
    private final Channel channel;
    private boolean scheduled; // event loop only
    private final Runnable flush;

    public LoopFlush(Channel channel) {
        this.channel = channel;
        this.flush = () -> {
            scheduled = false;
            channel.flush();
        };
    }

    /**
     * Call on the channel's event loop after {@code write}: the flush runs after the work the loop
     * is doing now (the rest of this read batch), once for everything written meanwhile.
     */
    public void soon() {
        if (!channel.eventLoop().inEventLoop()) {
            channel.flush();
            return;
        }
        if (!scheduled) {
            scheduled = true;
            channel.eventLoop().execute(flush);
        }
    }
}
