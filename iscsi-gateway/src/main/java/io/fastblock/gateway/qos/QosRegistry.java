package io.fastblock.gateway.qos;

import io.fastblock.protocol.meta.QosSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link VolumeThrottle} per volume open on this gateway, shared by all its sessions, kept up
 * to date by reading the volume's QoS from the namenode every poll period (so a changed limit
 * applies within a period, without a re-login). A namenode that does not answer leaves the last
 * limits in force.
 */
public final class QosRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(QosRegistry.class);

    private final Function<String, CompletableFuture<QosSpec>> source;
    private final ScheduledExecutorService timer;
    private final Duration poll;
    private final Map<String, Shared> volumes = new HashMap<>();

    private static final class Shared {
        final VolumeThrottle throttle;
        int users;
        ScheduledFuture<?> polling;

        Shared(VolumeThrottle throttle) {
            this.throttle = throttle;
        }
    }

    /** {@code source} reads a volume's current limits; it is asked at once and then every {@code poll}. */
    public QosRegistry(Function<String, CompletableFuture<QosSpec>> source, ScheduledExecutorService timer,
                       Duration poll) {
        if (poll.isNegative() || poll.isZero()) {
            throw new IllegalArgumentException("QoS poll period must be positive, got " + poll);
        }
        this.source = source;
        this.timer = timer;
        this.poll = poll;
    }

    /** The volume's throttle, for as long as the returned handle is not closed. */
    public synchronized Handle acquire(String volume) {
        Shared s = volumes.get(volume);
        if (s == null) {
            Shared fresh = new Shared(new VolumeThrottle(timer));
            volumes.put(volume, fresh);
            refresh(volume, fresh.throttle);
            fresh.polling = timer.scheduleWithFixedDelay(() -> refresh(volume, fresh.throttle), poll.toMillis(),
                    poll.toMillis(), TimeUnit.MILLISECONDS);
            s = fresh;
        }
        s.users++;
        return new Handle(volume, s.throttle);
    }

    private synchronized void release(String volume) {
        Shared s = volumes.get(volume);
        if (s != null && --s.users == 0) {
            s.polling.cancel(false);
            volumes.remove(volume);
        }
    }

    /** Volumes with a throttle in use; for tests. */
    public synchronized int size() {
        return volumes.size();
    }

    private void refresh(String volume, VolumeThrottle throttle) {
        CompletableFuture<QosSpec> f;
        try {
            f = source.apply(volume);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((spec, err) -> {
            if (err != null) {
                LOG.debug("QoS of volume {} not refreshed (the last limits stay): {}", volume, err.toString());
                return;
            }
            QosSpec before = throttle.spec();
            throttle.update(spec);
            if (!before.equals(spec)) {
                LOG.info("volume {}: QoS limits now {}", volume, spec);
            }
        });
    }

    /** A user's reference to a volume's throttle. */
    public final class Handle implements AutoCloseable {
        private final String volume;
        private final VolumeThrottle throttle;
        private boolean closed;

        private Handle(String volume, VolumeThrottle throttle) {
            this.volume = volume;
            this.throttle = throttle;
        }

        public VolumeThrottle throttle() {
            return throttle;
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                release(volume);
            }
        }
    }
}
