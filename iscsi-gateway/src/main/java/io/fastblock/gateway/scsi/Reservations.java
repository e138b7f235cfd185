package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reservation state of one logical unit: the SCSI-2 RESERVE(6) holder and the SPC-4 persistent
 * reservation (registrations per I_T nexus, holder, type), with PERSISTENT RESERVE IN/OUT and the
 * conflict rules for every other command. Shared by every session on the LU, so synchronized.
 *
 * <p>Kept in the gateway's memory only: it survives sessions, I_T nexus loss and resets as SPC-4
 * requires, but not a gateway restart or a move of the volume to another gateway. Persisting it
 * in the namenode (and with it APTPL) is later work.
 */
final class Reservations {
    static final int WRITE_EXCLUSIVE = 1;
    static final int EXCLUSIVE_ACCESS = 3;
    static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 5;
    static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 6;
    static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 7;
    static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 8;

    /** How a command interacts with reservations (SPC-4 table 58, simplified to three classes). */
    enum Access {
        /** Allowed whatever the reservation: INQUIRY, REPORT LUNS, TEST UNIT READY, READ CAPACITY... */
        ALWAYS,
        /** Reads medium or state: conflicts under exclusive-access types. */
        READ,
        /** Changes medium or state: conflicts under every type. */
        WRITE
    }

    private final Set<ScsiNexus> attached = ConcurrentHashMap.newKeySet();
    private ScsiNexus reserve6Holder;
    /** Registered key by I_T nexus id ({@link ScsiNexus#toString()}), in registration order. */
    private final Map<String, Long> keys = new LinkedHashMap<>();
    private int generation;
    /** Holder's nexus id; null for no reservation (for all-registrants types: whoever reserved). */
    private String holder;
    private int type;

    void attach(ScsiNexus nexus) {
        attached.add(nexus);
    }

    synchronized void nexusLost(ScsiNexus nexus) {
        attached.remove(nexus);
        if (reserve6Holder == nexus) {
            reserve6Holder = null;
        }
    }

    /** LU reset: SCSI-2 reservations go, persistent ones stay (SPC-4 5.13.11). */
    synchronized void reset() {
        reserve6Holder = null;
    }

