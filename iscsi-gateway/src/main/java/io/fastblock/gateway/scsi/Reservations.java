package io.fastblock.gateway.scsi;

/**
 * Reservation state of one logical unit: the SCSI-2 RESERVE(6) holder and the SPC-4 persistent
 * reservation (registrations, holder, type). Shared by every session on the LU, so synchronized.
 * Kept in the gateway's memory only: it survives sessions and resets as SPC-4 requires, but not a
 * gateway restart or a move of the volume to another gateway (persisting it in the namenode is
 * later work).
 */
final class Reservations {
    private ScsiNexus reserve6Holder;

    synchronized void nexusLost(ScsiNexus nexus) {
        if (reserve6Holder == nexus) {
            reserve6Holder = null;
        }
    }

    synchronized void reset() {
        reserve6Holder = null;
    }
}
