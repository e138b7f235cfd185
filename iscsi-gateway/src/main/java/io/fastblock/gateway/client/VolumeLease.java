package io.fastblock.gateway.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open volume's write lease on this gateway. Taken on the first write (a gateway that only
 * reads, like the source of a live migration after the switch, never takes it), renewed every third
 * of its lifetime, and lost for good when the namenode says it moved ({@code LEASE_LOST} on renewal)
 * or a storage server rejects the epoch ({@code STALE_EPOCH}). Once lost, writes fail with FENCED
 * and the volume's cached chunk map is dropped: another gateway writes now, and whatever this one
 * cached may be stale. A new login opens a new volume, which asks for the lease afresh.
 *
 * <p>A renewal the namenode cannot answer keeps the lease as it is: the storage servers' epoch
 * check is the real fence, so a gateway that cannot reach the namenode cannot write over a newer
 * holder either.
 */
public final class VolumeLease implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VolumeLease.class);

    /** Where the lease stands. */
    public enum State { NONE, HELD, LOST }

    private final NamenodeClient namenode;
    private final String volume;
    private final String gateway;
    private final ScheduledExecutorService scheduler;
    private final long renewEveryMs;
    private final Consumer<String> onLost;
    private State state = State.NONE;
    private long epoch;
    private CompletableFuture<Long> acquiring;
    private ScheduledFuture<?> renewal;
    private String lostReason;
    private boolean closed;

    /**
     * @param onLost called once, with the reason, when the lease is lost (drop caches, fail writes)
     */
    public VolumeLease(NamenodeClient namenode, String volume, String gateway, ScheduledExecutorService scheduler,
                       Consumer<String> onLost) {
        this(namenode, volume, gateway, scheduler, onLost, java.time.Duration.ZERO);
    }

    /** @param renewEvery how often a held lease is renewed; zero: a third of the lifetime the namenode grants */
    public VolumeLease(NamenodeClient namenode, String volume, String gateway, ScheduledExecutorService scheduler,
                       Consumer<String> onLost, java.time.Duration renewEvery) {
        this.renewEveryMs = renewEvery.toMillis();
        this.namenode = namenode;
        this.volume = volume;
        this.gateway = gateway;
        this.scheduler = scheduler;
        this.onLost = onLost;
    }

    /**
     * The epoch while the lease is held, else -1: what every write asks once the lease is taken,
     * answered without a future (see {@link #writeEpoch()} for the other states).
     */
    public synchronized long heldEpoch() {
        return state == State.HELD ? epoch : -1;
    }

    /** The epoch to write with: completes once the lease is held, fails FENCED-worthy once lost. */
    public synchronized CompletableFuture<Long> writeEpoch() {
        switch (state) {
            case HELD:
                return CompletableFuture.completedFuture(epoch);
            case LOST:
                return CompletableFuture.failedFuture(new LeaseLostException(lostReason));
            default:
                break;
        }
        if (acquiring == null) {
            CompletableFuture<Long> started = namenode.lease(volume, gateway, null).thenApply(this::granted);
            acquiring = started;
            // A failed first request is retried by the next write, not remembered.
            started.whenComplete((e, err) -> {
                synchronized (this) {
                    if (err != null && acquiring == started) {
                        acquiring = null;
                    }
                }
            });
        }
        return acquiring;
    }

    private synchronized long granted(LeaseInfo lease) {
        if (state == State.LOST || closed) {
            throw new LeaseLostException(lostReason == null ? "volume closed" : lostReason);
        }
        epoch = lease.epoch();
        state = State.HELD;
        acquiring = null;
        long every = renewEveryMs > 0 ? renewEveryMs : Math.max(100, lease.ttlMs() / 3);
        if (renewEveryMs >= lease.ttlMs()) {
            LOG.warn("lease renewal every {} ms cannot keep a lease of {} ms alive", renewEveryMs, lease.ttlMs());
        }
        if (renewal == null) {
            renewal = scheduler.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        }
        LOG.info("gateway {} holds the write lease of {} with epoch {}", gateway, volume, epoch);
        return epoch;
    }

    private void renew() {
        long held;
        synchronized (this) {
            if (state != State.HELD || closed) {
                return;
            }
            held = epoch;
        }
        namenode.lease(volume, gateway, held).whenComplete((lease, err) -> {
            if (err == null) {
                return;
            }
            Throwable t = NamenodeClient.unwrap(err);
            if (t instanceof NamenodeException ne && "LEASE_LOST".equals(ne.code())) {
                lose("the namenode moved the lease: " + ne.getMessage());
            } else {
                LOG.debug("renewing the lease of {}: {}", volume, t.toString());
            }
        });
    }

    /**
     * The volume's current epoch as the namenode knows it, without taking the lease: what a
     * gateway that only reads puts in its requests (0 when the lease was never taken).
     */
    public CompletableFuture<Long> refreshKnownEpoch() {
        return namenode.currentLease(volume).thenApply(LeaseInfo::epoch);
    }

    /** Marks the lease lost (a storage server rejected our epoch, or the namenode moved it). */
    public void lose(String reason) {
        synchronized (this) {
            if (state == State.LOST) {
                return;
            }
            state = State.LOST;
            lostReason = reason;
            if (renewal != null) {
                renewal.cancel(false);
            }
        }
        LOG.warn("gateway {} lost the write lease of {}: {}", gateway, volume, reason);
        onLost.accept(reason);
    }

    public synchronized State state() {
        return state;
    }

    /** The epoch held (0 before the lease was taken). */
    public synchronized long epoch() {
        return epoch;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (renewal != null) {
            renewal.cancel(false);
        }
    }

    /** The lease is gone: this volume may not write any more. */
    public static final class LeaseLostException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public LeaseLostException(String reason) {
            super("write lease lost: " + reason);
        }
    }
}
