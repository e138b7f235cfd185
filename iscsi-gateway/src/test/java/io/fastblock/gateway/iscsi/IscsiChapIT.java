package io.fastblock.gateway.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.IscsiToolsIT.Result;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CHAP (one-way, mutual) and access rules, checked with libiscsi's own initiator. */
class IscsiChapIT {
    static final String INITIATOR = "iqn.2026-11.io.fastblock:test-initiator";
    static final String IQN_OPEN = "iqn.2026-11.io.fastblock:openvol";
    static final String IQN_CHAP = "iqn.2026-11.io.fastblock:chapvol";
    static final String IQN_MUTUAL = "iqn.2026-11.io.fastblock:mutualvol";
    static final String IQN_HIDDEN = "iqn.2026-11.io.fastblock:hiddenvol";

    @TempDir
    static Path dir;
    static IscsiServer server;

    @BeforeAll
    static void start() throws Exception {
        FileTargetCatalog catalog = new FileTargetCatalog(Map.of(IQN_OPEN, dir.resolve("open.img"),
                IQN_CHAP, dir.resolve("chap.img"), IQN_MUTUAL, dir.resolve("mutual.img"),
                IQN_HIDDEN, dir.resolve("hidden.img")), 1 << 20);
        catalog.rules.put(IQN_CHAP, TargetAccess.chap(TargetAccess.Chap.oneWay("alice", "alice-secret-12")));
        catalog.rules.put(IQN_MUTUAL, TargetAccess.chap(
                new TargetAccess.Chap("bob", "bob-secret-1234", "tgtuser", "target-secret-99")));
        catalog.rules.put(IQN_HIDDEN, TargetAccess.DENIED);
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0"), catalog).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String url(String credentials, String iqn) {
        return "iscsi://" + credentials + "127.0.0.1:" + server.port() + "/" + iqn + "/0";
    }

    @Test
    void rightSecretLogsInWrongOrNoneIsAuthenticationFailure() throws Exception {
        Result ok = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, url("alice%alice-secret-12@", IQN_CHAP));
        assertEquals(0, ok.exit(), ok.output());
        assertTrue(ok.output().contains("Vendor:FASTBLK"), ok.output());
        Result wrong = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, url("alice%not-the-secret@", IQN_CHAP));
        assertNotEquals(0, wrong.exit(), wrong.output());
        assertTrue(wrong.output().contains("Authentication failure"), wrong.output());
        Result none = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, url("", IQN_CHAP));
        assertNotEquals(0, none.exit(), none.output());
        assertTrue(none.output().contains("Authentication failure"), none.output());
    }

    @Test
    void mutualChapWorksAndAWrongTargetSecretIsDetectedByTheInitiator() throws Exception {
        String u = url("bob%bob-secret-1234@", IQN_MUTUAL);
        Result ok = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, u + "?target_user=tgtuser&target_password=target-secret-99");
        assertEquals(0, ok.exit(), ok.output());
        assertTrue(ok.output().contains("Vendor:FASTBLK"), ok.output());
        Result bad = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, u + "?target_user=tgtuser&target_password=other-secret-9");
        assertNotEquals(0, bad.exit(), bad.output());
        assertTrue(bad.output().contains("Invalid CHAP_R response from the target"), bad.output());
    }

    @Test
    void sendTargetsListsOnlyTargetsExportedToTheInitiator() throws Exception {
        Result r = IscsiToolsIT.run("iscsi-ls", "-i", INITIATOR, "iscsi://127.0.0.1:" + server.port());
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Target:" + IQN_OPEN), r.output());
        assertTrue(r.output().contains("Target:" + IQN_CHAP), r.output());
        assertFalse(r.output().contains(IQN_HIDDEN), r.output());
        Result login = IscsiToolsIT.run("iscsi-inq", "-i", INITIATOR, url("", IQN_HIDDEN));
        assertNotEquals(0, login.exit(), login.output());
        assertTrue(login.output().contains("Authorization failure"), login.output());
    }
}
