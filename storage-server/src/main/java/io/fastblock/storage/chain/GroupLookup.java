package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** Where a replica learns group membership: a cache plus an authoritative re-read, and change notices. */
public interface GroupLookup {
    /** The cached record, or null if none is cached. Never blocks. */
    GroupRecord cached(int groupId);

    /** Reads the current record from the source of truth; completes with null if the group does not exist. */
    CompletableFuture<GroupRecord> refresh(int groupId);

    /** Calls {@code listener} (on some background thread) with every group record created or changed. */
    default void listen(Consumer<GroupRecord> listener) {
    }

    /** Announces that {@code nodeId} has caught up as the joining node of the group (the namenode then makes it a member). */
    /**
     * Publishes how far this node's catch-up of a group is ({@link io.fastblock.protocol.meta.CatchUpProgress},
     * read by the namenode for operators); best effort.
     */
    default CompletableFuture<Void> reportProgress(int groupId, String nodeId,
                                                   io.fastblock.protocol.meta.CatchUpProgress progress) {
        return CompletableFuture.completedFuture(null);
    }

    default CompletableFuture<Void> announceCaughtUp(int groupId, String nodeId) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("no place to announce catch-up"));
    }

    /**
     * A stamp of the newest group record known here that changes whenever the record is written
     * again, even with the same content (the znode's data version); -1 when unknown.
     */
    default long stamp(int groupId) {
        return -1;
    }

    /**
     * Announces the catch-up only if the group record has not been written since {@code stamp}
     * (atomically with the announcement); completes with false, announcing nothing, if it was.
     * A record rewritten with the same content may hide that the joining node was dropped and
     * named again meanwhile, and with it a time in which the tail did not forward writes to it.
     */
    default CompletableFuture<Boolean> announceCaughtUp(int groupId, String nodeId, long stamp) {
        return announceCaughtUp(groupId, nodeId).thenApply(v -> true);
    }
}
