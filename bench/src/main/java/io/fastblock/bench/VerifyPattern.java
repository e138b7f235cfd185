package io.fastblock.bench;

import io.netty.buffer.ByteBuf;

/**
 * The data written with {@code --verify}: every 512-byte sector carries a header (magic, seed,
 * its own byte offset on the LUN, a generation number) and a payload derived from them, so a read
 * can tell the exact write it expects, a write from another run (any generation, right place),
 * a never-written sector (zeros), and anything else (corruption or a misdirected write).
 */
public final class VerifyPattern {
    public static final int SECTOR = 512;
    static final long MAGIC = 0x4642454e43480001L; // "FBENCH" v1
    private static final int HEADER = 32;

    /** What a checked range held. */
    public enum Outcome { EXACT, OTHER_GENERATION, ZEROS, MISMATCH }

    private VerifyPattern() {
    }

    private static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    private static long payloadSeed(long seed, long offset, int generation) {
        return mix(seed ^ mix(offset) ^ ((long) generation << 32));
    }

    /** Fills {@code length} bytes of {@code buf} from {@code index} with the pattern for LUN byte offset {@code lunOffset}. */
    public static void fill(ByteBuf buf, int index, int length, long lunOffset, long seed, int generation) {
        for (int s = 0; s < length; s += SECTOR) {
            long off = lunOffset + s;
            int at = index + s;
            buf.setLong(at, MAGIC);
            buf.setLong(at + 8, seed);
            buf.setLong(at + 16, off);
            buf.setInt(at + 24, generation);
            buf.setInt(at + 28, 0);
            long x = payloadSeed(seed, off, generation);
            for (int i = HEADER; i < SECTOR; i += 8) {
                x += 0x9e3779b97f4a7c15L;
                buf.setLong(at + i, mix(x));
            }
        }
    }

    /** The outcome of checking one range, and for a mismatch what was wrong. */
    public record Result(Outcome outcome, String detail) {
        static final Result EXACT = new Result(Outcome.EXACT, null);
        static final Result OTHER = new Result(Outcome.OTHER_GENERATION, null);
        static final Result ZEROS = new Result(Outcome.ZEROS, null);
    }

    /**
     * Checks {@code length} bytes read from LUN offset {@code lunOffset}. With {@code expectedGeneration}
     * > 0 every sector must be exactly that write of this seed; otherwise every sector must be either
     * zeros or an intact pattern for its own offset (any seed and generation), and the range's outcome is
     * the weakest of its sectors.
     */
    public static Result check(ByteBuf buf, int index, int length, long lunOffset, long seed, int expectedGeneration) {
        Result worst = Result.EXACT;
        for (int s = 0; s < length; s += SECTOR) {
            long off = lunOffset + s;
            int at = index + s;
            long magic = buf.getLong(at);
            if (magic != MAGIC) {
                if (expectedGeneration <= 0 && allZero(buf, at)) {
                    worst = Result.ZEROS;
                    continue;
                }
                return mismatch(off, String.format("no pattern header (first 8 bytes 0x%016x)", magic));
            }
            long sectorSeed = buf.getLong(at + 8);
            long sectorOff = buf.getLong(at + 16);
            int gen = buf.getInt(at + 24);
            if (sectorOff != off) {
                return mismatch(off, "holds the sector written for offset " + sectorOff);
            }
            if (expectedGeneration > 0 && (sectorSeed != seed || gen != expectedGeneration)) {
                return mismatch(off, "holds generation " + gen + " seed " + sectorSeed + ", expected generation "
                        + expectedGeneration + " seed " + seed);
            }
            long x = payloadSeed(sectorSeed, off, gen);
            for (int i = HEADER; i < SECTOR; i += 8) {
                x += 0x9e3779b97f4a7c15L;
                if (buf.getLong(at + i) != mix(x)) {
                    return mismatch(off, "payload differs at byte " + i + " of the sector");
                }
            }
            if (expectedGeneration <= 0 && worst == Result.EXACT) {
                worst = Result.OTHER;
            }
        }
        return worst;
    }

    private static Result mismatch(long off, String what) {
        return new Result(Outcome.MISMATCH, "sector at byte " + off + " " + what);
    }

    private static boolean allZero(ByteBuf buf, int at) {
        for (int i = 0; i < SECTOR; i += 8) {
            if (buf.getLong(at + i) != 0) {
                return false;
            }
        }
        return true;
    }
}
