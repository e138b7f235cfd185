package io.fastblock.gateway.iscsi.session;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * A seeded generator of mutated initiator PDUs: starts from a plausible Login, Text, SCSI
 * Command (reads, writes, CAW, UNMAP, PR, INQUIRY... with and without immediate data), Data-Out,
 * NOP-Out, TMF, Logout or SNACK PDU and applies a few random mutations to header fields, the
 * CDB, the text or the data. Most mutations keep the framing intact so that the fuzzing reaches
 * the session logic; a few break it (length, opcode) to exercise the decoder. Same seed, same PDUs.
 */
final class PduFuzzer {
    /** One PDU on the wire: the 48-byte header and its data segment (padding added by the sender). */
    record Wire(byte[] bhs, byte[] data, String kind) {
    }

    private static final int[] CDB_OPCODES = {0x00, 0x03, 0x08, 0x0A, 0x12, 0x16, 0x17, 0x1A, 0x1B, 0x1E, 0x25, 0x28,
        0x2A, 0x2E, 0x2F, 0x34, 0x35, 0x41, 0x42, 0x5A, 0x5E, 0x5F, 0x88, 0x89, 0x8A, 0x8B, 0x8E, 0x8F, 0x90, 0x91,
        0x93, 0x9E, 0xA0, 0xA3, 0xA8, 0xAA, 0xAE, 0xAF, 0x15, 0x55, 0x04, 0x48, 0xFF, 0x9C, 0x83, 0x84};

    private final Random random;
    private final String targetName;
    int itt = 0x10000;
    int cmdSN = 1;

    PduFuzzer(long seed, String targetName) {
        this.random = new Random(seed);
        this.targetName = targetName;
    }

    Random random() {
        return random;
    }

    /**
     * The next PDU. With {@code breakFraming} false the mutations never touch what frames the
     * stream (opcode, AHS length, data length), so the connection lives long enough for the
     * fuzzing to reach deep session states; with true they may.
     */
    Wire next(boolean breakFraming) {
        int pick = random.nextInt(100);
        Wire w;
        if (pick < 47) {
            w = scsi();
        } else if (pick < 63) {
            w = dataOut();
        } else if (pick < 74) {
            w = text();
        } else if (pick < 83) {
            w = nop();
        } else if (pick < 92) {
            w = tmf();
        } else if (pick < 98) {
            w = login();
        } else if (pick < 99 || !breakFraming) {
            w = logout();
        } else {
            w = raw();
        }
        return mutate(w, breakFraming);
    }

