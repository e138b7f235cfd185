package io.fastblock.gateway.iscsi.login;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.iscsi.TargetAccess;
import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.gateway.scsi.FileBlockDevice;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LoginNegotiatorTest {
    static final String TARGET = "iqn.2026-11.io.fastblock:vol1";
    static final String INITIATOR = "iqn.2026-11.io.fastblock:test-initiator";

    @TempDir
    Path dir;
    BlockDevice device;
    SessionRegistry registry = new SessionRegistry();
    boolean catalogDown;
    TargetAccess access = TargetAccess.OPEN;
    int opens;

    final TargetCatalog catalog = new TargetCatalog() {
        @Override
        public CompletableFuture<List<String>> targetNames(String initiatorName) {
            return CompletableFuture.completedFuture(List.of(TARGET));
        }

        @Override
        public CompletableFuture<TargetAccess> access(String targetName, String initiatorName) {
            return CompletableFuture.completedFuture(access);
        }

        @Override
        public CompletableFuture<Optional<BlockDevice>> open(String targetName, String initiatorName) {
            opens++;
            if (catalogDown) {
                return CompletableFuture.failedFuture(
                        new DeviceException(DeviceException.Reason.UNAVAILABLE, "namenode down"));
            }
            return CompletableFuture.supplyAsync(() -> targetName.equals(TARGET) ? Optional.of(device) : Optional.empty());
        }
    };

    @BeforeEach
    void open() throws Exception {
        device = new FileBlockDevice(dir.resolve("d.img"), 1 << 20, 1, "vol1");
    }

    static Map<String, String> keys(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static LoginRequest req(int csg, int nsg, boolean transit, Map<String, String> keys) {
        return new LoginRequest(transit, false, csg, nsg, 0, 0, 0x23d000000001L, 0, 1, 0, 1, 0, keys);
    }

    LoginNegotiator negotiator() {
        return new LoginNegotiator(catalog, registry, () -> { });
    }

    static Map<String, String> answers(LoginReply r) {
        return r.keys().stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> b,
                LinkedHashMap::new));
    }

    LoginReply first(LoginNegotiator n, int csg, int nsg, String... extra) {
        Map<String, String> k = keys("InitiatorName", INITIATOR, "TargetName", TARGET, "SessionType", "Normal");
        k.putAll(keys(extra));
        return n.process(req(csg, nsg, true, k)).join();
    }

    @Test
    void normalLoginThroughAllStages() {
        LoginNegotiator n = negotiator();
        LoginReply sec = first(n, 0, 1, "AuthMethod", "None");
        assertFalse(sec.failed());
        assertEquals("None", answers(sec).get("AuthMethod"));
        assertEquals("1", answers(sec).get("TargetPortalGroupTag"), "TPGT in the first response");
        assertTrue(sec.transit());
        assertEquals(1, sec.nsg());
        assertFalse(sec.fullFeature());

        LoginReply op = n.process(req(1, 3, true, keys("HeaderDigest", "None", "MaxRecvDataSegmentLength", "65536"))).join();
        assertFalse(op.failed());
        assertTrue(op.fullFeature());
        assertNotEquals(0, op.tsih());
        assertNull(answers(op).get("TargetPortalGroupTag"), "TPGT only once");
        assertEquals("262144", answers(op).get("MaxRecvDataSegmentLength"));
        assertEquals(65536, n.params().initiatorMaxRecvDataSegmentLength);
        assertSame(device, n.device());
        assertTrue(registry.exists(op.tsih()));
    }

    @ParameterizedTest(name = "{0}={1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        "HeaderDigest|CRC32C,None|CRC32C",
        "HeaderDigest|None,CRC32C|None",
        "HeaderDigest|MD5|Reject",
        "HeaderDigest|None|None",
        "HeaderDigest|CRC32C|CRC32C",
        "DataDigest|None,CRC32C|None",
        "MaxConnections|8|1",
        "InitialR2T|No|No",
        "InitialR2T|Yes|Yes",
        "ImmediateData|Yes|Yes",
        "ImmediateData|No|No",
        "MaxRecvDataSegmentLength|8192|262144",
        "MaxBurstLength|16776192|1048576",
        "MaxBurstLength|65536|65536",
        "FirstBurstLength|262144|262144",
        "FirstBurstLength|4096|4096",
        "FirstBurstLength|16776192|262144",
        "DefaultTime2Wait|0|2",
        "DefaultTime2Wait|10|10",
        "DefaultTime2Retain|0|0",
        "DefaultTime2Retain|60|20",
        "MaxOutstandingR2T|1|1",
        "MaxOutstandingR2T|16|4",
        "DataPDUInOrder|No|Yes",
        "DataSequenceInOrder|Yes|Yes",
        "ErrorRecoveryLevel|2|0",
        "IFMarker|Yes|No",
        "OFMarker|No|No",
        "OFMarkInt|2048~8192|Reject",
        "X-com.example.Foo|bar|NotUnderstood",
        "SomethingNew|1|NotUnderstood",
        "MaxBurstLength|huge|Reject",
        "MaxRecvDataSegmentLength|100|Reject",
        "InitialR2T|Maybe|Reject",
    })
    void operationalKeyResults(String key, String offer, String expected) {
        LoginNegotiator n = negotiator();
        first(n, 0, 1, "AuthMethod", "None");
        LoginReply r = n.process(req(1, 3, true, keys(key, offer))).join();
        assertFalse(r.failed());
        assertEquals(expected, answers(r).get(key));
    }

    @Test
    void negotiatedValuesLandInParams() {
        LoginNegotiator n = negotiator();
        first(n, 1, 3, "InitialR2T", "No", "ImmediateData", "Yes", "MaxBurstLength", "524288",
                "FirstBurstLength", "65536", "MaxOutstandingR2T", "2", "MaxRecvDataSegmentLength", "131072");
        SessionParams p = n.params();
        assertFalse(p.initialR2T);
        assertTrue(p.immediateData);
        assertEquals(524288, p.maxBurstLength);
        assertEquals(65536, p.firstBurstLength);
        assertEquals(2, p.maxOutstandingR2T);
        assertEquals(131072, p.initiatorMaxRecvDataSegmentLength);
    }

    @Test
    void firstBurstNeverExceedsMaxBurst() {
        LoginNegotiator n = negotiator();
        LoginReply r = first(n, 1, 3, "MaxBurstLength", "8192", "FirstBurstLength", "65536");
        assertEquals("8192", answers(r).get("FirstBurstLength"));
        assertEquals(8192, n.params().firstBurstLength);
    }

    @Test
    void unknownTargetIsTargetNotFound() {
        LoginNegotiator n = negotiator();
        LoginReply r = n.process(req(0, 1, true, keys("InitiatorName", INITIATOR, "TargetName",
                "iqn.2026-11.io.fastblock:nope"))).join();
        assertTrue(r.failed());
        assertEquals(0x0203, r.status());
        assertEquals(2, LoginStatus.statusClass(r.status()));
        assertEquals(3, LoginStatus.statusDetail(r.status()));
    }

    @Test
    void missingNamesAreMissingParameter() {
        assertEquals(0x0207, negotiator().process(req(0, 1, true, keys("TargetName", TARGET))).join().status());
        assertEquals(0x0207, negotiator().process(req(0, 1, true, keys("InitiatorName", INITIATOR))).join().status());
    }

    @Test
    void unsupportedVersion() {
        LoginRequest r = new LoginRequest(true, false, 0, 1, 2, 1, 1, 0, 1, 0, 1, 0,
                keys("InitiatorName", INITIATOR, "TargetName", TARGET));
        assertEquals(0x0205, negotiator().process(r).join().status());
    }

    @Test
    void catalogFailureIsServiceUnavailable() {
        catalogDown = true;
        assertEquals(0x0301, first(negotiator(), 0, 1).status());
    }

    @Test
    void unknownTsihIsSessionDoesNotExist() {
        LoginRequest r = new LoginRequest(true, false, 0, 1, 0, 0, 1, 77, 1, 0, 1, 0,
                keys("InitiatorName", INITIATOR, "TargetName", TARGET));
        assertEquals(0x020A, negotiator().process(r).join().status());
    }

    @Test
    void chapOnlyFailsAuthentication() {
        assertEquals(0x0201, first(negotiator(), 0, 1, "AuthMethod", "CHAP").status());
        assertEquals("None", answers(first(negotiator(), 0, 1, "AuthMethod", "CHAP,None")).get("AuthMethod"));
    }

    @Test
    void invalidStageTransitionIsRejected() {
        assertEquals(0x020B, first(negotiator(), 0, 2).status());
        assertEquals(0x020B, first(negotiator(), 3, 3).status());
    }

    @Test
    void discoverySessionNeedsNoTarget() {
        LoginNegotiator n = negotiator();
        LoginReply r = n.process(req(0, 3, true, keys("InitiatorName", INITIATOR, "SessionType", "Discovery",
                "AuthMethod", "None"))).join();
        assertFalse(r.failed());
        assertTrue(r.fullFeature());
        assertTrue(n.discovery());
        assertNull(answers(r).get("TargetPortalGroupTag"));
    }

    @Test
    void unsupportedSessionType() {
        assertEquals(0x0209, negotiator().process(req(0, 1, true,
                keys("InitiatorName", INITIATOR, "SessionType", "Bogus"))).join().status());
    }

    @Test
    void sameIdentityReinstatesTheOldSession() {
        boolean[] closed = {false};
        LoginNegotiator a = new LoginNegotiator(catalog, registry, () -> closed[0] = true);
        int tsihA = first(a, 1, 3).tsih();
        LoginNegotiator b = negotiator();
        int tsihB = first(b, 1, 3).tsih();
        assertTrue(closed[0], "old session closed");
        assertNotEquals(tsihA, tsihB);
        assertFalse(registry.exists(tsihA));
        // a second connection to a live session: MaxConnections=1
        LoginRequest add = new LoginRequest(true, false, 0, 1, 0, 0, 1, tsihB, 1, 1, 1, 0,
                keys("InitiatorName", INITIATOR, "TargetName", TARGET));
        assertEquals(0x0206, negotiator().process(add).join().status());
    }

    @Test
    void chapLoginHoldsTheSecurityStageUntilTheResponseIsRight() throws Exception {
        access = TargetAccess.chap(TargetAccess.Chap.oneWay("alice", "alice-secret-12"));
        LoginNegotiator n = negotiator();
        LoginReply r1 = first(n, 0, 1, "AuthMethod", "CHAP,None");
        assertEquals("CHAP", answers(r1).get("AuthMethod"));
        assertFalse(r1.transit(), "no transit before authentication");
        assertEquals(0, opens, "the device is not opened for an unauthenticated initiator");
        LoginReply r2 = n.process(req(0, 1, false, keys("CHAP_A", "5"))).join();
        Map<String, String> c = answers(r2);
        byte[] challenge = java.util.HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
        byte[] resp = ChapAuthenticatorTest.response("MD5", Integer.parseInt(c.get("CHAP_I")), "alice-secret-12",
                challenge);
        LoginReply r3 = n.process(req(0, 1, true, keys("CHAP_N", "alice", "CHAP_R",
                ChapAuthenticatorTest.hex(resp)))).join();
        assertFalse(r3.failed());
        assertTrue(r3.transit());
        assertEquals(1, opens);
        LoginReply op = n.process(req(1, 3, true, keys("MaxRecvDataSegmentLength", "65536"))).join();
        assertTrue(op.fullFeature());
        assertSame(device, n.device());
    }

    @Test
    void chapRequiredRefusesWrongResponseNoneAndSkippingSecurity() {
        access = TargetAccess.chap(TargetAccess.Chap.oneWay("alice", "alice-secret-12"));
        assertEquals(0x0201, first(negotiator(), 0, 1, "AuthMethod", "None").status());
        assertEquals(0x0201, first(negotiator(), 1, 3, "MaxRecvDataSegmentLength", "65536").status());
        LoginNegotiator n = negotiator();
        first(n, 0, 1, "AuthMethod", "CHAP,None");
        n.process(req(0, 1, false, keys("CHAP_A", "5"))).join();
        LoginReply bad = n.process(req(0, 1, true, keys("CHAP_N", "alice", "CHAP_R",
                "0x00112233445566778899aabbccddeeff"))).join();
        assertEquals(0x0201, bad.status());
        assertEquals(0, opens);
    }

    @Test
    void targetNotExportedToTheInitiatorIsAuthorizationFailure() {
        access = TargetAccess.DENIED;
        assertEquals(0x0202, first(negotiator(), 0, 1, "AuthMethod", "None").status());
        assertEquals(0, opens);
    }
}
