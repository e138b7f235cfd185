package io.fastblock.namenode.placement;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * The initial replication groups for a set of nodes: with the nodes sorted by id n0..n(k-1), group i
 * (id i+1) is the chain [n_i, n_(i+1)%k, n_(i+2)%k]. Every node is then head of one group, middle
 * of another and tail of a third, so the log-structured tail work and the in-place head/middle work
 * are spread evenly over the nodes.
 */
public final class GroupLayout {
    public static final int REPLICAS = 3;
    public static final long INITIAL_CHAIN_VERSION = 1;

    private GroupLayout() {
    }

    /** Groups for {@code nodeIds} (any order); empty when fewer than {@link #REPLICAS} nodes are given. */
    public static List<GroupRecord> rotate(List<String> nodeIds) {
        List<String> nodes = new ArrayList<>(nodeIds);
        nodes.sort(null);
        int k = nodes.size();
        if (k < REPLICAS) {
            return List.of();
        }
        List<GroupRecord> groups = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            List<String> chain = new ArrayList<>(REPLICAS);
            for (int r = 0; r < REPLICAS; r++) {
                chain.add(nodes.get((i + r) % k));
            }
            groups.add(new GroupRecord(i + 1, INITIAL_CHAIN_VERSION, chain));
        }
        return groups;
    }
}