    private ByteBuffer header(int opcode, boolean immediate, int flags) {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) (opcode | (immediate ? 0x40 : 0)));
        b.put(1, (byte) flags);
        b.putInt(16, itt++);
        b.putInt(24, random.nextInt(10) == 0 ? random.nextInt() : cmdSN + random.nextInt(3) - 1);
        if (!immediate) {
            cmdSN++;
        }
        return b;
    }

    private Wire scsi() {
        int op = CDB_OPCODES[random.nextInt(CDB_OPCODES.length)];
        boolean write = random.nextBoolean();
        ByteBuffer b = header(0x01, random.nextInt(8) == 0, 0x80 | (write ? 0x20 : 0x40) | random.nextInt(5));
        byte[] cdb = new byte[16];
        random.nextBytes(cdb);
        cdb[0] = (byte) op;
        if (random.nextInt(3) > 0) {
            // mostly small, in-range transfers so that real I/O happens
            for (int i = 1; i < 16; i++) {
                cdb[i] = (byte) (random.nextInt(4) == 0 ? cdb[i] : 0);
            }
            cdb[random.nextInt(4) + 5] = (byte) random.nextInt(8);
        }
        b.put(32, cdb);
        int edtl = random.nextInt(4) == 0 ? random.nextInt() : random.nextInt(16) * 512;
        b.putInt(20, edtl);
        byte[] data = write && random.nextBoolean() ? bytes(random.nextInt(3) * 512 + random.nextInt(2)) : new byte[0];
        return new Wire(b.array(), data, "scsi");
    }

    private Wire dataOut() {
        ByteBuffer b = header(0x05, false, random.nextBoolean() ? 0x80 : 0);
        b.putInt(16, itt - 1 - random.nextInt(4)); // a recent task's tag
        b.putInt(20, random.nextInt(4) == 0 ? -1 : random.nextInt(8));
        b.putInt(36, random.nextInt(3));
        b.putInt(40, random.nextInt(4) * 512);
        b.putInt(24, 0);
        return new Wire(b.array(), bytes(512 * (1 + random.nextInt(2))), "data-out");
    }

    private Wire text() {
        ByteBuffer b = header(0x04, random.nextBoolean(), random.nextBoolean() ? 0x80 : 0xC0);
        b.putInt(20, random.nextInt(5) == 0 ? random.nextInt() : -1);
        String[] bodies = {"SendTargets=All", "SendTargets=", "SendTargets=" + targetName, "X-foo=bar",
            "MaxRecvDataSegmentLength=512", "garbage", "=", "SendTargets=All\0SendTargets=All"};
        return new Wire(b.array(), (bodies[random.nextInt(bodies.length)] + "\0").getBytes(StandardCharsets.UTF_8),
                "text");
    }

    private Wire nop() {
        ByteBuffer b = header(0x00, random.nextBoolean(), 0x80);
        b.putInt(20, random.nextInt(4) == 0 ? random.nextInt() : -1);
        if (random.nextInt(4) == 0) {
            b.putInt(16, -1);
        }
        return new Wire(b.array(), bytes(random.nextInt(64)), "nop");
    }

    private Wire tmf() {
        ByteBuffer b = header(0x02, random.nextBoolean(), 0x80 | random.nextInt(10));
        b.putInt(20, itt - 1 - random.nextInt(8));
        b.putInt(32, cmdSN - random.nextInt(4));
        if (random.nextInt(4) == 0) {
            b.putLong(8, random.nextLong());
        }
        return new Wire(b.array(), new byte[0], "tmf");
    }

    private Wire logout() {
        ByteBuffer b = header(0x06, random.nextBoolean(), 0x80 | random.nextInt(4));
        return new Wire(b.array(), new byte[0], "logout");
    }

    Wire login() {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) 0x43);
        int csg = random.nextInt(2);
        b.put(1, (byte) ((random.nextBoolean() ? 0x80 : 0) | (random.nextInt(6) == 0 ? 0x40 : 0) | csg << 2
                | (csg + 1 + random.nextInt(3)) % 4));
        b.putInt(8, random.nextInt()).putShort(12, (short) random.nextInt());
        b.putInt(16, itt++);
        String[] extra = {"AuthMethod=None", "AuthMethod=CHAP", "CHAP_A=5", "CHAP_N=x\0CHAP_R=0x00",
            "HeaderDigest=CRC32C", "MaxRecvDataSegmentLength=99999999", "SessionType=Discovery", "ErrorRecoveryLevel=7",
            "InitialR2T=Maybe", "MaxBurstLength=0", "FirstBurstLength=1048576"};
        String keys = "InitiatorName=iqn.2026-11.io.fastblock:fuzzer\0TargetName=" + targetName + "\0"
                + extra[random.nextInt(extra.length)] + "\0";
        return new Wire(b.array(), keys.getBytes(StandardCharsets.UTF_8), "login");
    }

    private Wire raw() {
        byte[] h = bytes(48);
        h[0] = (byte) (h[0] & 0x7f);
        h[4] = 0;
        h[5] = 0;
        h[6] = 0;
        h[7] = 0;
        return new Wire(h, new byte[0], "raw");
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** 0 to 3 mutations; each picks a header byte, a field or the data. */
    private Wire mutate(Wire w, boolean breakFraming) {
        byte[] h = w.bhs().clone();
        byte[] d = w.data();
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
            int what = random.nextInt(breakFraming ? 100 : 88);
            if (what < 40) {
                int at = 8 + random.nextInt(40); // LUN, tags, sequence numbers, CDB
                h[at] ^= (byte) (1 << random.nextInt(8));
            } else if (what < 60) {
                h[32 + random.nextInt(16)] = (byte) random.nextInt(256);
            } else if (what < 72) {
                h[1] = (byte) random.nextInt(256);
            } else if (what < 82 && d.length > 0) {
                d = d.clone();
                d[random.nextInt(d.length)] ^= (byte) random.nextInt(256);
            } else if (what < 88) {
                d = bytes(random.nextInt(1024));
            } else if (what < 94) {
                h[0] = (byte) ((h[0] & 0xC0) | random.nextInt(64)); // another opcode (framing may break)
            } else if (what < 97) {
                h[4] = (byte) random.nextInt(4); // AHS that is not there
            } else {
                return new Wire(h, d, w.kind() + "+len"); // declared length differs from the bytes sent
            }
        }
        return new Wire(h, d, w.kind());
    }
}
