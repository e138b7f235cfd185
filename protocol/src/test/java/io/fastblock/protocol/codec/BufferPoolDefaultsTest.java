package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Netty reads the allocator's properties once per JVM, so each case runs {@link Probe} in a JVM of
 * its own: a read-answer-sized buffer allocated on one thread and released on another, as the
 * gateway (storage loop -> iSCSI loop) and the storage server (stripe -> network loop) do.
 */
class BufferPoolDefaultsTest {
    private static final int ROUNDS = 200;

    @Test
    void largeBuffersFreedOnAnotherThreadAreReusedInsteadOfTakenFromTheArena() throws Exception {
        long tuned = arenaAllocations(true);
        long untuned = arenaAllocations(false);
        // Without the defaults every round goes to the arena (the probe's baseline: it sees the churn).
        assertTrue(untuned >= ROUNDS, "untuned arena allocations: " + untuned);
        // With them, the thread's cache serves all but the first.
        assertTrue(tuned <= 2, "tuned arena allocations: " + tuned);
    }

    @Test
    void anIdleEventLoopGivesItsCachedBuffersBack() throws Exception {
        // Defaults: the loop's cache is emptied by the periodic trim once the buffers go unused.
        assertEquals(0, cachedAfterIdle(List.of()), "normal-size buffers still held by an idle loop");
        // The same defaults with the trim turned off on the command line: the cache keeps them.
        assertTrue(cachedAfterIdle(List.of("-D" + BufferPoolDefaults.TRIM_INTERVAL + "=0")) >= TrimProbe.SIZES.length,
                "without the trim the cache should still hold the buffers");
    }

    private static long cachedAfterIdle(List<String> jvmArgs) throws IOException, InterruptedException {
        return runProbe(jvmArgs, TrimProbe.class, "", "active-normal-allocations=");
    }

    /**
     * Child JVM: an event loop allocates and frees buffers of the sizes a socket's reads come in (they
     * stay in its cache), then idles; prints how many of them the arenas still count as taken.
     */
    public static final class TrimProbe {
        static final int[] SIZES = {40 << 10, 64 << 10, 96 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, (1 << 20) + 64};

