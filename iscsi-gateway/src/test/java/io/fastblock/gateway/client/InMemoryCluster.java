package io.fastblock.gateway.client;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A namenode and storage nodes in memory, for logic tests without sockets: every chunk lives on
 * one group, replicas hold bytes per chunk, a write to the head lands on every member (as the
 * chain would), and tests can script failures for the next requests.
 */
final class InMemoryCluster implements ChunkMapSource, StorageTransport {
    record Sent(OpCode op, NodeAddress node, ChainAddress chain, ChunkId chunk, long offset, int length) {
    }

    final long chunkSize;
    volatile GroupInfo group;
    final Map<Long, Boolean> allocated = new ConcurrentHashMap<>();
    final Map<String, Map<Long, byte[]>> data = new ConcurrentHashMap<>();
    /** Per member and chunk, which 4 KiB blocks are allocated (written since their last trim). */
    final Map<String, Map<Long, java.util.BitSet>> blocks = new ConcurrentHashMap<>();
    final List<Sent> sent = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger lookups = new AtomicInteger();
    final AtomicInteger allocations = new AtomicInteger();
    /** Every buffer handed to the client in a read answer, to check the client released them. */
    final List<ByteBuf> handedOut = Collections.synchronizedList(new ArrayList<>());
    /** Failures for the next storage requests: a Status, or a Throwable to fail the future with. */
    final Deque<Object> script = new ArrayDeque<>();
    /** Runs after a scripted failure was used, e.g. to move the chain. */
    volatile Runnable afterScripted = () -> { };
    volatile RuntimeException namenodeFailure;

    InMemoryCluster(long chunkSize, int members) {
        this.chunkSize = chunkSize;
        List<GroupMember> list = new ArrayList<>();
        for (int i = 1; i <= members; i++) {
            list.add(new GroupMember("storage-" + i, "127.0.0.1", 9400 + i, true));
        }
        this.group = new GroupInfo(1, 1, list);
    }

    void bumpChain(GroupInfo next) {
        this.group = next;
    }

    int requestsTo(String nodeId, OpCode op) {
        GroupMember m = group.members().stream().filter(x -> x.id().equals(nodeId)).findFirst().orElseThrow();
        synchronized (sent) {
            return (int) sent.stream().filter(s -> s.op() == op && s.node().equals(m.address())).count();
        }
    }

