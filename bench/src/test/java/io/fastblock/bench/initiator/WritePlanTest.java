package io.fastblock.bench.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class WritePlanTest {
    static SessionParams params(boolean initialR2T, boolean immediate, int firstBurst, int maxBurst, int xmit) {
        return new SessionParams(initialR2T, immediate, firstBurst, maxBurst, xmit, 262144, 1);
    }

    @Test
    void smallWriteGoesEntirelyAsImmediateData() {
        WritePlan p = new WritePlan(4096, params(false, true, 262144, 1 << 20, 262144));
        assertEquals(4096, p.immediateLength());
        assertEquals(4096, p.unsolicitedEnd());
        assertEquals(0, p.solicitedLength());
    }

    @Test
    void largeWriteImmediateThenUnsolicitedThenR2T() {
        // tgt-like segment size: 8 KiB PDUs, 64 KiB first burst, 1 MiB write
        WritePlan p = new WritePlan(1 << 20, params(false, true, 65536, 262144, 8192));
        assertEquals(8192, p.immediateLength());
        assertEquals(65536, p.unsolicitedEnd());
        assertEquals((1 << 20) - 65536, p.solicitedLength());
        assertEquals(7, p.pduCount(65536 - 8192));
        assertEquals(8192, p.pduLength(65536 - 8192, 6));
        assertNull(p.checkR2T(65536, 262144));
        assertEquals("R2T offset 8192 inside the unsolicited data (ends at 65536)", p.checkR2T(8192, 4096));
        assertEquals("R2T asks for 524288 bytes, more than MaxBurstLength 262144", p.checkR2T(65536, 524288));
        assertEquals("R2T range 1040384+16384 beyond the transfer length 1048576", p.checkR2T(1040384, 16384));
        assertEquals("R2T asks for 0 bytes", p.checkR2T(65536, 0));
    }

    @Test
    void initialR2TYesLimitsUnsolicitedDataToTheImmediatePart() {
        WritePlan p = new WritePlan(100_000, params(true, true, 65536, 262144, 8192));
        assertEquals(8192, p.immediateLength());
        assertEquals(8192, p.unsolicitedEnd());
        WritePlan none = new WritePlan(100_000, params(true, false, 65536, 262144, 8192));
        assertEquals(0, none.immediateLength());
        assertEquals(0, none.unsolicitedEnd());
        assertNull(none.checkR2T(0, 100_000));
    }

    @Test
    void lastPduOfASequenceCarriesTheRemainder() {
        WritePlan p = new WritePlan(20_000, params(true, false, 65536, 262144, 8192));
        assertEquals(3, p.pduCount(20_000));
        assertEquals(8192, p.pduLength(20_000, 0));
        assertEquals(20_000 - 16384, p.pduLength(20_000, 2));
    }

    @Test
    void dataInMustArriveInOrderAndWithinTheTransfer() {
        DataInTracker t = new DataInTracker(16384);
        assertNull(t.accept(0, 0, 8192));
        assertEquals("Data-In DataSN 2, expected 1", t.accept(2, 8192, 8192));
        assertEquals("Data-In offset 4096, expected 8192", t.accept(1, 4096, 8192));
        assertEquals("Data-In 8192+12288 beyond the transfer length 16384", t.accept(1, 8192, 12288));
        assertNull(t.accept(1, 8192, 8192));
        assertEquals(16384, t.received());
    }

    @Test
    void negotiationResultFollowsTheTargetsAnswers() {
        SessionParams tgtDefaults = OperationalKeys.resolve(java.util.Map.of("InitialR2T", "Yes", "ImmediateData", "Yes",
                "MaxBurstLength", "262144", "FirstBurstLength", "65536", "MaxRecvDataSegmentLength", "8192",
                "HeaderDigest", "None", "DataDigest", "None", "ErrorRecoveryLevel", "0"));
        assertEquals(new SessionParams(true, true, 65536, 262144, 8192, 262144, 1), tgtDefaults);
        SessionParams ours = OperationalKeys.resolve(java.util.Map.of("InitialR2T", "No", "ImmediateData", "Yes",
                "MaxBurstLength", "1048576", "FirstBurstLength", "262144", "MaxRecvDataSegmentLength", "262144"));
        assertEquals(new SessionParams(false, true, 262144, 1048576, 262144, 262144, 1), ours);
        // nothing answered: RFC defaults
        assertEquals(SessionParams.rfcDefaults(262144), OperationalKeys.resolve(java.util.Map.of()));
        assertEquals("MaxBurstLength=2097152 outside 512..1048576", org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> OperationalKeys.resolve(java.util.Map.of("MaxBurstLength",
                        "2097152"))).getMessage());
        assertEquals("HeaderDigest=CRC32C answered, but we offered only None", org.junit.jupiter.api.Assertions
                .assertThrows(IllegalArgumentException.class, () -> OperationalKeys.resolve(java.util.Map.of(
                        "HeaderDigest", "CRC32C"))).getMessage());
    }

    @Test
    void chapResponseIsTheDigestOfIdentifierSecretAndChallenge() throws Exception {
        // MD5(0x01 || "secret" || 0x0a0b0c) computed independently of the responder
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("MD5");
        md.update(new byte[] {1});
        md.update("secret".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        md.update(new byte[] {10, 11, 12});
        String want = "0x" + java.util.HexFormat.of().formatHex(md.digest());
        assertEquals(want, ChapResponder.response("5", "1", "0x0a0b0c", "secret"));
        assertEquals(want, ChapResponder.response("5", "1", "0bCgsM", "secret"));
        assertEquals(66, ChapResponder.response("7", "200", "0x00", "s").length());
        assertEquals("target chose CHAP_A=8, we offered 7,6,5", org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> ChapResponder.response("8", "1", "0x00", "s")).getMessage());
    }
}
