package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Writes handed to the coalescer within one turn of a real Netty event loop: which device writes
 * come out, with which bytes, in which order, and how each command's future and buffer end.
 */
class WriteCoalescerTest {
    private static final int BLOCK = 512;
    private static final int WINDOW = 64 << 10;

    private final DefaultEventLoop loop = new DefaultEventLoop();
    private final Recorder device = new Recorder(WINDOW);
    private final WriteCoalescer coalescer = new WriteCoalescer(device);

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Device writes as they arrive: offset and a copy of the bytes; each completes when the test says. */
    static final class Recorder implements BlockDevice {
        final int window;
        final List<Long> offsets = new CopyOnWriteArrayList<>();
        final List<byte[]> bytes = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<Void>> pending = new CopyOnWriteArrayList<>();
        final List<ByteBuf> buffers = new CopyOnWriteArrayList<>();

        Recorder(int window) {
            this.window = window;
        }

        @Override
        public CompletableFuture<Void> write(long offset, ByteBuf data) {
            byte[] b = new byte[data.readableBytes()];
            data.getBytes(data.readerIndex(), b);
            offsets.add(offset);
            bytes.add(b);
            buffers.add(data);
            CompletableFuture<Void> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }

        @Override
        public int coalescedWriteBytes() {
            return window;
        }

        @Override
        public long sizeBytes() {
            return 1L << 30;
        }

        @Override
        public int blockSize() {
            return BLOCK;
        }

        @Override
        public long volumeId() {
            return 1;
        }

        @Override
        public String name() {
            return "v";
        }

        @Override
        public CompletableFuture<ByteBuf> read(long offset, int length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Void> flush() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() {
        }
    }

    private static ByteBuf filled(int length, int seed) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(length);
        for (int i = 0; i < length; i++) {
            b.writeByte(seed * 31 + i);
        }
        return b;
    }

    private static byte[] concat(ByteBuf... parts) {
        int n = 0;
        for (ByteBuf p : parts) {
            n += p.readableBytes();
        }
        byte[] out = new byte[n];
        int at = 0;
        for (ByteBuf p : parts) {
            p.getBytes(p.readerIndex(), out, at, p.readableBytes());
            at += p.readableBytes();
        }
        return out;
    }

    /** Runs {@code writes} (offset, buffer) in one loop turn and waits until the turn's held run went out. */
    private List<CompletableFuture<Void>> inOneTurn(long[] offsets, ByteBuf[] data) throws Exception {
        List<CompletableFuture<Void>> futures = loop.submit(() -> {
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            for (int i = 0; i < offsets.length; i++) {
                fs.add(coalescer.write(offsets[i], data[i]));
            }
            return fs;
        }).get(5, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(5, TimeUnit.SECONDS); // the turn's end task ran before this one
        return futures;
    }

    @Test
    void contiguousWritesOfOneTurnAreOneDeviceWriteAndEachCompletesWithIt() throws Exception {
        ByteBuf a = filled(4096, 1);
        ByteBuf b = filled(4096, 2);
        ByteBuf c = filled(8192, 3);
        List<CompletableFuture<Void>> fs = inOneTurn(new long[] {8192, 12288, 16384}, new ByteBuf[] {a, b, c});

        assertEquals(List.of(8192L), device.offsets);
        assertArrayEquals(concat(a, b, c), device.bytes.get(0));
        assertTrue(fs.stream().noneMatch(CompletableFuture::isDone), "no command completes before the device write");

        ByteBuf merged = device.buffers.get(0);
        device.pending.get(0).complete(null);
        for (CompletableFuture<Void> f : fs) {
            f.get(5, TimeUnit.SECONDS);
        }
        assertEquals(0, merged.refCnt(), "the merged buffer is released once written");
        assertEquals(1, a.refCnt());
        assertEquals(1, b.refCnt());
        assertEquals(1, c.refCnt());
        a.release();
        b.release();
        c.release();
    }

    @Test
    void gapsAndWindowEndsSplitRunsAndWritesLeaveInArrivalOrder() throws Exception {
        long w = WINDOW;
        long[] offsets = {0, 4096, 20480, w - 4096, w, w + 4096, 3 * w};
        ByteBuf[] data = new ByteBuf[offsets.length];
        for (int i = 0; i < data.length; i++) {
            data[i] = filled(4096, i);
        }
        inOneTurn(offsets, data);

        // [0, 8K) merged; 20480 alone (gap); w-4K alone (the next write starts a new window); [w, w+8K) merged; 3w alone.
        assertEquals(List.of(0L, 20480L, w - 4096, w, 3 * w), device.offsets);
        assertArrayEquals(concat(data[0], data[1]), device.bytes.get(0));
        assertArrayEquals(concat(data[4], data[5]), device.bytes.get(3));
        device.pending.forEach(f -> f.complete(null));
        for (ByteBuf d : data) {
            d.release();
        }
    }

    @Test
    void aWriteOfAWholeWindowSendsTheHeldRunFirstThenItself() throws Exception {
        ByteBuf small = filled(4096, 1);
        ByteBuf big = filled(WINDOW, 2);
        inOneTurn(new long[] {4096, 8192}, new ByteBuf[] {small, big});

        assertEquals(List.of(4096L, 8192L), device.offsets);
        assertEquals(4096, device.bytes.get(0).length);
        assertEquals(WINDOW, device.bytes.get(1).length);
        assertTrue(device.buffers.get(1) == big, "a large write goes to the device as it is");
        device.pending.forEach(f -> f.complete(null));
        small.release();
        big.release();
    }

    @Test
    void aFailedMergedWriteFailsEveryCommandInIt() throws Exception {
        ByteBuf a = filled(4096, 1);
        ByteBuf b = filled(4096, 2);
        List<CompletableFuture<Void>> fs = inOneTurn(new long[] {0, 4096}, new ByteBuf[] {a, b});
        DeviceException boom = new DeviceException(DeviceException.Reason.IO_ERROR, "chain down");
        device.pending.get(0).completeExceptionally(boom);
        for (CompletableFuture<Void> f : fs) {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> f.get(5, TimeUnit.SECONDS));
            assertInstanceOf(DeviceException.class, e.getCause());
        }
        assertEquals(1, a.refCnt());
        assertEquals(1, b.refCnt());
        a.release();
        b.release();
    }

