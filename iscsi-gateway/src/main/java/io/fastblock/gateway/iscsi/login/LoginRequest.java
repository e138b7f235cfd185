package io.fastblock.gateway.iscsi.login;

import io.fastblock.gateway.iscsi.pdu.IscsiPdu;
import java.util.Map;

/** The fields of a Login Request PDU that the negotiation looks at. */
public record LoginRequest(boolean transit, boolean cont, int csg, int nsg, int versionMax, int versionMin,
                           long isid, int tsih, int itt, int cid, int cmdSN, int expStatSN,
                           Map<String, String> keys) {

    /** Reads the BHS fields of {@code pdu}; {@code keys} are its already-parsed text keys. */
    public static LoginRequest of(IscsiPdu pdu, Map<String, String> keys) {
        int f = pdu.flags();
        long isid = pdu.bhs().getUnsignedInt(8) << 16 | pdu.bhs().getUnsignedShort(12);
        return new LoginRequest((f & 0x80) != 0, (f & 0x40) != 0, (f >> 2) & 3, f & 3, pdu.byteAt(2),
                pdu.byteAt(3), isid, pdu.bhs().getUnsignedShort(14), pdu.itt(), pdu.bhs().getUnsignedShort(20),
                pdu.cmdSN(), pdu.expStatSN(), keys);
    }
}
