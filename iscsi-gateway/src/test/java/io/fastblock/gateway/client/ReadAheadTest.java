package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ReadAheadTest {
    private static final int WINDOW = 64 << 10;
    private static final int SIZE = 1 << 20;

    /** The volume's bytes: a fetch returns them as they were when it was sent. */
    private final byte[] disk = new byte[SIZE];
    private final List<long[]> fetches = new ArrayList<>();
    private final List<ByteBuf> handedOut = new ArrayList<>();
    /** Fetches held back until {@link #answerHeld}: a window's read that is still out. */
    private final List<Runnable> held = new ArrayList<>();
    private boolean hold;
    private long now;

    ReadAheadTest() {
        new Random(7).nextBytes(disk);
    }

    private CompletableFuture<ByteBuf> fetch(long offset, int length) {
        fetches.add(new long[] {offset, length});
        CompletableFuture<ByteBuf> f = new CompletableFuture<>();
        // The bytes as they are when the read is served, even if its answer is held back.
        byte[] seen = Arrays.copyOfRange(disk, (int) offset, (int) offset + length);
        Runnable answer = () -> {
            ByteBuf b = Unpooled.directBuffer(length).writeBytes(seen);
            handedOut.add(b);
            f.complete(b);
        };
        if (hold) {
            held.add(answer);
        } else {
            answer.run();
        }
        return f;
    }

    private void answerHeld() {
        List<Runnable> now = new ArrayList<>(held);
        held.clear();
        now.forEach(Runnable::run);
    }

    private final ReadAhead.Budget budget = new ReadAhead.Budget(16L * WINDOW);
    private final ReadAhead ahead = new ReadAhead(WINDOW, 4, TimeUnit.SECONDS.toNanos(1), budget, () -> SIZE,
            this::fetch, () -> now);

    @AfterEach
    void noLeaks() {
        ahead.clear();
        assertEquals(16L * WINDOW, budget.left(), "every window gave its bytes back");
        for (ByteBuf b : handedOut) {
            assertEquals(0, b.refCnt(), "a window's buffer was not released");
        }
    }

    /** A read as FastVolume does it: from the read-ahead, else a fetch of its own. */
    private byte[] read(long offset, int length, boolean sequential) throws Exception {
        CompletableFuture<ByteBuf> f = ahead.read(offset, length, sequential);
        if (f == null) {
            f = fetch(offset, length);
        }
        ByteBuf b = f.get(5, TimeUnit.SECONDS);
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    private byte[] expected(long offset, int length) {
        return Arrays.copyOfRange(disk, (int) offset, (int) offset + length);
    }

    @Test
    void aSequentialStreamOfSmallReadsIsAnsweredFromWindowsWithOneFetchPerWindow() throws Exception {
        for (int pos = 0; pos < SIZE; pos += 4096) {
            assertArrayEquals(expected(pos, 4096), read(pos, 4096, pos > 0), "at " + pos);
        }
        // The first two reads' own fetches, then one per window, the first window from 8 KiB.
        assertEquals(2 + 16, fetches.size());
        assertEquals(SIZE / 4096 - 2, ahead.hits());
        // The second read starts the first window before it is fetched itself.
        assertEquals(8192, fetches.get(1)[0]);
        assertEquals(4096, fetches.get(2)[0]);
        assertEquals(8192 + WINDOW, fetches.get(3)[0]);
        for (int i = 4; i < fetches.size(); i++) {
            assertEquals(fetches.get(i - 1)[0] + fetches.get(i - 1)[1], fetches.get(i)[0], "windows follow each other");
        }
        assertEquals(SIZE - 8192 - 15L * WINDOW, fetches.get(fetches.size() - 1)[1], "the last window ends with the volume");
        assertTrue(ahead.windows() <= 2, "windows read to their end are released: " + ahead.windows());
    }

    @Test
    void randomReadsAndLargeReadsStartNoWindow() throws Exception {
        Random r = new Random(3);
        for (int i = 0; i < 50; i++) {
            long pos = r.nextInt(SIZE / 4096) * 4096L;
            assertArrayEquals(expected(pos, 4096), read(pos, 4096, false));
        }
        // Sequential, but a quarter of a window or more: worth its own round trip.
        for (int pos = 0; pos < 8 * WINDOW / 4; pos += WINDOW / 4) {
            read(pos, WINDOW / 4, true);
        }
        assertEquals(0, ahead.windows());
        assertEquals(0, ahead.hits());
        assertEquals(50 + 8, fetches.size());
    }

    /** A stream's third read, of the window [8K, 72K) its second read started; fetches are held from the second on. */
    private CompletableFuture<ByteBuf> readOfTheFirstWindowWhileItIsOut() throws Exception {
        read(0, 4096, false); // a stream's first read is random to the classifier
        hold = true;
        assertNull(ahead.read(4096, 4096, true), "a miss, which starts the window [8K, 72K)");
        CompletableFuture<ByteBuf> waiting = ahead.read(8192, 4096, true);
        assertNotNull(waiting);
        return waiting;
    }

    @Test
    void aReadOfAWindowStillOutWaitsForItInsteadOfFetchingAgain() throws Exception {
        CompletableFuture<ByteBuf> waiting = readOfTheFirstWindowWhileItIsOut();
        assertFalse(waiting.isDone());
        int sent = fetches.size();
        hold = false;
        answerHeld();
        ByteBuf b = waiting.get(5, TimeUnit.SECONDS);
        assertArrayEquals(expected(8192, 4096), ByteBufUtil.getBytes(b));
        b.release();
        assertEquals(sent, fetches.size(), "no fetch of its own");
        assertEquals(1, ahead.hits());
    }

    @Test
    void aWriteDropsTheWindowsItOverlapsAndTheNextReadSeesTheNewBytes() throws Exception {
        read(0, 4096, false); // a stream's first read is random to the classifier
        read(4096, 4096, true); // window [8K, 72K) landed
        assertEquals(1, ahead.windows());
        assertArrayEquals(expected(8192, 4096), read(8192, 4096, true));
        // A write of [16K, 20K), dropped before it starts and when it ends (FastVolume drops at the end only).
        ahead.invalidate(16384, 4096);
        new Random(9).nextBytes(disk);
        ahead.invalidate(16384, 4096);
        assertEquals(0, ahead.windows());
        // The stream goes on: the read misses, and what follows comes from a window read after the write.
        assertArrayEquals(expected(12288, 4096), read(12288, 4096, true));
        assertArrayEquals(expected(16384, 4096), read(16384, 4096, true));
    }

    @Test
    void aWindowWhoseReadWasOutWhenAWriteEndedIsThrownAwayWhenItLands() throws Exception {
        CompletableFuture<ByteBuf> waiting = readOfTheFirstWindowWhileItIsOut();
        byte[] old = expected(8192, 4096);
        // A write lands and ends while the window's read, which saw the old bytes, is still out.
        new Random(11).nextBytes(disk);
        ahead.invalidate(8192, 4096);
        assertFalse(Arrays.equals(old, expected(8192, 4096)));
        hold = false;
        answerHeld();
        ByteBuf got = waiting.get(5, TimeUnit.SECONDS);
        assertArrayEquals(expected(8192, 4096), ByteBufUtil.getBytes(got), "the waiting read fetched again");
        got.release();
        assertEquals(0, ahead.windows());
        assertEquals(0, ahead.hits());
        assertNull(ahead.read(20480, 4096, false), "nothing of the dropped window answers");
    }

    @Test
    void windowsAnswerOnlyWithinTheirAge() throws Exception {
        read(0, 4096, false); // a stream's first read is random to the classifier
        read(4096, 4096, true);
        assertEquals(1, ahead.windows());
        now += TimeUnit.MILLISECONDS.toNanos(999);
        assertArrayEquals(expected(8192, 4096), read(8192, 4096, true));
        now += TimeUnit.MILLISECONDS.toNanos(2);
        int sent = fetches.size();
        assertArrayEquals(expected(12288, 4096), read(12288, 4096, false));
        assertEquals(sent + 1, fetches.size(), "an old window is not used");
        assertEquals(0, ahead.windows());
        read(16384, 4096, true); // a new window
        now += TimeUnit.SECONDS.toNanos(2);
        ahead.expire();
        assertEquals(0, ahead.windows(), "the periodic sweep releases it");
    }

    @Test
    void volumesShareTheGatewaysReadAheadMemoryAndAStreamBeyondItReadsDirectly() throws Exception {
        ReadAhead.Budget small = new ReadAhead.Budget(2L * WINDOW);
        ReadAhead first = new ReadAhead(WINDOW, 4, TimeUnit.SECONDS.toNanos(1), small, () -> SIZE, this::fetch, () -> now);
        ReadAhead second = new ReadAhead(WINDOW, 4, TimeUnit.SECONDS.toNanos(1), small, () -> SIZE, this::fetch, () -> now);
        assertNull(first.read(4096, 4096, true));
        assertNull(first.read(256 << 10, 4096, true));
        assertEquals(2, first.windows());
        assertEquals(0, small.left());
        assertNull(second.read(4096, 4096, true));
        assertEquals(0, second.windows(), "no memory left for a window");
        first.clear();
        assertEquals(2L * WINDOW, small.left());
        assertNull(second.read(4096, 4096, true));
        assertEquals(1, second.windows());
        second.clear();
        assertEquals(2L * WINDOW, small.left());
    }

    @Test
    void windowsAreBoundedAndAFailedWindowIsForgotten() throws Exception {
        // Eight interleaved streams, four windows at most.
        for (int step = 0; step < 4; step++) {
            for (int s = 0; s < 8; s++) {
                long pos = s * 128L * 1024 + step * 4096L;
                assertArrayEquals(expected(pos, 4096), read(pos, 4096, step > 0));
                assertTrue(ahead.windows() <= 4);
            }
        }
        ahead.clear();
        ReadAhead failing = new ReadAhead(WINDOW, 4, TimeUnit.SECONDS.toNanos(1), budget, () -> SIZE,
                (o, l) -> CompletableFuture.failedFuture(new IllegalStateException("chain down")), () -> now);
        assertNull(failing.read(4096, 4096, true));
        assertEquals(0, failing.windows(), "a window whose read failed holds nothing");
        assertThrows(IllegalArgumentException.class, () -> new ReadAhead(1024, 4, 1, budget, () -> SIZE, this::fetch));
    }
}
