package io.fastblock.namenode.ha;

import io.fastblock.namenode.api.LeaderView;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election among namenodes: a Curator {@link LeaderLatch} under
 * {@link ZkPaths#NAMENODE_LEADER} whose participant id is the namenode's advertised URL, so a
 * standby knows where to send clients. While this namenode leads, the leader-only services
 * (group formation, chain repair) run; they are stopped the moment leadership is lost (Curator
 * reports a suspended or lost ZooKeeper connection as lost leadership).
 *
 * <p>The latch's callbacks run on a thread of their own, never on ZooKeeper's event thread: starting
 * and stopping the services waits for locks and threads that may themselves wait for a ZooKeeper
 * answer, and every asynchronous answer (and watch) of this namenode is delivered by that one event
 * thread. A chunk allocation holding the placement lock while its batched reads waited for the
 * event thread, which waited for that lock to forget the counts on winning leadership, stalled
 * every read of the namenode for the reads' 30 s timeout.
 */
public final class Leadership implements LeaderView, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

    private final LeaderLatch latch;
    private final String myUrl;
    private final Supplier<AutoCloseable> leaderServices;
    private final ExecutorService callbacks = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "leadership");
        t.setDaemon(true);
        return t;
    });
    private AutoCloseable running;
    private boolean closed;

    /**
     * @param leaderServices starts the services only the leader runs; called each time leadership is won,
     *                       and what it returns is closed when leadership is lost
     */
    public Leadership(CuratorFramework zk, String myUrl, Supplier<AutoCloseable> leaderServices) {
        this.myUrl = myUrl;
        this.leaderServices = leaderServices;
        this.latch = new LeaderLatch(zk, ZkPaths.NAMENODE_LEADER, myUrl, LeaderLatch.CloseMode.NOTIFY_LEADER);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                onLeader();
            }

            @Override
            public void notLeader() {
                onStandby();
            }
        }, callbacks);
    }

    public void start() throws Exception {
        latch.start();
    }

    private synchronized void onLeader() {
        if (closed) {
            return; // a callback queued before close: this namenode is leaving
        }
        LOG.info("namenode {} is the leader", myUrl);
        if (running == null) {
            try {
                running = leaderServices.get();
            } catch (RuntimeException e) {
                LOG.error("starting leader services failed; giving up leadership", e);
                restartElection();
            }
        }
    }

    private synchronized void onStandby() {
        LOG.info("namenode {} is not the leader", myUrl);
        stopServices();
    }

    private void stopServices() {
        if (running != null) {
            try {
                running.close();
            } catch (Exception e) {
                LOG.warn("stopping leader services: {}", e.toString());
            }
            running = null;
        }
    }

    private void restartElection() {
        Thread t = new Thread(() -> {
            try {
                latch.close();
            } catch (IOException e) {
                LOG.warn("leaving the election: {}", e.toString());
            }
        }, "leadership-abdicate");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public boolean isLeader() {
        return latch.hasLeadership();
    }

    /**
     * The leader's URL. A leader entry with this namenode's own URL while this namenode does not
     * lead is the latch node of a predecessor that crashed (same address, session not yet expired):
     * no leader is known until ZooKeeper expires it, rather than a redirect to ourselves.
     */
    @Override
    public Optional<String> leaderUrl() {
        try {
            Participant p = latch.getLeader();
            if (!p.isLeader() || p.getId().isEmpty()) {
                return Optional.empty();
            }
            if (p.getId().equals(myUrl) && !latch.hasLeadership()) {
                return Optional.empty();
            }
            return Optional.of(p.getId());
        } catch (Exception e) {
            return Optional.empty(); // ZooKeeper unreachable: no leader known
        }
    }

    public String myUrl() {
        return myUrl;
    }

    @Override
    public void close() {
        try {
            latch.close();
        } catch (IOException | IllegalStateException e) {
            LOG.debug("closing leader latch: {}", e.toString());
        }
        synchronized (this) {
            closed = true;
            stopServices();
        }
        callbacks.shutdown();
        try {
            callbacks.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
