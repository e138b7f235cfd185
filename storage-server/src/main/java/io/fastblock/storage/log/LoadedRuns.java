package io.fastblock.storage.log;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Runs of records one reader has loaded, with the records in them it has already checked, so a
 * run is read and a record's CRC computed once however many extents read from it. The cleaner
 * keeps one of these for a whole round over a segment: random 4 KiB overwrites cut earlier 1 MiB
 * records into many live pieces, and loading and checking the whole record again for each piece
 * was most of the cleaner's CPU. Holds at most {@code maxRuns} runs (the least recently used
 * goes). Only for runs of sealed segments or within one read: the bytes must not change while held.
 * Not thread-safe.
 */
final class LoadedRuns {
    /**
     * One run's file bytes (from its first record) and, for a reader that comes back to it, the
     * positions in it of records found good.
     */
    static final class Run {
        final ByteBuffer bytes;
        private final Set<Integer> checked;

        Run(ByteBuffer bytes, boolean rememberChecks) {
            this.bytes = bytes;
            this.checked = rememberChecks ? new HashSet<>() : null;
        }

        boolean checked(int position) {
            return checked != null && checked.contains(position);
        }

        void markChecked(int position) {
            if (checked != null) {
                checked.add(position);
            }
        }
    }

    private final Map<LogPosition, Run> runs;
    private final boolean rememberChecks;
    private long loads;

    LoadedRuns(int maxRuns) {
        this(maxRuns, true);
    }

    private LoadedRuns(int maxRuns, boolean rememberChecks) {
        if (maxRuns < 1) {
            throw new IllegalArgumentException("maxRuns must be at least 1, got " + maxRuns);
        }
        this.rememberChecks = rememberChecks;
        this.runs = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<LogPosition, Run> eldest) {
                return size() > maxRuns;
            }
        };
    }

    /**
     * Unbounded, for one read (the tail's read path), which holds every run it touches until it
     * returns anyway and checks each record it uses once: no set of checked records to keep.
     */
    static LoadedRuns forOneRead() {
        return new LoadedRuns(Integer.MAX_VALUE, false);
    }

    Run get(LogPosition where) {
        return runs.get(where);
    }

    Run add(LogPosition where, ByteBuffer bytes) {
        Run r = new Run(bytes, rememberChecks);
        runs.put(where, r);
        loads++;
        return r;
    }

    /** Runs added so far (each one a read of the log). */
    long loads() {
        return loads;
    }

    int size() {
        return runs.size();
    }
}
