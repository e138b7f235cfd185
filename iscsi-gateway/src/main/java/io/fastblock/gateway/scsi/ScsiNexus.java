package io.fastblock.gateway.scsi;

/**
 * Per I_T nexus state (one per iSCSI session): the pending unit attention that SAM requires
 * after a new nexus or a reset. Accessed only from the session's event loop.
 */
public final class ScsiNexus {
    private Sense pendingUnitAttention = Sense.POWER_ON_RESET;

    public Sense pendingUnitAttention() {
        return pendingUnitAttention;
    }

    public void unitAttention(Sense ua) {
        this.pendingUnitAttention = ua;
    }

    public Sense takeUnitAttention() {
        Sense ua = pendingUnitAttention;
        pendingUnitAttention = null;
        return ua;
    }
}
