package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.concurrent.CompletableFuture;

/** Where a replica learns group membership: a cache plus an authoritative re-read. */
public interface GroupLookup {
    /** The cached record, or null if none is cached. Never blocks. */
    GroupRecord cached(int groupId);

    /** Reads the current record from the source of truth; completes with null if the group does not exist. */
    CompletableFuture<GroupRecord> refresh(int groupId);
}
