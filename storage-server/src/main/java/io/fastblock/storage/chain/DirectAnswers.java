package io.fastblock.storage.chain;

/**
 * Where a tail sends the OK of a write whose client asked for it directly
 * ({@link io.fastblock.protocol.WriteRequest#FLAG_ANSWER_DIRECT}), as chain replication's tail
 * answers its client: two hops sooner than the answer that travels back up the chain to the head.
 */
public interface DirectAnswers {
    /** Nobody registered: every answer goes back up the chain. */
    DirectAnswers NONE = (client, requestId) -> false;

    /**
     * Sends the OK of the write {@code requestId} to {@code client}; false if the client has no
     * open connection here (then only the head answers it).
     */
    boolean answer(long client, long requestId);
}
