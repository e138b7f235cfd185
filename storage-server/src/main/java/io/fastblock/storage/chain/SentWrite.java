package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * A write this replica has taken on and must see acknowledged by its successor: an entry of the
 * group's sent list. It keeps its data so it can be resent, in order, after a chain change or a
 * broken link. Mutable fields are guarded by the owning {@link GroupReplica}'s lock.
 */
final class SentWrite {
    final long order;
    final ChunkId chunk;
    final long offset;
    final long sequence;
    final long leaseEpoch;
    final ByteBuf data;
    final int bytes;
    /** The range length of a trim (which carries no data); -1 for a write. */
    final int trimLength;
    /** This replica's own apply. */
    final CompletableFuture<Void> local;
    /** The client the tail answers directly, 0 for none, and its request id there (see {@link DirectAnswers}). */
    final long answerTo;
    final long answerId;
    /** A tail forwards to its joining node only after its own durable append. */
    final boolean durableFirst;
    final long createdNanos = System.nanoTime();
    /** Completes with the successor's answer (or the error that ends the wait); never exceptionally. */
    final CompletableFuture<StorageResponse> acked = new CompletableFuture<>();
    /** Applied here as head or middle: the store waits for the tail's answer before trusting the chunk's sequence. */
    boolean aheadOfTail;
    int attempt;
    int dispatchedAttempt = -1;
    String successor;
    StorageResponse lastError;
    boolean done;

    SentWrite(long order, ChunkId chunk, long offset, long sequence, long leaseEpoch, ByteBuf data, int trimLength,
              CompletableFuture<Void> local, boolean durableFirst, long answerTo, long answerId) {
        this.answerTo = answerTo;
        this.answerId = answerId;
        this.trimLength = trimLength;
        this.order = order;
        this.chunk = chunk;
        this.offset = offset;
        this.sequence = sequence;
        this.leaseEpoch = leaseEpoch;
        this.data = data;
        this.bytes = data.readableBytes();
        this.local = local;
        this.durableFirst = durableFirst;
    }
}
