package io.fastblock.gateway.client;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * At most one EXTENTS request per chunk in flight; everyone who asks while it is out shares the
 * next one, sent when it returns. Why: qemu sends GET LBA STATUS before each of its first 32 reads
 * of a region it does not know, 32 at once, each asking about the same four chunks: 128 EXTENTS
 * requests for what 4 (and then 4 more) answer. (The burst still took 20-40 ms afterwards, most of
 * it the namenode's chunk lookups of a new session; see docs/performance.md.) Why not let
 * askers join the request already out: it was sent before they asked, so it may miss a write that
 * completed in between (another gateway's, or this one's), and GET LBA STATUS must show every
 * write completed before it was received. The shared request is always sent after all who share it
 * asked.
 */
final class ExtentsBatcher {
    /** A chunk with a request out: who waits for the next one, and how to send it (the latest asker's route). */
    private static final class Round {
        CompletableFuture<Extents> next;
        Supplier<CompletableFuture<Extents>> nextSend;
    }

    private final Map<ChunkId, Round> out = new HashMap<>();

    /**
     * The chunk's extents from a request sent after this call: at once if none is out for the
     * chunk, else the next one. {@code send} asks for the whole chunk.
     */
    CompletableFuture<Extents> ask(ChunkId chunk, Supplier<CompletableFuture<Extents>> send) {
        CompletableFuture<Extents> mine;
        synchronized (this) {
            Round r = out.get(chunk);
            if (r != null) {
                if (r.next == null) {
                    r.next = new CompletableFuture<>();
                }
                r.nextSend = send;
                return r.next;
            }
            out.put(chunk, new Round());
            mine = new CompletableFuture<>();
        }
        fire(chunk, mine, send);
        return mine;
    }

    /** Requests (including the next rounds) not yet answered, for tests. */
    synchronized int chunksInFlight() {
        return out.size();
    }

    private void fire(ChunkId chunk, CompletableFuture<Extents> target, Supplier<CompletableFuture<Extents>> send) {
        CompletableFuture<Extents> sent;
        try {
            sent = send.get();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((extents, err) -> {
            CompletableFuture<Extents> following;
            Supplier<CompletableFuture<Extents>> followingSend;
            synchronized (this) {
                Round r = out.get(chunk);
                following = r.next;
                followingSend = r.nextSend;
                if (following == null) {
                    out.remove(chunk);
                } else {
                    r.next = null;
                    r.nextSend = null;
                }
            }
            if (err != null) {
                target.completeExceptionally(err);
            } else {
                target.complete(extents);
            }
            if (following != null) {
                fire(chunk, following, followingSend);
            }
        });
    }
}
