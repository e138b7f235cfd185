package io.fastblock.storage.log;

import io.fastblock.storage.io.ByteRateLimiter;
import io.fastblock.protocol.ChunkId;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verifies the CRC32C of every live log record at a bounded rate: walks the index in key order
 * (dead records are skipped, they will never be read) and reads each extent's records. A corrupt
 * extent is reported through the listener, so integrity repair can fetch its bytes from a replica
 * and write them again (which makes the corrupt record dead).
 */
public final class LogScrubber implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogScrubber.class);
    private static final int SCAN_BATCH = 256;

    /**
     * Told about each extent whose records fail their check. A repair should go through
     * {@link LogStore#rewrite} with the extent's run as origin, so that it replaces only bytes
     * that still read from the bad run (a write landing meanwhile is newer and stays).
     */
    public interface CorruptionListener {
        void corrupt(ChunkId chunk, Extent extent, CorruptRecordException cause);
    }

    /** What one pass did. */
    public record Pass(long bytes, long extents, long corruptions) {
    }

    private final LogStore store;
    private final ByteRateLimiter limiter;
    private final CorruptionListener listener;
    private volatile boolean running;
    private Thread thread;

    public LogScrubber(LogStore store, ByteRateLimiter limiter, CorruptionListener listener) {
        this.store = store;
        this.limiter = limiter;
        this.listener = listener;
    }

    /** One walk over the whole index. */
    public Pass scrubOnce() throws IOException, InterruptedException {
        long bytes = 0;
        long extents = 0;
        long corruptions = 0;
        ExtentIndex.Entry after = null;
        while (true) {
            List<ExtentIndex.Entry> batch = store.scanIndex(after, SCAN_BATCH);
            if (batch.isEmpty()) {
                return new Pass(bytes, extents, corruptions);
            }
            for (ExtentIndex.Entry entry : batch) {
                Extent e = entry.extent();
                limiter.acquire(e.length());
                try {
                    if (store.verifyExtent(entry.chunk(), e)) {
                        bytes += e.length();
                        extents++;
                        store.logMetrics().scrubbedBytes.increment(e.length());
                    }
                } catch (CorruptRecordException c) {
                    corruptions++;
                    store.logMetrics().scrubCorruptions.increment();
                    LOG.warn("log scrub: chunk {} bytes [{}, {}) are corrupt: {}", entry.chunk(), e.chunkOffset(), e.end(),
                            c.getMessage());
                    listener.corrupt(entry.chunk(), e, c);
                }
            }
            after = batch.get(batch.size() - 1);
        }
    }

    /** Scrubs in the background, one pass every {@code periodMillis} (pacing within a pass comes from the limiter). */
    public synchronized LogScrubber start(long periodMillis) {
        if (thread == null) {
            running = true;
            thread = new Thread(() -> {
                while (running) {
                    try {
                        Pass p = scrubOnce();
                        LOG.info("log scrub pass: {} bytes in {} extents, {} corrupt", p.bytes(), p.extents(), p.corruptions());
                        TimeUnit.MILLISECONDS.sleep(periodMillis);
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException | RuntimeException e) {
                        if (!running) {
                            return;
                        }
                        LOG.warn("log scrub pass failed: {}", e.toString());
                        try {
                            TimeUnit.MILLISECONDS.sleep(periodMillis);
                        } catch (InterruptedException ie) {
                            return;
                        }
                    }
                }
            }, "log-scrubber");
            thread.setDaemon(true);
            thread.start();
        }
        return this;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
