package io.fastblock.gateway.iscsi.session;

import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.ScsiCommandHandler;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Open logical units by target name, shared by every session of the portal, with reference
 * counts: a device is closed when the last session using it ends.
 */
public final class LogicalUnits {
    private static final Logger LOG = LoggerFactory.getLogger(LogicalUnits.class);

    private final Map<String, Entry> open = new HashMap<>();

    private static final class Entry {
        final ScsiCommandHandler handler;
        int sessions;

        Entry(ScsiCommandHandler handler) {
            this.handler = handler;
        }
    }

    /**
     * A session starts using {@code target}. When the target is already open the existing unit is
     * shared and a different {@code opened} instance is closed.
     */
    public synchronized ScsiCommandHandler acquire(String target, BlockDevice opened) {
        Entry e = open.get(target);
        if (e == null) {
            e = new Entry(new ScsiCommandHandler(opened, target));
            open.put(target, e);
        } else if (e.handler.device() != opened) {
            closeQuietly(opened);
        }
        e.sessions++;
        return e.handler;
    }

    public synchronized void release(String target) {
        Entry e = open.get(target);
        if (e != null && --e.sessions == 0) {
            open.remove(target);
            closeQuietly(e.handler.device());
        }
    }

    /** A device opened for a login that never reached full feature phase. */
    public synchronized void discard(String target, BlockDevice opened) {
        Entry e = open.get(target);
        if (e == null || e.handler.device() != opened) {
            closeQuietly(opened);
        }
    }

    public synchronized int openCount() {
        return open.size();
    }

    private static void closeQuietly(BlockDevice d) {
        try {
            d.close();
        } catch (RuntimeException ex) {
            LOG.warn("closing device {} failed: {}", d.name(), ex.toString());
        }
    }
}
