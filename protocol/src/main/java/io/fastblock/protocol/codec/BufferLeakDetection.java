package io.fastblock.protocol.codec;

import io.netty.util.ResourceLeakDetector;

/**
 * Netty's buffer leak detector for the server processes. Its default level (SIMPLE) records a
 * stack trace for one buffer in 128 and for every slice of a tracked buffer; on the gateway under
 * 4 KiB reads that was about 1,400 stack traces a second (JFR, jdk.JavaExceptionThrow), a
 * measurable part of each I/O's CPU. The servers run without it; a run that hunts a leak turns it
 * back on with {@code -Dio.netty.leakDetection.level=paranoid} (or any level), which wins.
 */
public final class BufferLeakDetection {
    public static final String PROPERTY = "io.netty.leakDetection.level";

    private BufferLeakDetection() {
    }

    /** Disables the detector unless {@value #PROPERTY} was given; returns the level in force. */
    public static ResourceLeakDetector.Level serverDefault() {
        if (System.getProperty(PROPERTY) == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        return ResourceLeakDetector.getLevel();
    }
}