    @Test
    @SuppressWarnings("deprecation")
    void aLoopThatStopsTakingTasksGetsItsWritesSentAtOnce() throws Exception {
        ByteBuf a = filled(4096, 1);
        ByteBuf b = filled(4096, 2);
        loop.submit(() -> {
            loop.shutdown(); // from here the loop refuses new tasks: no end of turn will run
            coalescer.write(0, a);
            coalescer.write(4096, b);
        }).get(5, TimeUnit.SECONDS);
        assertEquals(List.of(0L, 4096L), device.offsets, "each sent when its end-of-turn task was refused");
        device.pending.forEach(f -> f.complete(null));
        a.release();
        b.release();
    }

    @Test
    void writesFromOutsideAnEventLoopGoStraightToTheDevice() {
        ByteBuf a = filled(4096, 1);
        ByteBuf b = filled(4096, 2);
        CompletableFuture<Void> fa = coalescer.write(0, a);
        CompletableFuture<Void> fb = coalescer.write(4096, b);
        assertEquals(List.of(0L, 4096L), device.offsets, "one device write each, at once");
        assertTrue(device.buffers.get(0) == a && device.buffers.get(1) == b);
        device.pending.forEach(f -> f.complete(null));
        assertTrue(fa.isDone() && fb.isDone());
        a.release();
        b.release();
    }

    @Test
    void aDeviceWithoutAWindowGetsEveryWriteAlone() throws Exception {
        Recorder plain = new Recorder(0);
        WriteCoalescer none = new WriteCoalescer(plain);
        ByteBuf a = filled(4096, 1);
        ByteBuf b = filled(4096, 2);
        loop.submit(() -> {
            none.write(0, a);
            none.write(4096, b);
        }).get(5, TimeUnit.SECONDS);
        assertEquals(List.of(0L, 4096L), plain.offsets);
        assertFalse(plain.pending.isEmpty());
        plain.pending.forEach(f -> f.complete(null));
        a.release();
        b.release();
    }

    /** Four turns of one 4 KiB write each, at 0, 4K, 8K, 12K: each leaves at its turn's end, four in flight. */
    private List<ByteBuf> fourInFlight() throws Exception {
        List<ByteBuf> data = new ArrayList<>();
        for (int i = 0; i < WriteCoalescer.HOLD_WHILE_IN_FLIGHT; i++) {
            ByteBuf b = filled(4096, i);
            data.add(b);
            inOneTurn(new long[] {i * 4096L}, new ByteBuf[] {b});
            assertEquals(i + 1, device.offsets.size(), "with " + i + " in flight a run leaves at its turn's end");
        }
        return data;
    }

