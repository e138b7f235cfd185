package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.LeaseRecord;

/** A renewal by a gateway that no longer holds the lease (it moved to another gateway). */
public class LeaseLostException extends RuntimeException {
    public LeaseLostException(String volume, String gateway, long epoch, LeaseRecord current) {
        super("gateway '" + gateway + "' no longer holds the lease of volume '" + volume + "' with epoch " + epoch
                + (current == null ? ": there is no lease"
                        : ": it is held by '" + current.holder() + "' with epoch " + current.epoch()));
    }
}
