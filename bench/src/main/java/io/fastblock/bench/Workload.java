package io.fastblock.bench;

import java.util.Locale;

/** The access pattern of a job, named as fio names it. */
public enum Workload {
    READ(false, true, false),
    WRITE(false, false, true),
    RANDREAD(true, true, false),
    RANDWRITE(true, false, true),
    RANDRW(true, true, true);

    private final boolean random;
    private final boolean reads;
    private final boolean writes;

    Workload(boolean random, boolean reads, boolean writes) {
        this.random = random;
        this.reads = reads;
        this.writes = writes;
    }

    public boolean random() {
        return random;
    }

    public boolean reads() {
        return reads;
    }

    public boolean writes() {
        return writes;
    }

    public String fioName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Workload parse(String s) {
        for (Workload w : values()) {
            if (w.fioName().equals(s)) {
                return w;
            }
        }
        throw new IllegalArgumentException("--rw: '" + s + "' is not one of randread, randwrite, read, write, randrw");
    }
}
