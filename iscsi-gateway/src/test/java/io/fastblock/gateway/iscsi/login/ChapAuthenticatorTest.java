package io.fastblock.gateway.iscsi.login;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.iscsi.TargetAccess;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChapAuthenticatorTest {
    static final TargetAccess.Chap ONE_WAY = TargetAccess.Chap.oneWay("alice", "alice-secret-12");
    static final TargetAccess.Chap MUTUAL = new TargetAccess.Chap("alice", "alice-secret-12", "target", "target-secret-1");

    static Map<String, String> map(List<Map.Entry<String, String>> l) {
        return l.stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /** The initiator's side computed here, independently of the class under test. */
    static byte[] response(String alg, int id, String secret, byte[] challenge) throws Exception {
        MessageDigest md = MessageDigest.getInstance(alg);
        md.update((byte) id);
        md.update(secret.getBytes(StandardCharsets.UTF_8));
        md.update(challenge);
        return md.digest();
    }

    static String hex(byte[] b) {
        return "0x" + HexFormat.of().formatHex(b);
    }

    @ParameterizedTest(name = "CHAP_A={0} -> {1} ({2})")
    @CsvSource({"5,5,MD5", "'7,6,5',7,SHA-256", "'6,5',6,SHA-1", "'9,8,5',8,SHA3-256"})
    void rightSecretAuthenticatesWithEachAlgorithm(String offer, String chosen, String alg) throws Exception {
        ChapAuthenticator a = new ChapAuthenticator(ONE_WAY, new SecureRandom());
        Map<String, String> c = map(a.offerChallenge(offer));
        assertEquals(chosen, c.get("CHAP_A"));
        byte[] challenge = HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
        assertTrue(challenge.length >= 16, "challenge of at least 16 bytes");
        int id = Integer.parseInt(c.get("CHAP_I"));
        assertTrue(a.verify("alice", hex(response(alg, id, "alice-secret-12", challenge)), null, null).isEmpty());
        assertTrue(a.done());
    }

    @Test
    void wrongSecretUserOrLengthFails() throws Exception {
        for (String[] attempt : new String[][] {{"alice", "wrong"}, {"bob", "alice-secret-12"}}) {
            ChapAuthenticator a = new ChapAuthenticator(ONE_WAY, new SecureRandom());
            Map<String, String> c = map(a.offerChallenge("5"));
            byte[] challenge = HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
            byte[] r = response("MD5", Integer.parseInt(c.get("CHAP_I")), attempt[1], challenge);
            assertThrows(ChapAuthenticator.ChapFailure.class, () -> a.verify(attempt[0], hex(r), null, null));
            assertFalse(a.done());
        }
        ChapAuthenticator a = new ChapAuthenticator(ONE_WAY, new SecureRandom());
        a.offerChallenge("5");
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> a.verify("alice", "0x0102", null, null));
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> a.verify("alice", "zz", null, null));
    }

    @Test
    void base64ResponseIsAccepted() throws Exception {
        ChapAuthenticator a = new ChapAuthenticator(ONE_WAY, new SecureRandom());
        Map<String, String> c = map(a.offerChallenge("5"));
        byte[] challenge = HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
        byte[] r = response("MD5", Integer.parseInt(c.get("CHAP_I")), "alice-secret-12", challenge);
        a.verify("alice", "0b" + Base64.getEncoder().encodeToString(r), null, null);
        assertTrue(a.done());
    }

    @Test
    void unsupportedAlgorithmsFail() {
        ChapAuthenticator a = new ChapAuthenticator(ONE_WAY, new SecureRandom());
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> a.offerChallenge("1,2,128"));
    }

    @Test
    void everyLoginGetsAFreshChallenge() throws Exception {
        String c1 = map(new ChapAuthenticator(ONE_WAY, new SecureRandom()).offerChallenge("5")).get("CHAP_C");
        String c2 = map(new ChapAuthenticator(ONE_WAY, new SecureRandom()).offerChallenge("5")).get("CHAP_C");
        assertNotEquals(c1, c2);
    }

    @Test
    void mutualChapAnswersTheInitiatorsChallenge() throws Exception {
        ChapAuthenticator a = new ChapAuthenticator(MUTUAL, new SecureRandom());
        Map<String, String> c = map(a.offerChallenge("5"));
        byte[] challenge = HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
        byte[] r = response("MD5", Integer.parseInt(c.get("CHAP_I")), "alice-secret-12", challenge);
        byte[] mine = new byte[16];
        new SecureRandom().nextBytes(mine);
        Map<String, String> back = map(a.verify("alice", hex(r), "77", hex(mine)));
        assertEquals("target", back.get("CHAP_N"));
        assertArrayEquals(response("MD5", 77, "target-secret-1", mine),
                HexFormat.of().parseHex(back.get("CHAP_R").substring(2)));
    }

    @Test
    void mutualRefusesReflectionSameSecretsAndMissingConfig() throws Exception {
        // reflection: the initiator sends our own challenge back
        ChapAuthenticator a = new ChapAuthenticator(MUTUAL, new SecureRandom());
        Map<String, String> c = map(a.offerChallenge("5"));
        byte[] challenge = HexFormat.of().parseHex(c.get("CHAP_C").substring(2));
        byte[] r = response("MD5", Integer.parseInt(c.get("CHAP_I")), "alice-secret-12", challenge);
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> a.verify("alice", hex(r), "1", c.get("CHAP_C")));

        // the same secret configured in both directions
        TargetAccess.Chap same = new TargetAccess.Chap("alice", "alice-secret-12", "target", "alice-secret-12");
        ChapAuthenticator b = new ChapAuthenticator(same, new SecureRandom());
        Map<String, String> cb = map(b.offerChallenge("5"));
        byte[] rb = response("MD5", Integer.parseInt(cb.get("CHAP_I")), "alice-secret-12",
                HexFormat.of().parseHex(cb.get("CHAP_C").substring(2)));
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> b.verify("alice", hex(rb), "1", "0x0102030405060708"));

        // mutual asked for but only one-way configured
        ChapAuthenticator d = new ChapAuthenticator(ONE_WAY, new SecureRandom());
        Map<String, String> cd = map(d.offerChallenge("5"));
        byte[] rd = response("MD5", Integer.parseInt(cd.get("CHAP_I")), "alice-secret-12",
                HexFormat.of().parseHex(cd.get("CHAP_C").substring(2)));
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> d.verify("alice", hex(rd), "1", "0x0102030405060708"));
    }

    @Test
    void binaryDecoding() throws Exception {
        assertArrayEquals(new byte[] {0x0a, (byte) 0xbc}, ChapAuthenticator.decode("0xabc"));
        assertArrayEquals(new byte[] {1, 2, 3}, ChapAuthenticator.decode("0bAQID"));
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> ChapAuthenticator.decode("0q12"));
        assertThrows(ChapAuthenticator.ChapFailure.class, () -> ChapAuthenticator.decode("0bA*"));
    }
}
