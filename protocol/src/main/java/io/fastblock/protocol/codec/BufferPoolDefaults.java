package io.fastblock.protocol.codec;

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
 * The normal-size cache is cut from 64 to 16 entries per size class to bound what a thread may
 * keep after a burst (16 x 1.25 MiB) under the servers' 256 MiB of direct memory.
 * <p>
 * Netty reads these properties once, when the allocator class initializes: call
 * {@link #serverDefault()} first thing in a server's {@code main}. A value given on the command
 * line ({@code -Dio.netty.allocator.maxCachedBufferCapacity=...}) wins.
 */
public final class BufferPoolDefaults {
    public static final String MAX_CACHED = "io.netty.allocator.maxCachedBufferCapacity";
    public static final String NORMAL_CACHE_SIZE = "io.netty.allocator.normalCacheSize";
    /** Covers a 1 MiB payload plus its frame header (the 1.25 MiB size class) with room to spare. */
    static final int MAX_CACHED_BYTES = 2 * 1024 * 1024;
    static final int NORMAL_CACHE_ENTRIES = 16;

    private BufferPoolDefaults() {
    }

    /** Sets the defaults above for properties not given; call before any pooled buffer exists. */
    public static void serverDefault() {
        setIfAbsent(MAX_CACHED, Integer.toString(MAX_CACHED_BYTES));
        setIfAbsent(NORMAL_CACHE_SIZE, Integer.toString(NORMAL_CACHE_ENTRIES));
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
