package io.fastblock.storage.net;

import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.storage.chain.DirectAnswers;
import io.netty.channel.Channel;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections clients registered for direct answers ({@link io.fastblock.protocol.AnswerToRequest}),
 * by client id. A registration lasts as long as its connection; a newer one for the same id
 * replaces it.
 */
public final class ClientChannels implements DirectAnswers {
    private final ConcurrentHashMap<Long, Channel> channels = new ConcurrentHashMap<>();

    void register(long client, Channel channel) {
        channels.put(client, channel);
        channel.closeFuture().addListener(f -> channels.remove(client, channel));
    }

    @Override
    public boolean answer(long client, long requestId) {
        Channel ch = channels.get(client);
        if (ch == null || !ch.isActive()) {
            return false;
        }
        // From any thread: Netty queues the write to the channel's loop. If the connection closes
        // before it leaves, the client fails the write over, as for any lost answer.
        ch.writeAndFlush(StorageResponse.ok(requestId, OpCode.WRITE), ch.voidPromise());
        return true;
    }

    /** Registered clients; for tests. */
    public int size() {
        return channels.size();
    }
}
