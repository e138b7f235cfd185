package io.fastblock.gateway.iscsi.session;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** A minimal blocking iSCSI initiator for tests: builds PDUs byte by byte, no shared code with the target. */
final class TestInitiator implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    final OutputStream out;
    int cmdSN = 1;
    int expStatSN;
    int itt = 0x100;
    /** CRC32C digests as negotiated; the corrupt flags spoil the next PDU's digest once. */
    boolean headerDigest;
    boolean dataDigest;
    boolean corruptHeaderDigest;
    boolean corruptDataDigest;

    /** A received PDU: its 48-byte header and data segment. */
    record Pdu(ByteBuffer bhs, byte[] data) {
        int opcode() {
            return bhs.get(0) & 0x3f;
        }

        int flags() {
            return bhs.get(1) & 0xff;
        }

        int u8(int i) {
            return bhs.get(i) & 0xff;
        }

        int i32(int i) {
            return bhs.getInt(i);
        }

        Map<String, String> keys() {
            Map<String, String> m = new LinkedHashMap<>();
            for (String kv : new String(data, StandardCharsets.UTF_8).split("\0")) {
                if (!kv.isEmpty()) {
                    int eq = kv.indexOf('=');
                    m.merge(kv.substring(0, eq), kv.substring(eq + 1), (a, b) -> a + "|" + b);
                }
            }
            return m;
        }
    }

    TestInitiator(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(5000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /**
     * A new connection logged in to {@code target} as initiator {@code ...:ini<isid>}, with the
     * power-on unit attention already taken by a TEST UNIT READY.
     */
    static TestInitiator loggedIn(int port, String target, long isid) throws IOException {
        TestInitiator ini = new TestInitiator(port);
        Pdu r = ini.login(keys("InitiatorName", "iqn.2026-11.io.fastblock:ini" + isid, "TargetName", target), 1, 3, true);
        if (r.u8(36) != 0) {
            throw new AssertionError("login refused: status class " + r.u8(36));
        }
        ini.send(ini.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
        if (ini.recv().u8(3) != 0x02) {
            throw new AssertionError("expected the power-on unit attention");
        }
        return ini;
    }

    static byte[] keys(String... kv) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < kv.length; i += 2) {
            b.append(kv[i]).append('=').append(kv[i + 1]).append('\0');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    void send(ByteBuffer bhs, byte[] data) throws IOException {
        bhs.put(4, (byte) 0);
        bhs.put(5, (byte) (data.length >> 16)).put(6, (byte) (data.length >> 8)).put(7, (byte) data.length);
        out.write(bhs.array());
        if (headerDigest) {
            out.write(crc(bhs.array(), 0, corruptHeaderDigest));
            corruptHeaderDigest = false;
        }
        byte[] padded = Arrays.copyOf(data, data.length + (-data.length & 3));
        out.write(padded);
        if (dataDigest && data.length > 0) {
            out.write(crc(padded, 0, corruptDataDigest));
            corruptDataDigest = false;
        }
        out.flush();
    }

    Pdu recv() throws IOException {
        byte[] h = new byte[48];
        in.readFully(h);
        ByteBuffer bhs = ByteBuffer.wrap(h);
        int len = ((h[5] & 0xff) << 16) | ((h[6] & 0xff) << 8) | (h[7] & 0xff);
        byte[] data = new byte[len];
        if (headerDigest) {
            byte[] d = new byte[4];
            in.readFully(d);
            if (!Arrays.equals(d, crc(h, 0, false))) {
                throw new AssertionError("bad header digest from target");
            }
        }
        in.readFully(data);
        byte[] pad = new byte[-len & 3];
        in.readFully(pad);
        if (dataDigest && len > 0) {
            byte[] d = new byte[4];
            in.readFully(d);
            byte[] padded = Arrays.copyOf(data, len + pad.length);
            if (!Arrays.equals(d, crc(padded, 0, false))) {
                throw new AssertionError("bad data digest from target");
            }
        }
        return new Pdu(bhs, data);
    }

    /** CRC32C of {@code b}, little-endian as on the wire; {@code spoil} flips a bit. */
    static byte[] crc(byte[] b, int from, boolean spoil) {
        CRC32C c = new CRC32C();
        c.update(b, from, b.length - from);
        int v = (int) c.getValue() ^ (spoil ? 1 : 0);
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    /** True when nothing arrives within {@code millis}. */
    boolean silentFor(int millis) throws IOException {
        socket.setSoTimeout(millis);
        try {
            in.mark(1);
            int b = in.read();
            if (b < 0) {
                return true;
            }
            throw new AssertionError("unexpected byte from target: " + b);
        } catch (SocketTimeoutException expected) {
            return true;
        } finally {
            socket.setSoTimeout(5000);
        }
    }

    boolean closedByPeer() throws IOException {
        try {
            return in.read() < 0;
        } catch (IOException reset) {
            return true;
        }
    }

    Pdu login(byte[] keys, int csg, int nsg, boolean transit) throws IOException {
        return login(keys, csg, nsg, transit, false);
    }

    Pdu login(byte[] keys, int csg, int nsg, boolean transit, boolean cont) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) 0x43);
        b.put(1, (byte) ((transit ? 0x80 : 0) | (cont ? 0x40 : 0) | csg << 2 | nsg));
        b.putInt(8, 0x80001234).putShort(12, (short) 1); // ISID
        b.putInt(16, itt++);
        b.putInt(24, cmdSN).putInt(28, expStatSN);
        send(b, keys);
        Pdu r = recv();
        expStatSN = r.i32(24) + 1;
        return r;
    }

    ByteBuffer scsi(int flags, long edtl, byte[] cdb, boolean immediate) {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) (0x01 | (immediate ? 0x40 : 0)));
        b.put(1, (byte) flags);
        b.putInt(16, itt++);
        b.putInt(20, (int) edtl);
        b.putInt(24, immediate ? cmdSN : cmdSN++);
        b.putInt(28, expStatSN);
        for (int i = 0; i < cdb.length; i++) {
            b.put(32 + i, cdb[i]);
        }
        return b;
    }

    static ByteBuffer dataOut(int itt, int ttt, int dataSN, int offset, boolean last) {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) 0x05);
        b.put(1, (byte) (last ? 0x80 : 0));
        b.putInt(16, itt).putInt(20, ttt).putInt(36, dataSN).putInt(40, offset);
        return b;
    }

    ByteBuffer nop(boolean immediate) {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) (immediate ? 0x40 : 0x00));
        b.put(1, (byte) 0x80);
        b.putInt(16, itt++).putInt(20, -1);
        b.putInt(24, immediate ? cmdSN : cmdSN++).putInt(28, expStatSN);
        return b;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
