package io.fastblock.protocol.meta;

/**
 * A volume's write lease: {@code holder} (a gateway id) may write the volume with {@code epoch}
 * until {@code expiresAtMillis} (epoch milliseconds, namenode clock). The epoch only grows: it is
 * raised each time the lease passes to another gateway, and storage servers reject writes carrying
 * an epoch lower than the volume's current one. Stored at {@link ZkPaths#lease(long)} under the
 * volume's numeric id, the id storage servers see in every request.
 */
public record LeaseRecord(long volumeId, String volume, String holder, long epoch, long expiresAtMillis) {
    public boolean expired(long nowMillis) {
        return nowMillis >= expiresAtMillis;
    }
}
