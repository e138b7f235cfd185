package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chain.GroupLookup;
import io.fastblock.storage.chain.NodeDirectory;
import io.fastblock.storage.chunk.ChunkStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;

/**
 * A storage node's integrity work in one place, for the server to wire: read repair (for the
 * read path), the resync of chunks left dirty by an unclean shutdown (started at once, in the
 * background; reads of those chunks are answered by their tail meanwhile) and the scrubber.
 */
public final class NodeIntegrity implements AutoCloseable {
    /** Scrub rate and pause; the defaults verify about 30 GiB an hour while leaving the disk to clients. */
    public record Settings(long scrubBytesPerSecond, Duration scrubPause, boolean scrub, long resyncRetryMillis) {
        public static final Settings DEFAULTS = new Settings(8L << 20, Duration.ofMinutes(10), true, 1000);
    }

    private final IntegrityMetrics metrics;
    private final NetworkReplicaReader peers;
    private final ReadRepair repair;
    private final ChunkResync resync;
    private final Scrubber scrubber;
    private final GroupLookup groups;
    private final ToIntFunction<ChunkId> resolve;
    private CompletableFuture<Void> resynced = CompletableFuture.completedFuture(null);

    /**
     * @param groupOfChunk the group of a chunk whose writes did not name it ({@link ChunkStore#UNKNOWN_GROUP} if none)
     * @param localLog this node's log, the resync source for chunks of groups it is tail of (may be null)
     */
    public NodeIntegrity(String nodeId, ChunkStore chunks, GroupLookup groups, NodeDirectory nodes,
                         ToIntFunction<ChunkId> groupOfChunk, ChunkResync.LocalLog localLog, EventLoopGroup loop,
                         MeterRegistry registry, Settings settings) {
        this.metrics = new IntegrityMetrics(registry);
        this.peers = new NetworkReplicaReader(nodes, loop);
        this.repair = new ReadRepair(nodeId, chunks, peers, metrics);
        this.groups = groups;
        this.resolve = c -> {
            int g = chunks.groupOf(c);
            return g != ChunkStore.UNKNOWN_GROUP ? g : groupOfChunk.applyAsInt(c);
        };
        this.resync = new ChunkResync(nodeId, chunks, groups, peers, metrics, settings.resyncRetryMillis())
                .withGroupResolver(this.resolve).withLocalLog(localLog);
        this.scrubber = settings.scrub() ? new Scrubber(nodeId, chunks, repair, c -> {
            int g = this.resolve.applyAsInt(c);
            if (g == ChunkStore.UNKNOWN_GROUP) {
                return null;
            }
            GroupRecord r = groups.cached(g);
            return r != null ? r : groups.refresh(g).join();
        }, settings.scrubBytesPerSecond(), settings.scrubPause()) : null;
    }

    /** Paces resync copies with the node's copy budget (shared with catch-up); call before {@link #start}. */
    public NodeIntegrity withCopyLimiter(io.fastblock.storage.io.ByteRateLimiter limiter) {
        resync.withCopyLimiter(limiter);
        return this;
    }

    /** Starts the resync of dirty chunks and the scrubber. */
    public NodeIntegrity start() {
        resynced = resync.start();
        if (scrubber != null) {
            scrubber.start();
        }
        return this;
    }

    public ReadRepair readRepair() {
        return repair;
    }

    /** Resyncs one chunk held at run time ({@link ChunkStore#holdForResync}) from its tail, retrying until it is done. */
    public CompletableFuture<Void> resync(io.fastblock.storage.chunk.DirtyChunks.Entry held) {
        return resync.resyncHeld(held);
    }

    public IntegrityMetrics metrics() {
        return metrics;
    }

    /**
     * The listener for the log's scrubber: each corrupt extent is repaired in the background
     * (good bytes written again through {@code rewrite}, normally {@code LogStore::rewrite}, in place of the bad run only).
     */
    public io.fastblock.storage.log.LogScrubber.CorruptionListener logRepair(ReadRepair.LogRewriter rewrite) {
        return (chunk, extent, cause) -> {
            long offset = extent.chunkOffset();
            int length = extent.length();
            int g = resolve.applyAsInt(chunk);
            GroupRecord group = g == ChunkStore.UNKNOWN_GROUP ? null : groups.cached(g);
            if (group == null) {
                metrics.corruptFound.increment();
                org.slf4j.LoggerFactory.getLogger(NodeIntegrity.class).error(
                        "log extent of chunk {} {}+{} is corrupt but its group is unknown here; not repaired", chunk, offset, length);
                return;
            }
            repair.repairLogExtent(group, chunk, extent, rewrite).whenComplete((v, err) -> {
                if (err != null) {
                    org.slf4j.LoggerFactory.getLogger(NodeIntegrity.class).warn("repair of log extent of chunk {} {}+{} failed: {}",
                            chunk, offset, length, ReadRepair.unwrap(err).toString());
                }
            });
        };
    }

    /** The chunk scrubber, or null when scrubbing is off. */
    public Scrubber scrubber() {
        return scrubber;
    }

    /** Completes when every chunk left dirty by an unclean shutdown has been resynced. */
    public CompletableFuture<Void> resynced() {
        return resynced;
    }

    @Override
    public void close() {
        if (scrubber != null) {
            scrubber.close();
        }
        resync.close();
        peers.close();
    }
}