    private static boolean allRegistrants(int type) {
        return type == WRITE_EXCLUSIVE_ALL_REGISTRANTS || type == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    private boolean isHolder(String id) {
        return holder != null && (allRegistrants(type) ? keys.containsKey(id) : holder.equals(id));
    }

    /** True when {@code nexus} may not run a command of {@code access} class right now. */
    synchronized boolean conflicts(ScsiNexus nexus, Access access) {
        if (access == Access.ALWAYS) {
            return false;
        }
        if (reserve6Holder != null && reserve6Holder != nexus) {
            return true;
        }
        if (holder == null) {
            return false;
        }
        String id = nexus.toString();
        if (isHolder(id)) {
            return false;
        }
        boolean registered = keys.containsKey(id);
        return switch (type) {
            case WRITE_EXCLUSIVE -> access == Access.WRITE;
            case EXCLUSIVE_ACCESS -> true;
            case WRITE_EXCLUSIVE_REGISTRANTS_ONLY, WRITE_EXCLUSIVE_ALL_REGISTRANTS ->
                    access == Access.WRITE && !registered;
            case EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, EXCLUSIVE_ACCESS_ALL_REGISTRANTS -> !registered;
            default -> false;
        };
    }

    // ---- RESERVE(6) / RELEASE(6) ------------------------------------------------------------

    synchronized ScsiResult reserve6(ScsiNexus nexus) {
        if ((reserve6Holder != null && reserve6Holder != nexus) || holder != null || !keys.isEmpty()) {
            return ScsiResult.conflict();
        }
        reserve6Holder = nexus;
        return ScsiResult.good();
    }

    synchronized ScsiResult release6(ScsiNexus nexus) {
        if (reserve6Holder == nexus) {
            reserve6Holder = null;
        }
        return ScsiResult.good(); // releasing someone else's (or no) reservation is a no-op
    }

    // ---- PERSISTENT RESERVE IN ----------------------------------------------------------------

    synchronized ScsiResult in(ByteBuf cdb, ByteBufAllocator alloc) {
        int sa = cdb.getByte(1) & 0x1f;
        int allocLen = cdb.getUnsignedShort(7);
        ByteBuf out = alloc.buffer(64);
        switch (sa) {
            case 0 -> { // READ KEYS
                out.writeInt(generation).writeInt(keys.size() * 8);
                keys.values().forEach(out::writeLong);
            }
            case 1 -> { // READ RESERVATION
                out.writeInt(generation);
                if (holder == null) {
                    out.writeInt(0);
                } else {
                    out.writeInt(16);
                    // all-registrants types report key 0 (SPC-4 6.15.3.3)
                    out.writeLong(allRegistrants(type) ? 0 : keys.getOrDefault(holder, 0L));
                    out.writeInt(0).writeByte(0).writeByte(type).writeShort(0);
                }
            }
            case 2 -> { // REPORT CAPABILITIES
                out.writeShort(8);
                out.writeByte(0x10 | 0x04); // CRH, ATP_C (one target port per gateway); no SIP_C, no PTPL_C
                out.writeByte(0x80); // TMV: the type mask below is valid
                out.writeByte(0x80 | 0x40 | 0x20 | 0x08 | 0x02); // WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX
                out.writeByte(0x01); // EX_AC_AR
                out.writeShort(0);
            }
            case 3 -> { // READ FULL STATUS
                out.writeInt(generation).writeInt(0);
                for (Map.Entry<String, Long> e : keys.entrySet()) {
                    byte[] tid = transportId(e.getKey());
                    out.writeLong(e.getValue()).writeInt(0);
                    out.writeByte(0x02 | (isHolder(e.getKey()) ? 0x01 : 0)); // ALL_TG_PT, R_HOLDER
                    out.writeByte(isHolder(e.getKey()) ? type : 0);
                    out.writeInt(0).writeShort(1); // RELATIVE TARGET PORT IDENTIFIER
                    out.writeInt(tid.length).writeBytes(tid);
                }
                out.setInt(4, out.readableBytes() - 8);
            }
            default -> {
                out.release();
                return ScsiResult.check(Sense.INVALID_FIELD_IN_CDB);
            }
        }
        if (out.readableBytes() > allocLen) {
            out.writerIndex(allocLen);
        }
        return ScsiResult.good(out);
    }

    /** iSCSI TransportID, format 01 (initiator port: name,i,0xISID), padded to a multiple of 4. */
    private static byte[] transportId(String nexusId) {
        byte[] name = nexusId.getBytes(StandardCharsets.UTF_8);
        int len = Math.max(20, (name.length + 1 + 3) & ~3);
        byte[] t = new byte[4 + len];
        t[0] = 0x45; // FORMAT CODE 01, PROTOCOL IDENTIFIER 5 (iSCSI)
        t[2] = (byte) (len >> 8);
        t[3] = (byte) len;
        System.arraycopy(name, 0, t, 4, name.length);
        return t;
    }

    // ---- PERSISTENT RESERVE OUT ---------------------------------------------------------------

    /** Outcome of PR OUT: the result, and nexuses whose tasks PREEMPT AND ABORT must abort. */
    record OutResult(ScsiResult result, List<ScsiNexus> abortTasksOf) {
        static OutResult of(ScsiResult r) {
            return new OutResult(r, List.of());
        }
    }

    synchronized OutResult out(ByteBuf cdb, ByteBuf params, ScsiNexus nexus) {
        int sa = cdb.getByte(1) & 0x1f;
        int scope = (cdb.getUnsignedByte(2) >> 4) & 0x0f;
        int newType = cdb.getUnsignedByte(2) & 0x0f;
        long listLen = cdb.getUnsignedInt(5);
        if (sa > 6) {
            return OutResult.of(ScsiResult.check(Sense.INVALID_FIELD_IN_CDB)); // REGISTER AND MOVE, unknown
        }
        if (listLen != 24 || params == null || params.readableBytes() < 24) {
            return OutResult.of(ScsiResult.check(Sense.PARAMETER_LIST_LENGTH_ERROR));
        }
        int r = params.readerIndex();
        long key = params.getLong(r);
        long saKey = params.getLong(r + 8);
        int flags = params.getUnsignedByte(r + 20);
        if ((flags & 0x08) != 0 || (flags & 0x01) != 0) {
            // SPEC_I_PT and APTPL are not offered (REPORT CAPABILITIES says so)
            return OutResult.of(ScsiResult.check(Sense.INVALID_FIELD_IN_PARAMETER_LIST));
        }
        boolean usesType = sa == 1 || sa == 2 || sa == 4 || sa == 5;
        if (usesType && (scope != 0 || !validType(newType))) {
            return OutResult.of(ScsiResult.check(Sense.INVALID_FIELD_IN_CDB));
        }
        if (reserve6Holder != null && reserve6Holder != nexus) {
            return OutResult.of(ScsiResult.conflict());
        }
        String id = nexus.toString();
        Long mine = keys.get(id);
        if (sa == 0 || sa == 6) {
            return OutResult.of(register(id, mine, key, saKey, sa == 6));
        }
        if (mine == null || mine != key) {
            return OutResult.of(ScsiResult.conflict());
        }
        return switch (sa) {
            case 1 -> OutResult.of(reserve(id, newType));
            case 2 -> OutResult.of(release(id, newType));
            case 3 -> OutResult.of(clear(id));
            default -> preempt(id, saKey, newType, sa == 5);
        };
    }

    private static boolean validType(int t) {
        return t == 1 || t == 3 || (t >= 5 && t <= 8);
    }

    private ScsiResult register(String id, Long mine, long key, long saKey, boolean ignoreExisting) {
        if (mine == null) {
            if (!ignoreExisting && key != 0) {
                return ScsiResult.conflict();
            }
            if (saKey != 0) {
                keys.put(id, saKey);
                generation++;
            }
            return ScsiResult.good();
        }
        if (!ignoreExisting && mine != key) {
            return ScsiResult.conflict();
        }
        generation++;
        if (saKey != 0) {
            keys.put(id, saKey);
            return ScsiResult.good();
        }
        // unregistering
        boolean wasHolder = isHolder(id);
        keys.remove(id);
        if (wasHolder && (!allRegistrants(type) || keys.isEmpty())) {
            int old = type;
            holder = null;
            type = 0;
            if (old == WRITE_EXCLUSIVE_REGISTRANTS_ONLY || old == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY) {
                unitAttention(keys.keySet(), Sense.RESERVATIONS_RELEASED);
            }
        }
        return ScsiResult.good();
    }

    private ScsiResult reserve(String id, int newType) {
        if (holder == null) {
            holder = id;
            type = newType;
            return ScsiResult.good();
        }
        return isHolder(id) && type == newType ? ScsiResult.good() : ScsiResult.conflict();
    }

    private ScsiResult release(String id, int relType) {
        if (holder == null || !isHolder(id)) {
            return ScsiResult.good();
        }
        if (relType != type) {
            return ScsiResult.check(Sense.INVALID_RELEASE_OF_PERSISTENT_RESERVATION);
        }
        int old = type;
        holder = null;
        type = 0;
        // SPC-4 5.13.11.2.2: registrants learn of it only for the registrants-only and all-registrants types
        if (old != WRITE_EXCLUSIVE && old != EXCLUSIVE_ACCESS) {
            List<String> others = new ArrayList<>(keys.keySet());
            others.remove(id);
            unitAttention(others, Sense.RESERVATIONS_RELEASED);
        }
        return ScsiResult.good();
    }

    private ScsiResult clear(String id) {
        List<String> others = new ArrayList<>(keys.keySet());
        others.remove(id);
        keys.clear();
        holder = null;
        type = 0;
        generation++;
        unitAttention(others, Sense.RESERVATIONS_PREEMPTED);
        return ScsiResult.good();
    }

    private OutResult preempt(String id, long saKey, int newType, boolean abort) {
        List<String> removed = new ArrayList<>();
        if (holder != null && allRegistrants(type) && saKey == 0) {
            // all-registrants reservation: preempting key 0 removes every other registrant
            for (String k : keys.keySet()) {
                if (!k.equals(id)) {
                    removed.add(k);
                }
            }
            removed.forEach(keys::remove);
            holder = id;
            type = newType;
        } else if (holder != null && !allRegistrants(type) && keys.getOrDefault(holder, 0L) == saKey) {
            // preempting the holder: its key's registrations go, the preempter holds the new reservation
            for (Map.Entry<String, Long> e : keys.entrySet()) {
                if (e.getValue() == saKey && !e.getKey().equals(id)) {
                    removed.add(e.getKey());
                }
            }
            removed.forEach(keys::remove);
            holder = id;
            type = newType;
        } else {
            if (saKey == 0) {
                return OutResult.of(ScsiResult.check(Sense.INVALID_FIELD_IN_PARAMETER_LIST));
            }
            for (Map.Entry<String, Long> e : keys.entrySet()) {
                if (e.getValue() == saKey) {
                    removed.add(e.getKey());
                }
            }
            if (removed.isEmpty()) {
                return OutResult.of(ScsiResult.conflict());
            }
            removed.forEach(keys::remove);
            if (holder != null && !keys.containsKey(holder) && !allRegistrants(type)) {
                holder = null;
                type = 0;
            }
        }
        generation++;
        unitAttention(removed, Sense.REGISTRATIONS_PREEMPTED);
        List<ScsiNexus> victims = new ArrayList<>();
        if (abort) {
            for (ScsiNexus n : attached) {
                if (removed.contains(n.toString())) {
                    victims.add(n);
                }
            }
        }
        return new OutResult(ScsiResult.good(), victims);
    }

    /** Queues {@code ua} on every I_T nexus attached to the LU (e.g. CAPACITY DATA HAS CHANGED). */
    void unitAttentionAll(Sense ua) {
        for (ScsiNexus n : attached) {
            n.unitAttention(ua);
        }
    }

    private void unitAttention(java.util.Collection<String> ids, Sense ua) {
        for (ScsiNexus n : attached) {
            if (ids.contains(n.toString())) {
                n.unitAttention(ua);
            }
        }
    }
}
