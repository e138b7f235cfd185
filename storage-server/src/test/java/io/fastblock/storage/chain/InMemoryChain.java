package io.fastblock.storage.chain;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * Several replicas in one JVM, with real stores on disk, linked by in-memory FIFO links instead
 * of sockets, and a group table standing in for ZooKeeper. A node can be made unreachable
 * ("down": every request to it fails at once) or stalled (requests to it never get an answer).
 */
final class InMemoryChain implements AutoCloseable {
    final Map<Integer, GroupRecord> table = new ConcurrentHashMap<>();
    final Set<String> caughtUp = ConcurrentHashMap.newKeySet();
    final Set<String> down = ConcurrentHashMap.newKeySet();
    final Set<String> stalled = ConcurrentHashMap.newKeySet();
    final Map<String, Node> nodes = new ConcurrentHashMap<>();
    final List<StorageMessage> stalledRequests = new CopyOnWriteArrayList<>();
    private final List<Consumer<GroupRecord>> listeners = new CopyOnWriteArrayList<>();
    private final Map<String, ExecutorService> links = new ConcurrentHashMap<>();
    private final ChainLimits limits;
    private final TailLayout layout;

    final class Node {
        final String id;
        final StorageMetrics metrics = new StorageMetrics();
        final ChainMetrics chainMetrics = new ChainMetrics(metrics.registry());
        final ChunkStore chunks;
        final LogStore log;
        final GroupChunks registry;
        final ReplicaService service;

        Node(String id, Path dir) throws Exception {
            this.id = id;
            chunks = new ChunkStore(dir, 2);
            log = LogStore.open(dir, 1 << 20, metrics, new io.fastblock.storage.log.ChunkStoreBase(chunks), 0);
            registry = new GroupChunks(dir);
            service = new ReplicaService(id, lookup, link(id), new ReplicaStorage(chunks, log, Runnable::run, layout), registry, metrics,
                    chainMetrics, limits, Runnable::run);
        }

        StorageResponse call(StorageMessage m) throws Exception {
            return service.handle(m, PooledByteBufAllocator.DEFAULT).get(20, TimeUnit.SECONDS);
        }

        CompletableFuture<StorageResponse> send(StorageMessage m) {
            return service.handle(m, PooledByteBufAllocator.DEFAULT);
        }

        byte[] read(int group, long version, ChunkId chunk, long offset, int length) throws Exception {
            StorageResponse r = call(new ReadRequest(1, new ChainAddress(group, version, 1), chunk, offset, length));
            try {
                if (!r.isOk()) {
                    throw new AssertionError("read at " + id + ": " + r.status() + " " + r.message());
                }
                byte[] out = new byte[length];
                r.data().getBytes(r.data().readerIndex(), out);
                return out;
            } finally {
                r.data().release();
            }
        }

        void close() throws Exception {
            service.close();
            registry.close();
            log.close();
            chunks.close();
        }
    }

    final GroupLookup lookup = new GroupLookup() {
        @Override
        public GroupRecord cached(int groupId) {
            return null;
        }

        @Override
        public CompletableFuture<GroupRecord> refresh(int groupId) {
            return CompletableFuture.supplyAsync(() -> table.get(groupId));
        }

        @Override
        public void listen(Consumer<GroupRecord> listener) {
            listeners.add(listener);
        }

        @Override
        public CompletableFuture<Void> announceCaughtUp(int groupId, String nodeId) {
            caughtUp.add(groupId + "/" + nodeId);
            return CompletableFuture.completedFuture(null);
        }
    };

    InMemoryChain(ChainLimits limits, TailLayout layout) {
        this.limits = limits;
        this.layout = layout;
    }

    Node add(String id, Path dir) throws Exception {
        Node n = new Node(id, dir);
        nodes.put(id, n);
        return n;
    }

    /** Publishes a group record; {@code notify} false leaves nodes to find it by re-reading. */
    void publish(GroupRecord record, boolean notify) {
        table.put(record.id(), record);
        if (notify) {
            for (Consumer<GroupRecord> l : listeners) {
                l.accept(record);
            }
        }
    }

    private Downstream link(String from) {
        return new Downstream() {
            @Override
            public CompletableFuture<Void> prepare(String nodeId) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<StorageResponse> forward(String nodeId, WriteRequest write) {
                return call(nodeId, id -> write);
            }

            @Override
            public CompletableFuture<StorageResponse> call(String nodeId, LongFunction<StorageMessage> build) {
                StorageMessage m = build.apply(0);
                if (down.contains(nodeId) || !nodes.containsKey(nodeId)) {
                    release(m);
                    return CompletableFuture.completedFuture(StorageResponse.error(0, m.op(), Status.IO_ERROR,
                            "node " + from + ": " + nodeId + " is unreachable"));
                }
                if (stalled.contains(nodeId)) {
                    stalledRequests.add(m);
                    return new CompletableFuture<>();
                }
                // One FIFO link per (sender, receiver), like one TCP connection.
                ExecutorService link = links.computeIfAbsent(from + ">" + nodeId, k -> Executors.newSingleThreadExecutor());
                return CompletableFuture.supplyAsync(() -> nodes.get(nodeId).send(m), link).thenCompose(f -> f);
            }
        };
    }

    static void release(StorageMessage m) {
        if (m instanceof WriteRequest w) {
            w.data().release();
        }
    }

    static WriteRequest write(int group, long version, ChunkId chunk, long offset, byte[] data) {
        return new WriteRequest(1, 0, new ChainAddress(group, version, 1), chunk, offset, 0, Unpooled.wrappedBuffer(data));
    }

    static StorageResponse ok(StorageResponse r) {
        if (r.status() != Status.OK) {
            throw new AssertionError(r.status() + " " + r.message());
        }
        return r;
    }

    static OpCode op() {
        return OpCode.WRITE;
    }

    @Override
    public void close() throws Exception {
        for (StorageMessage m : stalledRequests) {
            release(m);
        }
        for (ExecutorService e : links.values()) {
            e.shutdownNow();
        }
        for (Node n : nodes.values()) {
            n.close();
        }
    }
}
