package io.fastblock.gateway.iscsi.session;

import io.fastblock.gateway.iscsi.IscsiSettings;
import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.iscsi.login.SessionRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What every connection of one iSCSI portal shares: the catalog, the session registry, the open
 * logical units, settings, the budget of command data, and the live connections (so one session's LUN reset can reach the
 * others, and a shutdown can ask every initiator to log out). Thread-safe.
 */
public final class Portal {
    final TargetCatalog catalog;
    final SessionRegistry registry;
    final LogicalUnits units;
    final Supplier<String> address;
    final int queueDepth;
    final IscsiSettings settings;
    final DataBudget dataBudget;
    private final Set<IscsiConnectionHandler> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger headerDigestSessions = new AtomicInteger();
    private final java.util.concurrent.atomic.LongAdder pdusReceived = new java.util.concurrent.atomic.LongAdder();

    public Portal(TargetCatalog catalog, SessionRegistry registry, LogicalUnits units, Supplier<String> address,
                  int queueDepth, IscsiSettings settings, DataBudget dataBudget) {
        this.catalog = catalog;
        this.registry = registry;
        this.units = units;
        this.address = address;
        this.queueDepth = queueDepth;
        this.settings = settings;
        this.dataBudget = dataBudget;
    }

    void joined(IscsiConnectionHandler c) {
        connections.add(c);
    }

    void left(IscsiConnectionHandler c) {
        connections.remove(c);
    }

    /** Connections in the full feature phase of a normal session on {@code target}. */
    List<IscsiConnectionHandler> sessionsOn(String target) {
        return connections.stream().filter(c -> target.equals(c.target())).toList();
    }

    public List<IscsiConnectionHandler> connections() {
        return List.copyOf(connections);
    }

    public DataBudget dataBudget() {
        return dataBudget;
    }

    void countPdu() {
        pdusReceived.increment();
    }

    /** PDUs decoded from all connections since the portal started. */
    public long pdusReceived() {
        return pdusReceived.sum();
    }

    void countHeaderDigestSession() {
        headerDigestSessions.incrementAndGet();
    }

    /** Sessions that negotiated CRC32C header digests since the portal started. */
    public int headerDigestSessions() {
        return headerDigestSessions.get();
    }
}
