package io.fastblock.namenode.meta;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.zookeeper.KeeperException;

/**
 * Reads of znodes that do not depend on each other, sent together so the caller waits for one
 * ZooKeeper round trip rather than one per read. A missing znode reads as null; any other error,
 * or no answer within {@link #TIMEOUT_SECONDS}, fails the whole batch as {@link MetadataUnavailableException}.
 */
final class ZkReads {
    static final long TIMEOUT_SECONDS = 30;

    private final CuratorFramework zk;
    private final String what;
    private final List<Read> reads = new ArrayList<>();
    private final ConcurrentLinkedQueue<String> failed = new ConcurrentLinkedQueue<>();
    private AtomicReferenceArray<Object> results;
    private CountDownLatch done;

    /** A znode to read: its data, or with {@code listing} its children. */
    private record Read(String path, boolean listing) {
    }

    ZkReads(CuratorFramework zk, String what) {
        this.zk = zk;
        this.what = what;
    }

    /** Adds a read of the znode's data; returns its slot for {@link #data(int)}. */
    int data(String path) {
        reads.add(new Read(path, false));
        return reads.size() - 1;
    }

    /** Adds a listing of the znode's children; returns its slot for {@link #children(int)}. */
    int children(String path) {
        reads.add(new Read(path, true));
        return reads.size() - 1;
    }

    /** Sends every read added and waits for all of them. */
    ZkReads run() {
        results = new AtomicReferenceArray<>(reads.size());
        done = new CountDownLatch(reads.size());
        for (int slot = 0; slot < reads.size(); slot++) {
            send(slot, reads.get(slot));
        }
        try {
            if (!done.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new MetadataUnavailableException(what + ": ZooKeeper did not answer within "
                        + TIMEOUT_SECONDS + " s", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetadataUnavailableException(what + ": interrupted", e);
        }
        if (!failed.isEmpty()) {
            throw new MetadataUnavailableException(what + ": ZooKeeper answered " + failed.peek(), null);
        }
        return this;
    }

    /** The data read in {@code slot}, or null if the znode did not exist. */
    byte[] data(int slot) {
        return (byte[]) results.get(slot);
    }

    /** The children listed in {@code slot}, or null if the znode did not exist. */
    @SuppressWarnings("unchecked")
    List<String> children(int slot) {
        return (List<String>) results.get(slot);
    }

    private void send(int slot, Read read) {
        BackgroundCallback callback = (client, event) -> {
            try {
                KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                if (code == KeeperException.Code.OK) {
                    results.set(slot, read.listing() ? event.getChildren() : event.getData());
                } else if (code != KeeperException.Code.NONODE) {
                    failed.add(code + " for " + read.path());
                }
            } finally {
                done.countDown();
            }
        };
        try {
            if (read.listing()) {
                zk.getChildren().inBackground(callback).forPath(read.path());
            } else {
                zk.getData().inBackground(callback).forPath(read.path());
            }
        } catch (Exception e) {
            throw new MetadataUnavailableException(what + ": " + e, e);
        }
    }
}
