package io.fastblock.storage.io;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many files one store keeps mapped for reads ({@link ResidentPages}) at once. When it is full,
 * a new mapping takes the place of one not used since the clock hand last passed it (a chunk file
 * read recently keeps its mapping, a cold one loses it and reads with {@code pread} until it is
 * mapped again).
 *
 * <p>Why a bound: every mapping is an entry in the process's memory map, and Linux allows a process
 * {@code vm.max_map_count} of them (65 530 by default). A chunk's mapping otherwise lives as long as
 * the chunk is open, which is as long as the server runs, so a node serving large reads from many
 * chunks would reach the limit; past it the JVM cannot grow its own heap, code cache or thread stacks
 * and stops with a fatal error (seen on this machine with a program that only mapped files). The
 * default, a sixteenth of the limit per store, leaves room for three stores in one JVM and for
 * everything else the JVM maps; at 64 MiB chunks it keeps 256 GiB of recently read chunks mapped.
 *
 * <p>A failed mapping stops all mapping by this store for {@link #BACK_OFF_NANOS}: the JDK answers a
 * failed {@code mmap} with a full garbage collection and a 100 ms pause before it tries once more,
 * which must not happen on every large read.
 */
public final class MappingBudget {
    private static final Logger LOG = LoggerFactory.getLogger(MappingBudget.class);
    /** Linux's default {@code vm.max_map_count}, where the running kernel's cannot be read. */
    static final int LINUX_DEFAULT_MAX_MAP_COUNT = 65_530;
    static final long BACK_OFF_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final int limit;
    /** Files holding a slot, the clock's order: the hand is the first, a file given a second chance goes last. */
    private final LinkedHashSet<ResidentPages> mapped = new LinkedHashSet<>();
    private long refusedUntil;
    private boolean refusing;
    private long evictions;

    /** {@code limit} 0: nothing is mapped (every read copies). */
    public MappingBudget(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("mapped file limit must be 0 or more, got " + limit);
        }
        this.limit = limit;
    }

    /** A sixteenth of this kernel's {@code vm.max_map_count}. */
    public static int defaultLimit() {
        return defaultLimit(Path.of("/proc/sys/vm/max_map_count"));
    }

    static int defaultLimit(Path maxMapCount) {
        long max = LINUX_DEFAULT_MAX_MAP_COUNT;
        // A line reader: Files.readString trusts the size procfs reports (0) and returned only "6" of 65530 here.
        try (BufferedReader in = Files.newBufferedReader(maxMapCount)) {
            String line = in.readLine();
            if (line != null) {
                max = Long.parseLong(line.trim());
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            // Not Linux, or /proc not mounted: assume the default limit.
        }
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, max / 16));
    }

    public int limit() {
        return limit;
    }

    /** Files mapped now, at most {@link #limit}. */
    public synchronized int mapped() {
        return mapped.size();
    }

    /** Mappings dropped to make room for others since the store opened. */
    public synchronized long evictions() {
        return evictions;
    }

    /**
     * Runs {@code map} for {@code file} if it may hold a mapping, making room first; the lock is held
     * while it runs so a slot is never given to two files or taken from a file still mapping. Returns
     * what {@code map} returned, or false when mapping is off or backing off after a failure.
     */
    synchronized boolean map(ResidentPages file, Mapper map) {
        if (limit == 0) {
            return false;
        }
        long now = System.nanoTime();
        if (refusing) {
            if (now - refusedUntil < 0) {
                return false;
            }
            refusing = false;
        }
        if (!mapped.contains(file)) {
            while (mapped.size() >= limit) {
                evictOne();
            }
            mapped.add(file);
        }
        IOException failed = null;
        boolean ok;
        try {
            ok = map.map();
        } catch (IOException e) {
            failed = e;
            ok = false;
        }
        if (!ok) {
            mapped.remove(file);
            file.unmap();
        }
        if (failed != null) {
            refusing = true;
            refusedUntil = now + BACK_OFF_NANOS;
            LOG.warn("mapping a chunk file failed with {} others mapped by this store; its large reads copy for the next {} s: {}",
                    mapped.size(), TimeUnit.NANOSECONDS.toSeconds(BACK_OFF_NANOS), failed.toString());
        }
        return ok;
    }

    /** {@code file} no longer holds a mapping (it was closed). */
    synchronized void release(ResidentPages file) {
        mapped.remove(file);
    }

    private void evictOne() {
        // At most two passes: the first clears every second chance it meets.
        Iterator<ResidentPages> hand = mapped.iterator();
        ResidentPages next = hand.next();
        hand.remove();
        if (next.takeUsed()) {
            mapped.add(next);
            return;
        }
        next.unmap();
        evictions++;
    }

    /** The mapping step, run under the budget's lock. */
    @FunctionalInterface
    interface Mapper {
        boolean map() throws IOException;
    }
}