        public static void main(String[] args) throws Exception {
            BufferPoolDefaults.serverDefault();
            io.netty.channel.DefaultEventLoop loop = new io.netty.channel.DefaultEventLoop();
            try {
                loop.submit(() -> {
                    List<ByteBuf> held = new ArrayList<>();
                    for (int size : SIZES) {
                        held.add(PooledByteBufAllocator.DEFAULT.directBuffer(size));
                    }
                    held.forEach(ByteBuf::release); // into the loop's cache
                }).get(10, TimeUnit.SECONDS);
                if (active() < SIZES.length) {
                    throw new AssertionError("the buffers did not stay in the loop's cache: " + active());
                }
                // Two trims: the first forgets the allocations counted before it, the second frees what went unused.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
                while (active() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                System.out.println("active-normal-allocations=" + active());
            } finally {
                loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }

        private static long active() {
            long n = 0;
            for (PoolArenaMetric a : PooledByteBufAllocator.DEFAULT.metric().directArenas()) {
                n += a.numActiveNormalAllocations();
            }
            return n;
        }
    }

    @Test
    void withTheJvmOptionsPoolChunksComeUnzeroedAndWithoutThemZeroedAsBefore() throws Exception {
        // With the options: Netty takes the chunks' memory itself, unzeroed.
        assertEquals(1, runProbe(BufferPoolDefaults.JVM_OPTIONS, ChunkProbe.class, "", "unzeroed="));
        // Without them (a JVM started by hand): the JDK's zeroed buffers, the servers warn, and buffers still work.
        assertEquals(0, runProbe(List.of(), ChunkProbe.class, "", "unzeroed="));
    }

    /**
     * Child JVM: takes pooled buffers through many arena chunks, writes and reads them back, and
     * prints whether Netty allocated the chunks without the JDK's zeroing, and the warning agrees.
     */
    public static final class ChunkProbe {
        public static void main(String[] args) {
            BufferPoolDefaults.serverDefault();
            List<ByteBuf> held = new ArrayList<>();
            for (int i = 0; i < 64; i++) { // 64 MiB: many 4 MiB chunks
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(1 << 20);
                b.writeBytes(new byte[1 << 20]);
                b.setLong(8, i);
                held.add(b);
            }
            for (int i = 0; i < held.size(); i++) {
                if (held.get(i).getLong(8) != i) {
                    throw new AssertionError("buffer " + i + " lost its bytes");
                }
            }
            held.forEach(ByteBuf::release);
            boolean unzeroed = BufferPoolDefaults.unzeroedChunks();
            if (unzeroed == BufferPoolDefaults.zeroedChunksWarning().isPresent()) {
                throw new AssertionError("the warning disagrees with the allocation: unzeroed=" + unzeroed);
            }
            System.out.println("unzeroed=" + (unzeroed ? 1 : 0));
        }
    }

    @Test
    void aValueGivenOnTheCommandLineWins() {
        String before = System.getProperty(BufferPoolDefaults.MAX_CACHED);
        String beforeSize = System.getProperty(BufferPoolDefaults.NORMAL_CACHE_SIZE);
        try {
            System.setProperty(BufferPoolDefaults.MAX_CACHED, "65536");
            System.clearProperty(BufferPoolDefaults.NORMAL_CACHE_SIZE);
            BufferPoolDefaults.serverDefault();
            assertEquals("65536", System.getProperty(BufferPoolDefaults.MAX_CACHED));
            assertEquals(Integer.toString(BufferPoolDefaults.NORMAL_CACHE_ENTRIES),
                    System.getProperty(BufferPoolDefaults.NORMAL_CACHE_SIZE));
        } finally {
            restore(BufferPoolDefaults.MAX_CACHED, before);
            restore(BufferPoolDefaults.NORMAL_CACHE_SIZE, beforeSize);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    private static long arenaAllocations(boolean tuned) throws IOException, InterruptedException {
        return runProbe(List.of(), Probe.class, Boolean.toString(tuned), "arena-normal-allocations=");
    }

    /** Runs {@code probe}'s main in a JVM of its own and returns the number its last line gives after {@code key}. */
    private static long runProbe(List<String> jvmArgs, Class<?> probe, String arg, String key)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(probe.getName());
        cmd.add(arg);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "probe did not finish");
        assertEquals(0, p.exitValue(), out);
        String last = out.lines().reduce((a, b) -> b).orElse("");
        return Long.parseLong(last.replace(key, ""));
    }

    /** Child JVM: prints how many of its buffers the arenas had to allocate. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            if (Boolean.parseBoolean(args[0])) {
                BufferPoolDefaults.serverDefault();
            }
            SynchronousQueue<ByteBuf> handoff = new SynchronousQueue<>();
            SynchronousQueue<Boolean> released = new SynchronousQueue<>();
            Thread freer = new Thread(() -> {
                try {
                    for (int i = 0; i < ROUNDS; i++) {
                        handoff.take().release();
                        released.put(true);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "freer");
            Throwable[] failed = new Throwable[1];
            // The allocating side is a Netty thread, like an event loop or a storage stripe.
            Thread allocator = new FastThreadLocalThread(() -> {
                try {
                    for (int i = 0; i < ROUNDS; i++) {
                        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(1024 * 1024 + 64);
                        b.writeZero(b.capacity());
                        handoff.put(b);
                        released.take(); // the next allocation comes after the other thread's release
                    }
                } catch (Throwable t) {
                    failed[0] = t;
                }
            }, "allocator");
            freer.start();
            allocator.start();
            allocator.join();
            freer.join();
            if (failed[0] != null) {
                throw new AssertionError(failed[0]);
            }
            long n = 0;
            for (PoolArenaMetric a : PooledByteBufAllocator.DEFAULT.metric().directArenas()) {
                n += a.numNormalAllocations();
            }
            System.out.println("arena-normal-allocations=" + n);
        }
    }
}
