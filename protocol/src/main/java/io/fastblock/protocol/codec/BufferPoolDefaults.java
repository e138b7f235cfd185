package io.fastblock.protocol.codec;

import io.netty.util.internal.PlatformDependent;
import java.util.List;
import java.util.Optional;

/**
 * Netty's pooled allocator, tuned for the servers' 1 MiB data buffers. By default a thread caches
 * freed buffers of at most 32 KiB; a larger one goes back to its arena, and an arena destroys a
 * chunk (4 MiB) as soon as the last buffer in it is freed. A 1 MiB read answer (1.25 MiB with its
 * frame header, after rounding to a size class) fills a third of a chunk, so under 1 MiB reads
 * nearly every chunk was destroyed and a fresh one allocated (zeroed by the JDK, then faulted in
 * page by page by the kernel) every few reads: about a quarter of the gateway's and the storage
 * servers' CPU per 1 MiB read in a profile. Caching buffers up to 2 MiB per thread lets a buffer
 * freed on another thread (Data-In written on the iSCSI loop, an answer written on the network
 * loop) go back to the cache of the thread that allocated it, where the next read takes it.
 * The normal-size cache is cut from 64 to 16 entries per size class.
 * <p>
 * That alone did not bound what the caches keep: every size class from 32 KiB to 2 MiB has its
 * 16 entries per thread, and a socket's read buffers come in several sizes (the adaptive receive
 * allocator's guesses), so run after run of 1 MiB QD32 reads filled more classes. A gateway's
 * pooled direct memory grew 80, 104, 132 ... 220 MiB over nine 5 s runs and stayed there while
 * idle, until allocations failed against its 256 MiB limit: its storage connections broke and reads
 * were retried after 600 ms. So each event loop also trims its cache every second, freeing the
 * entries it did not use since the last trim: the same nine runs then held 40-104 MiB, 76 MiB a few
 * seconds after the last one (docs/performance.md).
 * <p>
 * The caches do not stop an arena from destroying its chunks. Under 1 MiB QD32 writes a storage
 * server's socket reads hold hundreds of 64 KiB buffers at once (a frame's pieces until its copies
 * are written and forwarded); freed together, they empty whole chunks, which are destroyed, and the
 * next reads allocate new ones. The JDK zeroes every new direct buffer, so that churn cost 6.4% of
 * the storage JVM's CPU in a profile. Netty allocates chunks without zeroing (and the C library
 * reuses the memory) when it may call {@code DirectByteBuffer}'s private constructor: that takes
 * {@link #TRY_REFLECTION} and the JVM option {@link #JVM_OPTIONS}, which the launcher gives the
 * data-path JVMs. 1 MiB QD32 writes: +12% in 5 of 6 alternating pairs (docs/performance.md). Without
 * the option Netty falls back to the JDK's zeroed buffers, as before; nothing else changes.
 * <p>
 * Netty reads these properties once, when the allocator class initializes: call
 * {@link #serverDefault()} first thing in a server's {@code main}. A value given on the command
 * line ({@code -Dio.netty.allocator.maxCachedBufferCapacity=...}) wins.
 */
public final class BufferPoolDefaults {
    public static final String MAX_CACHED = "io.netty.allocator.maxCachedBufferCapacity";
    public static final String NORMAL_CACHE_SIZE = "io.netty.allocator.normalCacheSize";
    public static final String TRIM_INTERVAL = "io.netty.allocator.cacheTrimIntervalMillis";
    public static final String TRY_REFLECTION = "io.netty.tryReflectionSetAccessible";
    /** What a data-path JVM needs on its command line for Netty to allocate pool chunks unzeroed. */
    public static final List<String> JVM_OPTIONS = List.of("--add-opens=java.base/java.nio=ALL-UNNAMED");
    /** Covers a 1 MiB payload plus its frame header (the 1.25 MiB size class) with room to spare. */
    static final int MAX_CACHED_BYTES = 2 * 1024 * 1024;
    static final int NORMAL_CACHE_ENTRIES = 16;
    /** How often an event loop frees the cached buffers it did not reuse meanwhile. */
    static final long TRIM_MILLIS = 1000;

    private BufferPoolDefaults() {
    }

    /** Sets the defaults above for properties not given; call before any pooled buffer exists. */
    public static void serverDefault() {
        setIfAbsent(MAX_CACHED, Integer.toString(MAX_CACHED_BYTES));
        setIfAbsent(NORMAL_CACHE_SIZE, Integer.toString(NORMAL_CACHE_ENTRIES));
        setIfAbsent(TRIM_INTERVAL, Long.toString(TRIM_MILLIS));
        setIfAbsent(TRY_REFLECTION, "true");
    }

    /** True when Netty's pools take memory unzeroed (see the class comment); read after {@link #serverDefault()}. */
    public static boolean unzeroedChunks() {
        return PlatformDependent.useDirectBufferNoCleaner();
    }

    /** What a server logs at start when its pools' chunks are zeroed, i.e. {@link #JVM_OPTIONS} are missing. */
    public static Optional<String> zeroedChunksWarning() {
        return unzeroedChunks() ? Optional.empty()
                : Optional.of("Netty's buffer pools take zeroed memory from the JDK (slower under 1 MiB writes); "
                + "start this JVM with " + String.join(" ", JVM_OPTIONS) + " to avoid it");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
