package io.fastblock.namenode;

import io.fastblock.namenode.meta.GroupStore;
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
 * initiative: group formation and chain repair. Started when leadership is won, closed (in
 * reverse order) when it is lost.
 */
final class LeaderServices implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderServices.class);
    private final Deque<AutoCloseable> running;

    private LeaderServices(Deque<AutoCloseable> running) {
        this.running = running;
    }

    static LeaderServices start(CuratorFramework zk, GroupStore groups, NodeStore nodes, NameNodeConfig config) {
        Deque<AutoCloseable> running = new ArrayDeque<>();
        GroupFormation formation = new GroupFormation(zk, groups, nodes);
        formation.start();
        running.push(formation);
        ChainRepair repair = new ChainRepair(zk, groups, nodes, config.maxConcurrentJoins(), config.rejoinWindow());
        repair.start();
        running.push(repair);
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
