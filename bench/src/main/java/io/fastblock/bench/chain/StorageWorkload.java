package io.fastblock.bench.chain;

import java.util.List;

/**
 * One line of the storage benchmark: an access pattern, its I/O size and queue depth. The same
 * workload runs against the chain and, as fio's {@link #fioRw()}, against a raw file.
 */
public record StorageWorkload(String name, boolean write, boolean random, int blockSize, int queueDepth) {
    public static final int QUEUE_DEPTH = 32;

    /** The four workloads of the issue, writes first so the reads find written data. */
    public static final List<StorageWorkload> STANDARD = List.of(
            new StorageWorkload("4k-randwrite", true, true, 4096, QUEUE_DEPTH),
            new StorageWorkload("4k-randread", false, true, 4096, QUEUE_DEPTH),
            new StorageWorkload("1m-seqwrite", true, false, 1 << 20, QUEUE_DEPTH),
            new StorageWorkload("1m-seqread", false, false, 1 << 20, QUEUE_DEPTH));

    public StorageWorkload {
        if (blockSize <= 0 || blockSize % 4096 != 0) {
            throw new IllegalArgumentException("block size must be a positive multiple of 4096, got " + blockSize);
        }
        if (queueDepth <= 0) {
            throw new IllegalArgumentException("queue depth must be positive, got " + queueDepth);
        }
    }

    public String fioRw() {
        return random ? (write ? "randwrite" : "randread") : (write ? "write" : "read");
    }
}
