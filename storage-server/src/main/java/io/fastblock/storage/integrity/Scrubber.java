package io.fastblock.storage.integrity;

import io.fastblock.storage.io.ByteRateLimiter;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chunk.BlockRange;
import io.fastblock.storage.chunk.ChunkStore;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Background verification of every chunk file's checksums at a bounded rate, so bit rot is
 * found and repaired before a client reads it (or before the other copies rot too). One pass
 * walks every chunk in 1 MiB steps, sleeping as needed to stay under {@code bytesPerSecond};
 * bad stretches are repaired from another replica through {@link ReadRepair}. Progress (bytes,
 * chunks, passes, end of the last full pass) is in {@link IntegrityMetrics}.
 */
public final class Scrubber implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Scrubber.class);
    static final int STEP_BLOCKS = 256;
    private static final int BLOCK = 4096;

    /** The group record of a chunk this node holds, or null when it is not known. */
    public interface GroupResolver {
        GroupRecord groupOf(ChunkId chunk);
    }

    private final String nodeId;
    private final ChunkStore chunks;
    private final ReadRepair repair;
    private final GroupResolver groups;
    private final long bytesPerSecond;
    private final Duration pauseBetweenPasses;
    private final IntegrityMetrics metrics;
    private final Thread thread;
    private volatile boolean stopped;

    /** What one pass found. */
    public record PassReport(int chunks, long bytes, int badStretches, long repairedBytes, int unrepaired) {
    }

    public Scrubber(String nodeId, ChunkStore chunks, ReadRepair repair, GroupResolver groups, long bytesPerSecond,
                    Duration pauseBetweenPasses) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("scrub rate must be positive, got " + bytesPerSecond);
        }
        this.nodeId = nodeId;
        this.chunks = chunks;
        this.repair = repair;
        this.groups = groups;
        this.bytesPerSecond = bytesPerSecond;
        this.pauseBetweenPasses = pauseBetweenPasses;
        this.metrics = repair.metrics();
        this.thread = new Thread(this::run, "scrubber");
        thread.setDaemon(true);
    }

    public Scrubber start() {
        thread.start();
        return this;
    }

    private void run() {
        while (!stopped) {
            try {
                PassReport r = pass();
                LOG.info("node {}: scrub pass done: {}", nodeId, r);
                Thread.sleep(pauseBetweenPasses.toMillis());
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                LOG.warn("node {}: scrub pass failed: {}", nodeId, e.toString());
                try {
                    Thread.sleep(Math.max(1000, pauseBetweenPasses.toMillis()));
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    /** One full pass over every chunk, on the calling thread, at the configured rate. */
    public PassReport pass() throws IOException, InterruptedException {
        ByteRateLimiter pace = new ByteRateLimiter(bytesPerSecond);
        long bytes = 0;
        int bad = 0;
        long repaired = 0;
        int unrepaired = 0;
        List<ChunkId> all = chunks.chunks();
        for (ChunkId c : all) {
            long blocks = (chunks.sizeOf(c) + BLOCK - 1) / BLOCK;
            for (long b = 0; b < blocks && !stopped; b += STEP_BLOCKS) {
                int n = (int) Math.min(STEP_BLOCKS, blocks - b);
                List<BlockRange> found = await(chunks.verifyAsync(c, b, n));
                bytes += (long) n * BLOCK;
                metrics.scrubbedBytes.increment((double) n * BLOCK);
                if (!found.isEmpty()) {
                    bad += found.size();
                    long fixed = repairNow(c, found);
                    repaired += fixed;
                    if (fixed <= 0) {
                        unrepaired += found.size();
                    }
                }
                pace.acquire((long) n * BLOCK);
            }
            if (stopped) {
                break;
            }
            metrics.scrubbedChunks.increment();
        }
        if (!stopped) {
            metrics.fullPassDone(System.currentTimeMillis());
        }
        return new PassReport(all.size(), bytes, bad, repaired, unrepaired);
    }

    private long repairNow(ChunkId c, List<BlockRange> found) throws InterruptedException {
        GroupRecord g = groups.groupOf(c);
        if (g == null) {
            metrics.corruptFound.increment(found.size());
            LOG.error("node {}: chunk {} has bad blocks {} but its group is unknown here; left for a client read to repair",
                    nodeId, c, found);
            return 0;
        }
        LOG.warn("node {}: scrub found bad blocks {} in chunk {}; repairing from group {}", nodeId, found, c, g.id());
        try {
            return await(repair.repairChunk(g, new ChainAddress(g.id(), g.chainVersion(), 0), c, found,
                    PooledByteBufAllocator.DEFAULT));
        } catch (IOException | RuntimeException e) {
            LOG.warn("node {}: scrub repair of chunk {} failed: {}", nodeId, c, e.toString());
            return 0;
        }
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> f) throws IOException, InterruptedException {
        try {
            return f.get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = ReadRepair.unwrap(e);
            throw c instanceof IOException io ? io : new IOException(String.valueOf(c), c);
        }
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
