package io.fastblock.bench.chain;

import io.fastblock.bench.LatencyHistogram;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.Unpooled;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Drives a chain's head over the storage protocol with a closed loop of {@code queueDepth}
 * requests, as the gateway would: each completion issues the next request. The volume's span is
 * cut into chunks of {@link #CHUNK_BYTES} like a volume's; no request crosses a chunk.
 */
public final class ChainLoad {
    public static final long CHUNK_BYTES = 16L << 20;

    private final StorageClient head;
    private final ChainAddress chain;
    private final long volumeId;
    private final long span;
    private final byte[] pattern;

    public ChainLoad(StorageClient head, ChainAddress chain, long volumeId, long span) {
        if (span <= 0 || span % (1 << 20) != 0) {
            throw new IllegalArgumentException("span must be a positive multiple of 1 MiB, got " + span);
        }
        this.head = head;
        this.chain = chain;
        this.volumeId = volumeId;
        this.span = span;
        this.pattern = new byte[1 << 20];
        new Random(volumeId).nextBytes(pattern);
    }

    /** Runs {@code w} for {@code rampNanos} (not counted) plus {@code measureNanos}. */
    public RunResult run(StorageWorkload w, long rampNanos, long measureNanos) throws InterruptedException {
        if (w.blockSize() > pattern.length) {
            throw new IllegalArgumentException("block size above 1 MiB: " + w.blockSize());
        }
        long start = System.nanoTime();
        long counted = start + rampNanos;
        long end = counted + measureNanos;
        Loop loop = new Loop(w, counted, end, span / w.blockSize());
        for (int i = 0; i < w.queueDepth(); i++) {
            loop.issue();
        }
        // A lost answer would hang the loop: bound the wait well beyond the chain's own ack timeout.
        if (!loop.idle.await(measureNanos + rampNanos + TimeUnit.SECONDS.toNanos(60), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException(w.name() + ": requests still outstanding a minute after the run ended");
        }
        if (loop.firstError.get() != null && loop.ios.get() == 0) {
            throw new IllegalStateException(w.name() + ": every request failed, first: " + loop.firstError.get());
        }
        synchronized (loop.latency) {
            return new RunResult(loop.ios.get(), loop.bytes.get(), measureNanos / 1e9,
                    loop.latency.percentile(50) / 1000, loop.latency.percentile(99) / 1000, loop.errors.get());
        }
    }

    /** Writes the whole span once, sequentially in 1 MiB pieces, so reads find data and writes overwrite. */
    public void fill() throws InterruptedException {
        StorageWorkload seq = new StorageWorkload("fill", true, false, 1 << 20, 32);
        Loop loop = new Loop(seq, System.nanoTime(), Long.MAX_VALUE, span / seq.blockSize());
        loop.limit = span / seq.blockSize();
        for (int i = 0; i < seq.queueDepth(); i++) {
            loop.issue();
        }
        if (!loop.idle.await(30, TimeUnit.MINUTES)) {
            throw new IllegalStateException("fill did not finish in 30 minutes");
        }
        if (loop.errors.get() > 0) {
            throw new IllegalStateException("fill: " + loop.errors.get() + " writes failed, first: " + loop.firstError.get());
        }
    }

    private final class Loop {
        final StorageWorkload w;
        final long counted;
        final long end;
        final long blocks;
        final AtomicLong next = new AtomicLong();
        final AtomicLong ios = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicReference<String> firstError = new AtomicReference<>();
        final LatencyHistogram latency = new LatencyHistogram();
        final CountDownLatch idle;
        volatile long limit = Long.MAX_VALUE;

        Loop(StorageWorkload w, long counted, long end, long blocks) {
            this.w = w;
            this.counted = counted;
            this.end = end;
            this.blocks = blocks;
            this.idle = new CountDownLatch(w.queueDepth());
        }

        void issue() {
            long n = next.getAndIncrement();
            if (n >= limit || System.nanoTime() >= end) {
                idle.countDown();
                return;
            }
            long block = w.random() ? ThreadLocalRandom.current().nextLong(blocks) : n % blocks;
            long at = block * w.blockSize();
            ChunkId chunk = new ChunkId(volumeId, at / CHUNK_BYTES);
            long offset = at % CHUNK_BYTES;
            long sent = System.nanoTime();
            head.send(id -> w.write()
                    ? new WriteRequest(id, 0, chain, chunk, offset, 0, Unpooled.wrappedBuffer(pattern, 0, w.blockSize()))
                    : new ReadRequest(id, chain, chunk, offset, w.blockSize()))
                    .whenComplete((r, err) -> completed(sent, r, err));
        }

        private void completed(long sent, StorageResponse r, Throwable err) {
            long now = System.nanoTime();
            if (r != null) {
                r.data().release();
            }
            if (err != null || !r.isOk()) {
                errors.incrementAndGet();
                firstError.compareAndSet(null, err != null ? err.toString() : r.status() + ": " + r.message());
                if (err != null) {
                    // The connection is gone: no point in issuing more.
                    idle.countDown();
                    return;
                }
            } else if (now >= counted && now <= end) {
                ios.incrementAndGet();
                bytes.addAndGet(w.blockSize());
                synchronized (latency) {
                    latency.record(now - sent);
                }
            }
            issue();
        }
    }
}
