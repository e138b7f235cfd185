package io.fastblock.storage.net;

/** Counts requests being served across all connections, so shutdown can wait for them to finish. */
public final class InflightRequests {
    private int count;

    public synchronized void begin() {
        count++;
    }

    public synchronized void end() {
        count--;
        if (count == 0) {
            notifyAll();
        }
    }

    public synchronized int count() {
        return count;
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
