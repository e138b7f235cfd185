package io.fastblock.protocol;

/** Liveness probe; answered with {@link Status#OK} by a serving node. */
public record PingRequest(long requestId) implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.PING;
    }
}
