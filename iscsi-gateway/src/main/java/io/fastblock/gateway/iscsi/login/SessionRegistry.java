package io.fastblock.gateway.iscsi.login;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Live sessions of one portal by TSIH and by identity (initiator, ISID, target), for TSIH
 * allocation and session reinstatement (RFC 7143 section 6.3.5). Shared by all event loops.
 */
public final class SessionRegistry {
    /** Session identity; a new login with the same identity and TSIH 0 replaces the old session. */
    public record Identity(String initiatorName, long isid, String targetName) {
    }

    private final AtomicInteger nextTsih = new AtomicInteger(1);
    private final Map<Integer, Identity> byTsih = new ConcurrentHashMap<>();
    private final Map<Identity, Entry> byIdentity = new ConcurrentHashMap<>();

    private record Entry(int tsih, Runnable closer) {
    }

    public boolean exists(int tsih) {
        return byTsih.containsKey(tsih);
    }

    /**
     * Registers a new session and returns its TSIH; an older session with the same identity is
     * closed first (reinstatement).
     */
    public int register(Identity identity, Runnable closer) {
        int tsih;
        do {
            tsih = nextTsih.getAndIncrement() & 0xffff;
        } while (tsih == 0 || byTsih.containsKey(tsih));
        byTsih.put(tsih, identity);
        Entry old = byIdentity.put(identity, new Entry(tsih, closer));
        if (old != null) {
            byTsih.remove(old.tsih);
            old.closer.run();
        }
        return tsih;
    }

    public void remove(int tsih) {
        Identity id = byTsih.remove(tsih);
        if (id != null) {
            byIdentity.computeIfPresent(id, (k, e) -> e.tsih == tsih ? null : e);
        }
    }

    public int size() {
        return byTsih.size();
    }

    @Override
    public String toString() {
        return "SessionRegistry" + byTsih;
    }
}
