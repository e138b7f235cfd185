package io.fastblock.namenode.fencing;

import io.fastblock.namenode.layers.LayerSealer;
import io.fastblock.namenode.layers.StorageFences;
import io.fastblock.namenode.meta.FenceStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a lease move stick on the storage side before the new holder hears of it: the new epoch
 * becomes the floor of the id the volume's writes carry, first in ZooKeeper (for servers that are
 * down, restarting or joining later) and then on every live storage server, each of which must
 * confirm with FENCE. Once this returns, no write with an older epoch can still be acknowledged
 * anywhere, so the old holder's next write is refused and no reader sees its late data over the
 * new holder's.
 */
public final class LeaseFencing {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseFencing.class);

    private final FenceStore floors;
    private final StorageFences servers;

    public LeaseFencing(FenceStore floors, StorageFences servers) {
        this.floors = floors;
        this.servers = servers;
    }

    /**
     * Raises {@code writeId}'s floor to {@code epoch} in ZooKeeper, then on every live storage server.
     *
     * @throws FenceIncompleteException when a live server did not confirm (the caller asks again:
     *                                  fencing again at the same epoch is harmless)
     */
    public void fence(long writeId, long epoch) {
        long floor = floors.raise(writeId, epoch);
        try {
            servers.fence(writeId, epoch);
        } catch (LayerSealer.SealIncompleteException e) {
            throw new FenceIncompleteException(writeId, epoch, e.getMessage());
        }
        LOG.info("write id {} fenced at epoch {} (floor {}) on every live storage server", writeId, epoch, floor);
    }
}
