package io.fastblock.namenode;

import io.fastblock.namenode.layers.LayerReclaimer;
import io.fastblock.namenode.layers.LayerSealer;
import io.fastblock.namenode.meta.GroupStore;
import java.time.Duration;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.placement.GroupFormation;
import io.fastblock.namenode.repair.ChainRepair;
import java.util.ArrayDeque;
import java.util.Deque;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The services only the leading namenode runs, because they change metadata on their own
 * initiative: group formation, chain repair and the reclaim of freed layers. Started when leadership is won, closed (in
 * reverse order) when it is lost.
 */
final class LeaderServices implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderServices.class);
    private final Deque<AutoCloseable> running;

    private LeaderServices(Deque<AutoCloseable> running) {
        this.running = running;
    }

    /** How often the reclaimer looks for space to give back (deleted volumes and snapshots, reverts). */
    private static final Duration RECLAIM_EVERY = Duration.ofSeconds(2);
    private static final Duration STORAGE_TIMEOUT = Duration.ofSeconds(10);

    static LeaderServices start(CuratorFramework zk, GroupStore groups, NodeStore nodes, NameNodeConfig config,
                                LayerSealer sealer) {
        Deque<AutoCloseable> running = new ArrayDeque<>();
        GroupFormation formation = new GroupFormation(zk, groups, nodes, config.formationSettle());
        formation.start();
        running.push(formation);
        ChainRepair repair = new ChainRepair(zk, groups, nodes, config.maxConcurrentJoins(), config.replaceAfter());
        repair.start();
        running.push(repair);
        LayerReclaimer reclaimer = new LayerReclaimer(zk, groups, nodes, sealer, STORAGE_TIMEOUT);
        reclaimer.start(RECLAIM_EVERY);
        running.push(reclaimer);
        return new LeaderServices(running);
    }

    @Override
    public void close() {
        while (!running.isEmpty()) {
            AutoCloseable c = running.pop();
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("stopping {}: {}", c.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