    @Override
    public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
        lookups.incrementAndGet();
        if (namenodeFailure != null) {
            return CompletableFuture.failedFuture(namenodeFailure);
        }
        boolean a = allocated.getOrDefault(index, false);
        return CompletableFuture.completedFuture(new ChunkLocation(index, a, a ? group : null));
    }

    @Override
    public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
        allocations.incrementAndGet();
        if (namenodeFailure != null) {
            return CompletableFuture.failedFuture(namenodeFailure);
        }
        allocated.put(index, true);
        return CompletableFuture.completedFuture(new ChunkLocation(index, true, group));
    }

    private synchronized Object nextScripted() {
        return script.pollFirst();
    }

    @Override
    public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                    ByteBuf buf) {
        int length = buf.readableBytes();
        sent.add(new Sent(OpCode.WRITE, node, chain, chunk, offset, length));
        try {
            CompletableFuture<StorageResponse> scripted = scripted(OpCode.WRITE);
            if (scripted != null) {
                return scripted;
            }
            Status check = check(node, chain, true);
            if (check != Status.OK) {
                return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.WRITE, check, "fake"));
            }
            byte[] bytes = new byte[length];
            buf.getBytes(buf.readerIndex(), bytes);
            for (GroupMember m : group.members()) {
                byte[] chunkBytes = data.computeIfAbsent(m.id(), k -> new ConcurrentHashMap<>())
                        .computeIfAbsent(chunk.index(), k -> new byte[(int) chunkSize]);
                synchronized (chunkBytes) {
                    System.arraycopy(bytes, 0, chunkBytes, (int) offset, length);
                    if (length > 0) {
                        allocation(m.id(), chunk.index()).set((int) (offset / 4096), (int) ((offset + length - 1) / 4096) + 1);
                    }
                }
            }
            return CompletableFuture.completedFuture(StorageResponse.ok(0, OpCode.WRITE));
        } finally {
            buf.release();
        }
    }

    @Override
    public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                   int length) {
        sent.add(new Sent(OpCode.READ, node, chain, chunk, offset, length));
        CompletableFuture<StorageResponse> scripted = scripted(OpCode.READ);
        if (scripted != null) {
            return scripted;
        }
        Status check = check(node, chain, false);
        if (check != Status.OK) {
            return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.READ, check, "fake"));
        }
        String id = memberAt(node).id();
        byte[] chunkBytes = data.getOrDefault(id, Map.of()).get(chunk.index());
        ByteBuf out = Unpooled.directBuffer(length);
        if (chunkBytes == null) {
            out.writeZero(length);
        } else {
            synchronized (chunkBytes) {
                out.writeBytes(chunkBytes, (int) offset, length);
            }
        }
        handedOut.add(out);
        return CompletableFuture.completedFuture(StorageResponse.ok(0, OpCode.READ, out));
    }

    private java.util.BitSet allocation(String member, long chunk) {
        return blocks.computeIfAbsent(member, k -> new ConcurrentHashMap<>()).computeIfAbsent(chunk,
                k -> new java.util.BitSet());
    }

    /** As the storage servers do it (contract A1): 4 KiB aligned, zeros afterwards, blocks no longer allocated. */
    @Override
    public CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                   int length) {
        sent.add(new Sent(OpCode.WRITE, node, chain, chunk, offset, -length)); // negative length marks a trim
        CompletableFuture<StorageResponse> scripted = scripted(OpCode.WRITE);
        if (scripted != null) {
            return scripted;
        }
        Status check = check(node, chain, true);
        if (check == Status.OK && (offset % 4096 != 0 || length % 4096 != 0)) {
            check = Status.BAD_REQUEST;
        }
        if (check != Status.OK) {
            return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.WRITE, check, "fake"));
        }
        for (GroupMember m : group.members()) {
            byte[] chunkBytes = data.getOrDefault(m.id(), Map.of()).get(chunk.index());
            if (chunkBytes != null) {
                synchronized (chunkBytes) {
                    java.util.Arrays.fill(chunkBytes, (int) offset, (int) (offset + length), (byte) 0);
                    allocation(m.id(), chunk.index()).clear((int) (offset / 4096), (int) ((offset + length) / 4096));
                }
            }
        }
        return CompletableFuture.completedFuture(StorageResponse.ok(0, OpCode.WRITE));
    }

    @Override
    public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                      int length) {
        sent.add(new Sent(OpCode.EXTENTS, node, chain, chunk, offset, length));
        CompletableFuture<StorageResponse> scripted = scripted(OpCode.EXTENTS);
        if (scripted != null) {
            return scripted;
        }
        Status check = check(node, chain, false);
        if (check != Status.OK) {
            return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.EXTENTS, check, "fake"));
        }
        java.util.BitSet bits = (java.util.BitSet) allocation(memberAt(node).id(), chunk.index()).clone();
        List<io.fastblock.protocol.Extents.Range> ranges = new ArrayList<>();
        long end = offset + length;
        for (int b = bits.nextSetBit((int) (offset / 4096)); b >= 0 && (long) b * 4096 < end; ) {
            int stop = bits.nextClearBit(b);
            long from = Math.max(offset, (long) b * 4096);
            long to = Math.min(end, (long) stop * 4096);
            ranges.add(new io.fastblock.protocol.Extents.Range(from, (int) (to - from)));
            b = bits.nextSetBit(stop);
        }
        io.fastblock.protocol.Extents e = io.fastblock.protocol.Extents.of(ranges);
        ByteBuf out = Unpooled.directBuffer(e.encodedSize());
        e.encode(out);
        handedOut.add(out);
        return CompletableFuture.completedFuture(StorageResponse.ok(0, OpCode.EXTENTS, out));
    }

    private CompletableFuture<StorageResponse> scripted(OpCode op) {
        Object next = nextScripted();
        if (next == null) {
            return null;
        }
        afterScripted.run();
        if (next instanceof Status s) {
            return CompletableFuture.completedFuture(StorageResponse.error(0, op, s, "scripted"));
        }
        return CompletableFuture.failedFuture((Throwable) next);
    }

    private GroupMember memberAt(NodeAddress node) {
        return group.members().stream().filter(m -> m.address().equals(node)).findFirst().orElse(null);
    }

    private Status check(NodeAddress node, ChainAddress chain, boolean write) {
        GroupMember m = memberAt(node);
        if (m == null) {
            return Status.NOT_MEMBER;
        }
        if (chain.groupId() != group.id()) {
            return Status.UNKNOWN_GROUP;
        }
        if (chain.chainVersion() != group.chainVersion()) {
            return Status.STALE_CHAIN;
        }
        if (write && !group.members().get(0).equals(m)) {
            return Status.BAD_REQUEST;
        }
        return Status.OK;
    }
}
