package io.fastblock.gateway.client;

import java.time.Duration;

/**
 * Tunables of the FAST client.
 *
 * @param requestTimeout   how long one attempt of a storage request may go unanswered; at least two
 *                         attempts fit in {@code retryBudget}
 * @param maxAttempts      tries per chunk request (first one included) on retryable failures; a safety
 *                         cap, the budget is what normally ends the retries
 * @param retryBackoff     wait before the first retry; doubles per retry (capped at 500 ms)
 * @param retryBudget      how long a volume request's pieces keep being retried, from the volume request's
 *                         start; the last attempt is cut at its end. Inside the initiator's abort timer
 *                         (15 s for Linux open-iscsi), so a chain repair never surfaces as an error
 * @param unallocatedTtl   how long a "chunk not allocated" answer is believed
 * @param streamsPerVolume sequential streams tracked per volume and direction
 * @param streamGapBytes   largest skip after a stream's end that still continues it
 * @param sequentialAfter  continuations after which a stream counts as sequential
 * @param maxRequestBytes  largest payload of one storage request (volume requests are split further)
 * @param ioThreads        Netty event loop threads for storage connections
 * @param httpThreads      threads of the namenode HTTP client
 * @param namenodeTimeout  timeout of one namenode HTTP request
 */
public record ClientSettings(Duration requestTimeout, int maxAttempts, Duration retryBackoff, Duration retryBudget,
                             Duration unallocatedTtl, int streamsPerVolume, long streamGapBytes, int sequentialAfter,
                             int maxRequestBytes, int ioThreads, int httpThreads, Duration namenodeTimeout) {

    public ClientSettings {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, got " + maxAttempts);
        }
        if (requestTimeout.isNegative() || requestTimeout.isZero()
                || requestTimeout.multipliedBy(2).compareTo(retryBudget) > 0) {
            throw new IllegalArgumentException("requestTimeout must be positive and fit twice in retryBudget, got "
                    + requestTimeout + " and " + retryBudget);
        }
        if (maxRequestBytes < 512 || maxRequestBytes > io.fastblock.protocol.codec.StorageFrames.MAX_DATA) {
            throw new IllegalArgumentException("maxRequestBytes must be 512.." + io.fastblock.protocol.codec.StorageFrames.MAX_DATA
                    + ", got " + maxRequestBytes);
        }
    }

    public static ClientSettings defaults() {
        // 12 s budget: a dead storage server's session expires after 5 s, the namenode repairs the
        // chain within about a second after that, and 3 s remain for the resend before the
        // initiator's 15 s abort. 4 s per attempt: three timed-out attempts fit.
        return new ClientSettings(Duration.ofSeconds(4), 64, Duration.ofMillis(10), Duration.ofSeconds(12),
                Duration.ofSeconds(1), 8, 128 * 1024, 2, 1024 * 1024, 2, 2, Duration.ofSeconds(5));
    }

    public ClientSettings withRequestTimeout(Duration timeout) {
        return new ClientSettings(timeout, maxAttempts, retryBackoff, retryBudget, unallocatedTtl, streamsPerVolume,
                streamGapBytes, sequentialAfter, maxRequestBytes, ioThreads, httpThreads, namenodeTimeout);
    }

    public ClientSettings withRetryBudget(Duration budget) {
        return new ClientSettings(requestTimeout, maxAttempts, retryBackoff, budget, unallocatedTtl, streamsPerVolume,
                streamGapBytes, sequentialAfter, maxRequestBytes, ioThreads, httpThreads, namenodeTimeout);
    }

    public ClientSettings withMaxRequestBytes(int bytes) {
        return new ClientSettings(requestTimeout, maxAttempts, retryBackoff, retryBudget, unallocatedTtl,
                streamsPerVolume, streamGapBytes, sequentialAfter, bytes, ioThreads, httpThreads, namenodeTimeout);
    }

    public ClientSettings withUnallocatedTtl(Duration ttl) {
        return new ClientSettings(requestTimeout, maxAttempts, retryBackoff, retryBudget, ttl, streamsPerVolume,
                streamGapBytes, sequentialAfter, maxRequestBytes, ioThreads, httpThreads, namenodeTimeout);
    }
}
