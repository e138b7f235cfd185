package io.fastblock.storage.chain;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/** What every {@link GroupReplica} of a node shares. */
record ReplicaContext(String nodeId, GroupLookup groups, Downstream downstream, ReplicaStorage storage,
                      GroupChunks chunks, ChainMetrics metrics, SequenceClock clock, EpochFence fence,
                      ChainLimits limits, ScheduledExecutorService scheduler, Executor blocking) {
}
