package io.fastblock.storage.net;

import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.meta.NodeLoad;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counts requests being served across all connections, by class (the queue depths the server's
 * heartbeat reports), so shutdown can wait for them to finish.
 */
public final class InflightRequests {
    private static final String[] CLASSES = {NodeLoad.READ, NodeLoad.WRITE, NodeLoad.CATCH_UP, NodeLoad.OTHER};
    private final int[] byClass = new int[CLASSES.length];
    private int count;

    /** The heartbeat class of a request. */
    static int classOf(OpCode op) {
        return switch (op) {
            case READ, EXTENTS -> 0;
            case WRITE -> 1;
            case CHUNK_LIST, COPY_READ -> 2;
            default -> 3;
        };
    }

    public synchronized void begin() {
        count++;
    }

    public synchronized void begin(OpCode op) {
        byClass[classOf(op)]++;
        begin();
    }

    public synchronized void end() {
        count--;
        if (count == 0) {
            notifyAll();
        }
    }

    public synchronized void end(OpCode op) {
        byClass[classOf(op)]--;
        end();
    }

    public synchronized int count() {
        return count;
    }

    /** Requests in flight right now by class ({@link NodeLoad#READ} ...). */
    public synchronized Map<String, Integer> depths() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (int i = 0; i < CLASSES.length; i++) {
            out.put(CLASSES[i], byClass[i]);
        }
        return out;
    }

    /** Waits until nothing is in flight; returns false on timeout. */
    public synchronized boolean awaitIdle(long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        while (count > 0) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }
}