    /** Waits until tasks the loop took before this call ran (a landing queued from another thread). */
    private void drainLoop() throws Exception {
        loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
        loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
    }

    @Test
    void aRunThatContinuesAStreamWaitsWhileFourWritesAreInFlightAndLeavesWhenOneLands() throws Exception {
        List<ByteBuf> data = fourInFlight();
        ByteBuf c = filled(4096, 10);
        ByteBuf d = filled(4096, 11);
        ByteBuf e = filled(8192, 12);
        List<CompletableFuture<Void>> held = new ArrayList<>(inOneTurn(new long[] {16384, 20480}, new ByteBuf[] {c, d}));
        assertEquals(4, device.offsets.size(), "a continuing run left while four were in flight");
        held.addAll(inOneTurn(new long[] {24576}, new ByteBuf[] {e}));
        assertEquals(4, device.offsets.size(), "the waiting run left before anything landed");

        device.pending.get(0).complete(null); // from this thread: the landing goes through the loop
        drainLoop();
        assertEquals(List.of(0L, 4096L, 8192L, 12288L, 16384L), device.offsets);
        assertArrayEquals(concat(c, d, e), device.bytes.get(4), "the waiting run left as one write, in order");
        assertTrue(held.stream().noneMatch(CompletableFuture::isDone));
        device.pending.forEach(f -> f.complete(null));
        for (CompletableFuture<Void> f : held) {
            f.get(5, TimeUnit.SECONDS);
        }
        data.forEach(ByteBuf::release);
        c.release();
        d.release();
        e.release();
    }

    @Test
    void aWriteThatDoesNotContinueTheStreamIsNotHeldWhateverIsInFlight() throws Exception {
        List<ByteBuf> data = fourInFlight();
        ByteBuf far = filled(4096, 20);
        inOneTurn(new long[] {1 << 20}, new ByteBuf[] {far});
        assertEquals(5, device.offsets.size(), "a random write waited for the stream's writes");
        assertEquals(1L << 20, device.offsets.get(4));
        device.pending.forEach(f -> f.complete(null));
        data.forEach(ByteBuf::release);
        far.release();
    }

    @Test
    void aRunThatFillsItsWindowLeavesAtTheEndOfItsTurn() throws Exception {
        List<ByteBuf> data = fourInFlight();
        ByteBuf rest = filled(WINDOW - 16384, 30);
        inOneTurn(new long[] {16384}, new ByteBuf[] {rest});
        assertEquals(5, device.offsets.size(), "a run that cannot grow waited");
        device.pending.forEach(f -> f.complete(null));
        data.forEach(ByteBuf::release);
        rest.release();
    }

    @Test
    void aWriteInFlightThatFailsAlsoLetsTheWaitingRunGo() throws Exception {
        List<ByteBuf> data = fourInFlight();
        ByteBuf c = filled(4096, 40);
        CompletableFuture<Void> waiting = inOneTurn(new long[] {16384}, new ByteBuf[] {c}).get(0);
        assertEquals(4, device.offsets.size());
        device.pending.get(2).completeExceptionally(new DeviceException(DeviceException.Reason.IO_ERROR, "chain down"));
        drainLoop();
        assertEquals(5, device.offsets.size(), "the waiting run stayed after a write in flight failed");
        device.pending.get(4).complete(null);
        waiting.get(5, TimeUnit.SECONDS);
        device.pending.forEach(f -> f.complete(null));
        data.forEach(ByteBuf::release);
        c.release();
    }

    @Test
    void withoutHoldingARunAlwaysLeavesAtTheEndOfItsTurn() throws Exception {
        Recorder plain = new Recorder(WINDOW);
        WriteCoalescer turnOnly = new WriteCoalescer(plain, 0);
        List<ByteBuf> data = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ByteBuf b = filled(4096, i);
            data.add(b);
            long at = i * 4096L;
            loop.submit(() -> turnOnly.write(at, b)).get(5, TimeUnit.SECONDS);
            loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
            assertEquals(i + 1, plain.offsets.size());
        }
        plain.pending.forEach(f -> f.complete(null));
        data.forEach(ByteBuf::release);
    }
}
