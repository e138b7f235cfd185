package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;

/**
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): the commands {@link ScsiCommandHandler}
 * implements, with the CDB usage bitmaps initiators use to probe optional bits (e.g. DPO/FUA).
 * Keep this table in step with the handler's switch.
 */
final class SupportedOpcodes {
    private SupportedOpcodes() {
    }

    /** One supported command; {@code sa} is -1 for opcodes without service actions. */
    record Command(int opcode, int sa, int[] usage) {
    }

    private static final int FF = 0xff;

    /** Commands served only by a thin-provisioned LU. */
    static final List<Command> THIN_COMMANDS = List.of(
            new Command(0x42, -1, new int[] {0x42, 0x01, 0, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x9E, 0x12, new int[] {0x9E, 0x1f, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}));

    static final List<Command> COMMANDS = List.of(
            new Command(0x00, -1, new int[] {0x00, 0, 0, 0, 0, 0}),
            new Command(0x03, -1, new int[] {0x03, 0, 0, 0, FF, 0}),
            new Command(0x08, -1, new int[] {0x08, 0x1f, FF, FF, FF, 0}),
            new Command(0x0A, -1, new int[] {0x0A, 0x1f, FF, FF, FF, 0}),
            new Command(0x12, -1, new int[] {0x12, 0x01, FF, FF, FF, 0}),
            new Command(0x16, -1, new int[] {0x16, 0, 0, 0, 0, 0}),
            new Command(0x17, -1, new int[] {0x17, 0, 0, 0, 0, 0}),
            new Command(0x1A, -1, new int[] {0x1A, 0x08, FF, FF, FF, 0}),
            new Command(0x1B, -1, new int[] {0x1B, 0x01, 0, 0, 0x03, 0}),
            new Command(0x1E, -1, new int[] {0x1E, 0, 0, 0, 0x03, 0}),
            new Command(0x25, -1, new int[] {0x25, 0, FF, FF, FF, FF, 0, 0, 0x01, 0}),
            new Command(0x28, -1, new int[] {0x28, 0x18, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x2A, -1, new int[] {0x2A, 0x18, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x2E, -1, new int[] {0x2E, 0x12, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x2F, -1, new int[] {0x2F, 0x16, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x34, -1, new int[] {0x34, 0, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x35, -1, new int[] {0x35, 0, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x37, -1, new int[] {0x37, 0, 0x1f, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x41, -1, new int[] {0x41, 0, FF, FF, FF, FF, 0, FF, FF, 0}),
            new Command(0x5A, -1, new int[] {0x5A, 0x08, FF, FF, 0, 0, 0, FF, FF, 0}),
            new Command(0x5E, 0x00, new int[] {0x5E, 0x1f, 0, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x5E, 0x01, new int[] {0x5E, 0x1f, 0, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x5E, 0x02, new int[] {0x5E, 0x1f, 0, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x5E, 0x03, new int[] {0x5E, 0x1f, 0, 0, 0, 0, 0, FF, FF, 0}),
            new Command(0x5F, 0x00, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x01, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x02, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x03, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x04, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x05, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x5F, 0x06, new int[] {0x5F, 0x1f, 0xff, 0, 0, FF, FF, FF, FF, 0}),
            new Command(0x88, -1, new int[] {0x88, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x8A, -1, new int[] {0x8A, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x8E, -1, new int[] {0x8E, 0x12, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x8F, -1, new int[] {0x8F, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x83, 0x00, new int[] {0x83, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, FF, FF, FF, FF, 0, 0}),
            new Command(0x84, 0x00, new int[] {0x84, 0x1f, FF, 0, 0, 0, 0, 0, 0, 0, FF, FF, FF, FF, 0, 0}),
            new Command(0x84, 0x03, new int[] {0x84, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, FF, FF, FF, FF, 0, 0}),
            new Command(0x89, -1, new int[] {0x89, 0xf8, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0, 0, FF, 0, 0}),
            new Command(0x8B, -1, new int[] {0x8B, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x90, -1, new int[] {0x90, 0, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x91, -1, new int[] {0x91, 0, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x93, -1, new int[] {0x93, 0x01, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0x9C, -1, new int[] {0x9C, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0, FF, FF, 0, 0}),
            new Command(0x9E, 0x10, new int[] {0x9E, 0x1f, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xA0, -1, new int[] {0xA0, 0, FF, 0, 0, 0, FF, FF, FF, FF, 0, 0}),
            new Command(0xA3, 0x0C, new int[] {0xA3, 0x1f, 0x87, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xA8, -1, new int[] {0xA8, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xAA, -1, new int[] {0xAA, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xAE, -1, new int[] {0xAE, 0x12, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xAF, -1, new int[] {0xAF, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0}),
            new Command(0xB7, -1, new int[] {0xB7, 0x1f, 0, 0, 0, 0, FF, FF, FF, FF, 0, 0}));

    /** The commands a LU serves: the thin-provisioning ones only when it is thin. */
    static List<Command> commands(boolean thin) {
        if (!thin) {
            return COMMANDS;
        }
        List<Command> all = new java.util.ArrayList<>();
        for (Command c : COMMANDS) {
            if (c.opcode == 0x41 || c.opcode == 0x93) {
                int[] usage = c.usage.clone();
                usage[1] |= 0x08; // the UNMAP bit is honoured on a thin LU
                all.add(new Command(c.opcode, c.sa, usage));
            } else {
                all.add(c);
            }
        }
        all.addAll(THIN_COMMANDS);
        all.sort(java.util.Comparator.comparingInt(Command::opcode).thenComparingInt(Command::sa));
        return all;
    }

    static ScsiResult report(ByteBuf cdb, ByteBufAllocator alloc, boolean thin) {
        List<Command> table = commands(thin);
        boolean rctd = (cdb.getByte(2) & 0x80) != 0;
        int options = cdb.getByte(2) & 0x07;
        int opcode = cdb.getUnsignedByte(3);
        int sa = cdb.getUnsignedShort(4);
        long allocLen = cdb.getUnsignedInt(6);
        ByteBuf out = alloc.buffer(512);
        if (options == 0) {
            out.writeInt(0);
            for (Command c : table) {
                out.writeByte(c.opcode).writeByte(0).writeShort(Math.max(c.sa, 0)).writeByte(0);
                out.writeByte((rctd ? 0x02 : 0) | (c.sa >= 0 ? 0x01 : 0));
                out.writeShort(c.usage.length);
                if (rctd) {
                    timeouts(out);
                }
            }
            out.setInt(0, out.readableBytes() - 4);
        } else if (options <= 3) {
            boolean hasSa = table.stream().anyMatch(c -> c.opcode == opcode && c.sa >= 0);
            if ((options == 1 && hasSa) || (options == 2 && !hasSa && known(table, opcode))) {
                out.release();
                return ScsiResult.check(Sense.invalidCdbField(2)); // these REPORTING OPTIONS do not fit the opcode
            }
            Command found = table.stream()
                    .filter(c -> c.opcode == opcode && (c.sa < 0 || (options != 1 && c.sa == sa)))
                    .findFirst().orElse(null);
            out.writeByte(0);
            out.writeByte((rctd && found != null ? 0x80 : 0) | (found != null ? 0x03 : 0x01));
            if (found == null) {
                out.writeShort(0);
            } else {
                out.writeShort(found.usage.length);
                for (int b : found.usage) {
                    out.writeByte(b);
                }
                if (rctd) {
                    timeouts(out);
                }
            }
        } else {
            out.release();
            return ScsiResult.check(Sense.invalidCdbField(2));
        }
        if (out.readableBytes() > allocLen) {
            out.writerIndex((int) allocLen);
        }
        return ScsiResult.good(out);
    }

    private static boolean known(List<Command> table, int opcode) {
        return table.stream().anyMatch(c -> c.opcode == opcode);
    }

    /** Command timeouts descriptor: no nominal or recommended timeout reported. */
    private static void timeouts(ByteBuf out) {
        out.writeShort(0x0A).writeByte(0).writeByte(0).writeInt(0).writeInt(0);
    }
}
